//! The modes the traced code switches and later ops' metadata is inferred under: grad mode, the
//! default dtype, CPU autocast and inference mode, each also a call in the graph.

use super::*;

impl OutputGraph {
    pub fn grad_enabled(&self) -> bool {
        self.infer_ctx.grad_enabled
    }

    /// Switches grad mode from here on: a `torch._C._set_grad_enabled` call in the graph (kept by
    /// dead-code elimination) and the mode later ops' metadata is inferred under.
    pub fn set_grad_mode(&mut self, py: Python<'_>, enabled: bool) -> Result<(), TraceError> {
        if enabled == self.infer_ctx.grad_enabled {
            return Ok(());
        }
        let f = py
            .import("torch")?
            .getattr("_C")?
            .getattr("_set_grad_enabled")?;
        let node = self.graph.call(
            "set_grad_enabled",
            Target::Function("torch._C._set_grad_enabled".into()),
            vec![Arg::Bool(enabled)],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.infer_ctx.grad_enabled = enabled;
        Ok(())
    }

    /// Switches torch's default dtype from here on: a `torch.set_default_dtype` call in the graph
    /// (kept by dead-code elimination; eager leaves it set on an error too, so nothing restores
    /// it) and the default later ops' metadata is inferred under.
    pub fn set_default_dtype(
        &mut self,
        py: Python<'_>,
        dtype: &Bound<'_, PyAny>,
    ) -> Result<(), TraceError> {
        let d = dtype_of(py, dtype)?;
        if !(d.is_floating_point() || d.is_complex()) {
            return Err(TraceError::unsupported(
                "torch.set_default_dtype of a non-floating dtype (the call raises TypeError)",
            ));
        }
        let f = py.import("torch")?.getattr("set_default_dtype")?;
        let node = self.graph.call(
            "set_default_dtype",
            Target::Function(DEFAULT_DTYPE_TARGET.into()),
            vec![Arg::DType(d)],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.infer_ctx.default_dtype = d;
        self.traced_default_dtype = Some(dtype.clone().unbind());
        Ok(())
    }

    /// Whether the traced code set the default dtype before this point (ops after it read the
    /// value it set, not the entry state's).
    pub fn sets_default_dtype(&self) -> bool {
        self.traced_default_dtype.is_some()
    }

    /// Torch's default dtype switched to the traced one for a native inference; the one to
    /// restore after it (`None`: nothing switched).
    pub(super) fn enter_traced_default_dtype(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        let want = self.traced_default_dtype.as_ref()?;
        let torch = py.import("torch").ok()?;
        let now = torch.getattr("get_default_dtype").ok()?.call0().ok()?;
        if now.is(want.bind(py)) {
            return None;
        }
        torch
            .getattr("set_default_dtype")
            .ok()?
            .call1((want.bind(py),))
            .ok()?;
        Some(now.unbind())
    }

    pub(super) fn leave_traced_default_dtype(&self, py: Python<'_>, before: Option<Py<PyAny>>) {
        if let Some(d) = before {
            if let Ok(torch) = py.import("torch") {
                let _ = torch
                    .getattr("set_default_dtype")
                    .and_then(|f| f.call1((d.bind(py),)));
            }
        }
    }

    /// The autocast state of `device` (one of [`AMP_DEVICES`]) at this point of the traced code.
    pub fn autocast(&self, device: AmpDevice) -> (bool, Py<PyAny>) {
        let (on, dtype) = &self.autocast[device as usize];
        Python::attach(|py| (*on, dtype.clone_ref(py)))
    }

    /// Whether autocast is enabled on some device at this point of the traced code.
    pub fn any_autocast(&self) -> bool {
        self.autocast.iter().any(|(on, _)| *on)
    }

    /// Whether autocast was enabled on `device` around the frame.
    pub fn entry_autocast(&self, device: AmpDevice) -> bool {
        self.entry_autocast[device as usize].is_some()
    }

    /// The dtype of the autocast enabled on `device` around the frame (`None`: off there; `Err`:
    /// a dtype the graph cannot name).
    pub fn entry_autocast_dtype(&self, device: AmpDevice) -> Option<Result<DType, String>> {
        self.entry_autocast[device as usize].clone()
    }

    /// `((device, enabled, dtype), ...)` for `torchferro._amp.infer`.
    pub(super) fn autocast_states<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(
            py,
            AMP_DEVICES
                .iter()
                .zip(&self.autocast)
                .map(|(d, (on, dtype))| (*d, *on, dtype.clone_ref(py))),
        )
    }

    /// Switches autocast on `device` for the ops that follow: a graph node (kept by dead-code
    /// elimination, like grad-mode switches) and the state inference runs under. `nesting`: 1
    /// where a `with torch.autocast` block is entered, -1 where it is left: the node keeps
    /// torch's region depth, whose outermost exit drops eager's cache of parameter casts
    /// (`torchferro._amp.set_autocast`).
    pub fn set_autocast(
        &mut self,
        py: Python<'_>,
        device: AmpDevice,
        enabled: bool,
        dtype: &Bound<'_, PyAny>,
        nesting: i64,
    ) -> Result<(), TraceError> {
        let slot = device as usize;
        // Off before and after (`autocast(enabled=False)` where it is off, as transformers'
        // rotary embeddings force float32): no op computes differently, so no switch node (it
        // would send the whole graph to the eager runner). The dtype only matters once enabled,
        // and enabling always records its dtype.
        if !enabled && !self.autocast[slot].0 {
            self.autocast[slot] = (false, dtype.clone().unbind());
            return Ok(());
        }
        let f = py.import("torchferro._amp")?.getattr("set_autocast")?;
        let node = self.graph.call(
            "set_autocast",
            Target::Function(AUTOCAST_TARGET.into()),
            vec![
                Arg::Str(AMP_DEVICES[slot].into()),
                Arg::Bool(enabled),
                Arg::DType(dtype_of(py, dtype)?),
                Arg::Int(nesting),
            ],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.autocast[slot] = (enabled, dtype.clone().unbind());
        Ok(())
    }

    /// Inference mode at this point of the traced code where the trace changed it.
    pub fn inference_mode(&self) -> Option<bool> {
        self.inference
    }

    /// Enters `torch.inference_mode(mode)` for the ops that follow: a graph node (kept by
    /// dead-code elimination) that pushes the mode's guard; inside, grad mode is `!mode`.
    pub fn enter_inference_mode(&mut self, py: Python<'_>, mode: bool) -> Result<(), TraceError> {
        let f = py
            .import("torchferro._amp")?
            .getattr("enter_inference_mode")?;
        let node = self.graph.call(
            "enter_inference_mode",
            Target::Function(INFERENCE_ENTER_TARGET.into()),
            vec![Arg::Bool(mode)],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.inference_levels.push(InferenceLevel {
            mode,
            prev_grad: self.infer_ctx.grad_enabled,
            prev_inference: self.inference,
        });
        self.inference = Some(mode);
        self.infer_ctx.grad_enabled = !mode;
        Ok(())
    }

    /// Leaves the innermost inference-mode level: a graph node; grad and inference mode are
    /// then what they were when it was entered (`prev_grad`, `prev_inference`).
    pub fn exit_inference_mode(
        &mut self,
        py: Python<'_>,
        prev_grad: bool,
        prev_inference: Option<bool>,
    ) -> Result<(), TraceError> {
        let f = py
            .import("torchferro._amp")?
            .getattr("exit_inference_mode")?;
        let node = self.graph.call(
            "exit_inference_mode",
            Target::Function(INFERENCE_EXIT_TARGET.into()),
            vec![],
            vec![],
            NodeMeta::None,
        );
        self.callables.push((node, f.unbind()));
        self.inference_levels.pop();
        self.inference = prev_inference;
        self.infer_ctx.grad_enabled = prev_grad;
        Ok(())
    }

    /// Whether the graph enters an inference-mode region (such graphs run on the eager runner:
    /// the region decides which results are inference tensors).
    pub fn has_inference_mode(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. } if target.name() == INFERENCE_ENTER_TARGET)
        })
    }

    /// Whether the graph switches the default dtype (such graphs run on the eager runner: the
    /// inductor's kernels and the compiled backward know nothing of the switch).
    pub fn has_default_dtype_switch(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. } if target.name() == DEFAULT_DTYPE_TARGET)
        })
    }

    /// Whether the graph reads or assigns `tensor.data` (such graphs run on the eager runner:
    /// a `.data` tensor shares storage outside autograd, and an assignment swaps a tensor's
    /// storage and metadata, neither of which the functional graph or the compiled backward
    /// can say).
    pub fn has_data_attr(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. }
                if matches!(target.name(), DATA_READ_TARGET | DATA_WRITE_TARGET))
        })
    }

    /// Whether the graph registers a gradient hook on a tensor it computes: the hook must
    /// see that tensor as torch's autograd makes it, so such graphs run on the eager runner.
    pub fn has_tensor_hook(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. }
                if target.name() == TENSOR_HOOK_TARGET)
        })
    }

    /// Whether the graph switches autocast anywhere (such graphs run on the eager runner).
    pub fn has_autocast(&self) -> bool {
        self.graph.nodes().any(|(_, n)| {
            matches!(&n.kind, fx::NodeKind::Call { target, .. } if target.name() == AUTOCAST_TARGET)
        })
    }
}
