//! The Rust inductor as a backend: compiled kernels run on torch tensors, with torch (through
//! its Python API) as the `Host` that allocates memory and runs GEMMs, convolutions and the ops
//! the inductor falls back on.

use std::collections::HashMap;

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use fx::{DType, Graph, NodeKind, NodeMeta, Target};
use inductor::{ExternCall, Host, HostArg, HostValue, SdpaMask, TensorDesc};

use crate::error::TraceError;
use crate::output::{arg_to_py, dtype_of};

/// Torch objects a host needs on every call, looked up once per compiled graph.
struct TorchHandles {
    torch: Py<PyModule>,
    empty_strided: Py<PyAny>,
    /// `("dtype",)`, the keyword names of an `empty_strided` vectorcall.
    dtype_kwnames: Py<PyTuple>,
    dtypes: HashMap<DType, Py<PyAny>>,
    /// `torch.nn.functional.scaled_dot_product_attention`.
    sdpa: Py<PyAny>,
    /// `torch.ops.aten._unsafe_view`: a reshape that is no view (`Host::reshape_own`).
    unsafe_view: Py<PyAny>,
    /// `torch.mm`, `torch.bmm` and `torch.matmul`, called with `out=` (`("out",)`: the keyword
    /// names of that vectorcall).
    mm: Py<PyAny>,
    bmm: Py<PyAny>,
    matmul: Py<PyAny>,
    out_kwnames: Py<PyTuple>,
    /// `torch._C._dynamo.guards._reinterpret_tensor(base, sizes, strides, offset_increment)`:
    /// a tensor over `base`'s storage made in C++ without the dispatcher or autograd's view
    /// bookkeeping (what Inductor's wrappers make their operands with), for [`Host::alias`];
    /// `None` where this torch lacks it (then `as_strided`).
    reinterpret: Option<Py<PyAny>>,
    /// For a graph on a CUDA device: where buffers go and which stream kernels run on.
    cuda: Option<super::cuda::CudaHandles>,
}

impl TorchHandles {
    fn new(py: Python<'_>) -> PyResult<TorchHandles> {
        let torch = py.import("torch")?;
        Ok(TorchHandles {
            empty_strided: torch.getattr("empty_strided")?.unbind(),
            dtype_kwnames: PyTuple::new(py, ["dtype"])?.unbind(),
            dtypes: HashMap::new(),
            sdpa: torch
                .getattr("nn")?
                .getattr("functional")?
                .getattr("scaled_dot_product_attention")?
                .unbind(),
            unsafe_view: torch
                .getattr("ops")?
                .getattr("aten")?
                .getattr("_unsafe_view")?
                .unbind(),
            mm: torch.getattr("mm")?.unbind(),
            bmm: torch.getattr("bmm")?.unbind(),
            matmul: torch.getattr("matmul")?.unbind(),
            out_kwnames: PyTuple::new(py, ["out"])?.unbind(),
            reinterpret: py
                .import("torch._C._dynamo.guards")
                .and_then(|m| m.getattr("_reinterpret_tensor"))
                .ok()
                .map(Bound::unbind),
            torch: torch.unbind(),
            cuda: None,
        })
    }
}

/// Torch as the inductor's host. Tensors are Python `torch.Tensor` objects.
pub struct TorchHost<'a, 'py> {
    py: Python<'py>,
    torch: Bound<'py, PyModule>,
    handles: &'a TorchHandles,
    /// Callables of the graph's function targets, for fallbacks.
    callables: &'a HashMap<String, Py<PyAny>>,
    /// The CUDA device and its current stream, read once per call (the first kernel asks).
    stream: Option<(u32, u64)>,
    /// Boolean attention masks of this call and their additive form (see
    /// [`TorchHost::additive_mask`]); the mask is held, so its address is not reused meanwhile.
    masks: Vec<(Py<PyAny>, Py<PyAny>)>,
}

impl<'a, 'py> TorchHost<'a, 'py> {
    fn new(
        py: Python<'py>,
        handles: &'a TorchHandles,
        callables: &'a HashMap<String, Py<PyAny>>,
    ) -> Self {
        TorchHost {
            py,
            torch: handles.torch.bind(py).clone(),
            handles,
            callables,
            stream: None,
            masks: Vec::new(),
        }
    }

    fn dtype(&self, d: DType) -> PyResult<Bound<'py, PyAny>> {
        match self.handles.dtypes.get(&d) {
            Some(t) => Ok(t.bind(self.py).clone()),
            None => self.torch.getattr(d.torch_name()),
        }
    }

    fn host_arg(&self, a: &HostArg<Py<PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        Ok(match a {
            HostArg::Tensor(t) => t.bind(py).clone(),
            HostArg::Const(c) => arg_to_py(py, c, &mut |_, _| {
                Err(TraceError::internal("a node in a constant"))
            })
            .map_err(to_pyerr)?,
            HostArg::Tuple(items) => PyTuple::new(
                py,
                items
                    .iter()
                    .map(|i| self.host_arg(i))
                    .collect::<PyResult<Vec<_>>>()?,
            )?
            .into_any(),
            HostArg::List(items) => PyList::new(
                py,
                items
                    .iter()
                    .map(|i| self.host_arg(i))
                    .collect::<PyResult<Vec<_>>>()?,
            )?
            .into_any(),
        })
    }
}

impl<'py> TorchHost<'_, 'py> {
    /// `m` as the attention call reads it: a boolean mask becomes the additive mask torch's
    /// attention makes of it itself (0 where True, -inf where False, in q's dtype; the results
    /// are bitwise the same), once per call of the graph, shared by every attention call of
    /// the call that reads the same mask (each layer of a decoder), where torch would convert
    /// it again in each. Other masks pass as they are.
    fn additive_mask(&mut self, m: &Py<PyAny>, q: &Py<PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let mb = m.bind(py);
        let bool_dtype = self.dtype(DType::Bool)?;
        if !mb.getattr(intern!(py, "dtype"))?.is(&bool_dtype) {
            return Ok(mb.clone());
        }
        if let Some((_, f)) = self.masks.iter().find(|(k, _)| k.is(m)) {
            return Ok(f.bind(py).clone());
        }
        // Two Python floats take `where`'s scalar path (a third of the time of torch's own
        // conversion, whose -inf is a 0-d tensor); the result has the default float dtype,
        // converted to q's where that differs (0 and -inf are exact in every float dtype).
        let mut f =
            self.torch
                .getattr(intern!(py, "where"))?
                .call1((mb, 0.0, f64::NEG_INFINITY))?;
        let q_dtype = q.bind(py).getattr(intern!(py, "dtype"))?;
        if !f.getattr(intern!(py, "dtype"))?.is(&q_dtype) {
            f = f.call_method1(intern!(py, "to"), (q_dtype,))?;
        }
        self.masks.push((m.clone_ref(py), f.clone().unbind()));
        Ok(f)
    }

    /// The fused attention kernel; see [`ExternCall::Sdpa`] for the masks.
    fn sdpa(&mut self, call: &ExternCall, inputs: &[Py<PyAny>]) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let ExternCall::Sdpa {
            scale,
            is_causal,
            mask,
            enable_gqa,
        } = call
        else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "torchferro: not an attention call",
            ));
        };
        let kw = PyDict::new(py);
        let fill_mask = match (mask, inputs.get(3)) {
            (SdpaMask::None, _) => None,
            (SdpaMask::AsIs, Some(m)) => {
                let m = self.additive_mask(m, &inputs[0])?;
                kw.set_item(intern!(py, "attn_mask"), m)?;
                None
            }
            (SdpaMask::FillNegInf, Some(m)) => {
                let keep = m.bind(py).call_method0(intern!(py, "logical_not"))?;
                kw.set_item(intern!(py, "attn_mask"), &keep)?;
                Some(keep)
            }
            _ => {
                return Err(pyo3::exceptions::PyRuntimeError::new_err(
                    "torchferro: attention call without its mask",
                ))
            }
        };
        if let Some(s) = scale {
            kw.set_item(intern!(py, "scale"), *s)?;
        }
        if *is_causal {
            kw.set_item(intern!(py, "is_causal"), true)?;
        }
        if *enable_gqa {
            kw.set_item(intern!(py, "enable_gqa"), true)?;
        }
        let out = self.handles.sdpa.bind(py).call(
            (inputs[0].bind(py), inputs[1].bind(py), inputs[2].bind(py)),
            Some(&kw),
        )?;
        if let Some(keep) = fill_mask {
            // Eager's softmax of a row that is all -inf is NaN; the fused kernel gives zeros.
            let live = keep.call_method1(intern!(py, "any"), (-1,))?;
            let dead = live.call_method0(intern!(py, "logical_not"))?;
            if dead.call_method0(intern!(py, "any"))?.is_truthy()? {
                let dead = dead.call_method1(intern!(py, "unsqueeze"), (-1,))?;
                return out.call_method1(intern!(py, "masked_fill"), (dead, f64::NAN));
            }
        }
        Ok(out)
    }

    /// `torch.convolution(input, weight, bias, ...)`: a new tensor (there is no `out=` form).
    fn convolution(&self, call: &ExternCall, inputs: &[Py<PyAny>]) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        let ExternCall::Convolution {
            stride,
            padding,
            dilation,
            transposed,
            output_padding,
            groups,
            ..
        } = call
        else {
            return Err(pyo3::exceptions::PyRuntimeError::new_err(
                "torchferro: not a convolution",
            ));
        };
        let bias = inputs
            .get(2)
            .map(|b| b.bind(py).clone())
            .unwrap_or_else(|| py.None().into_bound(py));
        // The weight goes as it is, even to a channels-last convolution (oneDNN then reorders
        // it on every call). A copy kept between calls would go stale: writes through
        // `weight.data`, `untyped_storage()` or `set_` on another alias of its storage bump no
        // version counter of the parameter, so no check short of comparing contents could
        // tell it is still the weight's value.
        let weight = inputs[1].bind(py);
        self.torch.getattr(intern!(py, "convolution"))?.call1((
            inputs[0].bind(py),
            weight,
            bias,
            stride.clone(),
            padding.clone(),
            dilation.clone(),
            *transposed,
            output_padding.clone(),
            *groups,
        ))
    }
}

fn to_pyerr(e: TraceError) -> PyErr {
    match e {
        TraceError::Python(e) => e,
        TraceError::UserError { error, .. } => error,
        other => pyo3::exceptions::PyRuntimeError::new_err(other.to_string()),
    }
}

impl<'py> Host for TorchHost<'_, 'py> {
    type Tensor = Py<PyAny>;
    type Error = PyErr;

    fn empty_strided(
        &mut self,
        dtype: DType,
        sizes: &[i64],
        strides: &[i64],
    ) -> PyResult<Py<PyAny>> {
        let py = self.py;
        let sizes = PyTuple::new(py, sizes)?;
        let strides = PyTuple::new(py, strides)?;
        let dtype = self.dtype(dtype)?;
        let r = match &self.handles.cuda {
            None => {
                let argv = [sizes.as_ptr(), strides.as_ptr(), dtype.as_ptr()];
                // SAFETY: the three arguments are kept alive by the bindings above for the
                // whole call; vectorcall borrows them and returns a new reference or NULL with
                // an error set.
                unsafe {
                    pyo3::ffi::PyObject_Vectorcall(
                        self.handles.empty_strided.as_ptr(),
                        argv.as_ptr(),
                        2,
                        self.handles.dtype_kwnames.as_ptr(),
                    )
                }
            }
            Some(c) => {
                let argv = [
                    sizes.as_ptr(),
                    strides.as_ptr(),
                    dtype.as_ptr(),
                    c.device.as_ptr(),
                ];
                // SAFETY: as above; the device object lives in the handles.
                unsafe {
                    pyo3::ffi::PyObject_Vectorcall(
                        self.handles.empty_strided.as_ptr(),
                        argv.as_ptr(),
                        2,
                        c.kwnames.as_ptr(),
                    )
                }
            }
        };
        if r.is_null() {
            return Err(PyErr::fetch(py));
        }
        // SAFETY: a new reference from vectorcall.
        Ok(unsafe { Bound::from_owned_ptr(py, r) }.unbind())
    }

    fn run_unlocked(&mut self, work: &mut (dyn FnMut() + Send)) {
        self.py.detach(work)
    }

    fn cuda_stream(&mut self) -> PyResult<(u32, u64)> {
        if let Some(s) = self.stream {
            return Ok(s);
        }
        let c = self.handles.cuda.as_ref().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err("torchferro: a CUDA kernel in a CPU graph")
        })?;
        let s = (c.index, c.current_stream(self.py)?);
        self.stream = Some(s);
        Ok(s)
    }

    fn as_strided(
        &mut self,
        base: &Py<PyAny>,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> PyResult<Py<PyAny>> {
        let b = base.bind(self.py);
        let base_offset: i64 = b
            .call_method0(intern!(self.py, "storage_offset"))?
            .extract()?;
        Ok(b.call_method1(
            intern!(self.py, "as_strided"),
            (sizes.to_vec(), strides.to_vec(), base_offset + offset),
        )?
        .unbind())
    }

    fn alias(
        &mut self,
        base: &Py<PyAny>,
        sizes: &[i64],
        strides: &[i64],
        offset: i64,
    ) -> PyResult<Py<PyAny>> {
        let Some(f) = &self.handles.reinterpret else {
            return self.as_strided(base, sizes, strides, offset);
        };
        let py = self.py;
        Ok(f.bind(py)
            .call1((
                base.bind(py),
                PyTuple::new(py, sizes)?,
                PyTuple::new(py, strides)?,
                offset,
            ))?
            .unbind())
    }

    fn identity(&self, t: &Py<PyAny>) -> Option<usize> {
        Some(t.as_ptr() as usize)
    }

    fn reshape_own(
        &mut self,
        base: &Py<PyAny>,
        sizes: &[i64],
        _strides: &[i64],
    ) -> PyResult<Py<PyAny>> {
        Ok(self
            .handles
            .unsafe_view
            .bind(self.py)
            .call1((base.bind(self.py), sizes.to_vec()))?
            .unbind())
    }

    fn describe(&self, t: &Py<PyAny>) -> TensorDesc {
        let t = t.bind(self.py);
        let py = self.py;
        TensorDesc {
            dtype: t
                .getattr(intern!(py, "dtype"))
                .ok()
                .and_then(|d| dtype_of(py, &d).ok())
                .unwrap_or(DType::Float32),
            sizes: t
                .getattr(intern!(py, "shape"))
                .and_then(|s| s.extract())
                .unwrap_or_default(),
            strides: t
                .call_method0(intern!(py, "stride"))
                .and_then(|s| s.extract())
                .unwrap_or_default(),
        }
    }

    fn data_ptr(&mut self, t: &Py<PyAny>) -> *mut u8 {
        let p: usize = t
            .bind(self.py)
            .call_method0(intern!(self.py, "data_ptr"))
            .and_then(|p| p.extract())
            .unwrap_or(0);
        p as *mut u8
    }

    fn copy_into(&mut self, dst: &Py<PyAny>, src: &Py<PyAny>) -> PyResult<()> {
        dst.bind(self.py)
            .call_method1(intern!(self.py, "copy_"), (src.bind(self.py),))?;
        Ok(())
    }

    fn run_extern(
        &mut self,
        call: &ExternCall,
        inputs: &[Py<PyAny>],
        out: &Py<PyAny>,
    ) -> PyResult<()> {
        let py = self.py;
        match call {
            ExternCall::Mm | ExternCall::Bmm | ExternCall::Matmul => {
                let f = match call {
                    ExternCall::Mm => &self.handles.mm,
                    ExternCall::Bmm => &self.handles.bmm,
                    _ => &self.handles.matmul,
                };
                if inputs.len() != 2 {
                    return Err(pyo3::exceptions::PyRuntimeError::new_err(
                        "torchferro: a matmul without two operands",
                    ));
                }
                let argv = [inputs[0].as_ptr(), inputs[1].as_ptr(), out.as_ptr()];
                // SAFETY: the three objects are owned by `inputs` and `out`, alive for the
                // whole call; vectorcall borrows them (two positional, then `out=` named by
                // `out_kwnames`) and returns a new reference or NULL with an error set.
                let r = unsafe {
                    pyo3::ffi::PyObject_Vectorcall(
                        f.as_ptr(),
                        argv.as_ptr(),
                        2,
                        self.handles.out_kwnames.as_ptr(),
                    )
                };
                if r.is_null() {
                    return Err(PyErr::fetch(py));
                }
                // SAFETY: a new reference from vectorcall, dropped here.
                drop(unsafe { Bound::from_owned_ptr(py, r) });
            }
            ExternCall::Convolution { .. } => {
                let r = self.convolution(call, inputs)?;
                out.bind(py).call_method1("copy_", (r,))?;
            }
            ExternCall::Sdpa { .. } => {
                let r = self.sdpa(call, inputs)?;
                out.bind(py).call_method1("copy_", (r,))?;
            }
        }
        Ok(())
    }

    fn run_extern_new(
        &mut self,
        call: &ExternCall,
        inputs: &[Py<PyAny>],
    ) -> PyResult<Option<Py<PyAny>>> {
        match call {
            ExternCall::Convolution { .. } => Ok(Some(self.convolution(call, inputs)?.unbind())),
            ExternCall::Sdpa { .. } => Ok(Some(self.sdpa(call, inputs)?.unbind())),
            _ => Ok(None),
        }
    }

    fn run_fallback(
        &mut self,
        target: &Target,
        args: &[HostArg<Py<PyAny>>],
        kwargs: &[(String, HostArg<Py<PyAny>>)],
    ) -> PyResult<HostValue<Py<PyAny>>> {
        let py = self.py;
        let pargs: Vec<Bound<'py, PyAny>> = args
            .iter()
            .map(|a| self.host_arg(a))
            .collect::<PyResult<_>>()?;
        let kw = PyDict::new(py);
        for (k, a) in kwargs {
            kw.set_item(k, self.host_arg(a)?)?;
        }
        let r = match target {
            Target::Function(path) => {
                let f = self.callables.get(path).ok_or_else(|| {
                    pyo3::exceptions::PyRuntimeError::new_err(format!(
                        "torchferro: no callable for {path}"
                    ))
                })?;
                f.bind(py).call(PyTuple::new(py, pargs)?, Some(&kw))?
            }
            Target::Method(name) => {
                let recv = pargs.first().cloned().ok_or_else(|| {
                    pyo3::exceptions::PyRuntimeError::new_err("a method call without a receiver")
                })?;
                recv.call_method(name.as_str(), PyTuple::new(py, &pargs[1..])?, Some(&kw))?
            }
        };
        if let Ok(t) = r.cast::<PyTuple>() {
            return Ok(HostValue::Seq(t.iter().map(|x| x.unbind()).collect()));
        }
        if let Ok(l) = r.cast::<PyList>() {
            return Ok(HostValue::Seq(l.iter().map(|x| x.unbind()).collect()));
        }
        Ok(HostValue::Tensor(r.unbind()))
    }
}

/// Whether `meta` describes a complex tensor (or a tuple holding one).
fn has_complex(meta: &NodeMeta) -> bool {
    match meta {
        NodeMeta::Tensor(t) => t.dtype.is_complex(),
        NodeMeta::Tuple(xs) => xs.iter().any(has_complex),
        _ => false,
    }
}

/// Whether node `u` is `getitem(t, 0)` of the tuple node `t`.
fn takes_first(graph: &Graph, u: fx::NodeId, t: fx::NodeId) -> bool {
    matches!(
        &graph.node(u).kind,
        NodeKind::Call { target: Target::Function(f), args, .. }
            if (f == "operator.getitem" || f == "_operator.getitem")
                && matches!(args.as_slice(), [fx::Arg::Node(x), fx::Arg::Int(0)] if *x == t)
    )
}

/// A graph compiled by the Rust inductor, with what fallbacks need to call torch.
pub struct InductorProgram {
    compiled: inductor::CompiledGraph,
    /// The graph's intermediates between calls; a call takes it out and puts it back, so a
    /// second call running at the same time (another thread while torch released the GIL, or
    /// recursion) allocates its own.
    workspace: std::sync::Mutex<Option<inductor::Workspace<Py<PyAny>>>>,
    callables: HashMap<String, Py<PyAny>>,
    /// (Shared by the programs of every assignment of a symbolic graph's sizes.)
    handles: std::sync::Arc<TorchHandles>,
    /// The traced graph on the eager runner, run instead when a kernel read a position out of
    /// range: the kernels only know that some index was bad, while eager's error names the op's
    /// own check ("index 4 is out of bounds for dimension 0 with size 4", "index out of range
    /// in self", a `RuntimeError` for `gather`), and the user catching it sees eager's type and
    /// message. Set only where the partial run left nothing visible (`set_eager_errors`).
    /// An extern call or fallback op that raises re-runs there too: the eager runner knows
    /// which op raised, and its traceback gets that op's user frames.
    eager_errors: Option<std::sync::Arc<super::eager::EagerProgram>>,
    /// The user frames of each traced node, for the traceback of an error: a fallback op's
    /// (`RunError::Op`), or the compiled frame at its first line where no op can be blamed
    /// (no `eager_errors`: a fused kernel, or a graph that cannot run twice).
    sites: crate::traceback::Sites,
    /// A graph with symbolic sizes: `compiled` holds its kernels at the symbols' hints, and the
    /// calls at other sizes run kernels compiled for theirs (see [`Dynamic`]).
    dynamic: Option<Box<dynamic::Dynamic>>,
    /// Compiled from a graph whose grad-mode switches were dropped (an update made under
    /// `no_grad` of inputs that require grad: `aot::without_no_grad_switches`): the caller runs
    /// it in grad mode, so its torch calls (fallback ops, extern calls, copies) run under
    /// `no_grad`, as the traced ops did; else a fallback `layer_norm` of a parameter returned a
    /// tensor that requires grad where eager's does not.
    without_grad: bool,
}

pub(crate) mod dynamic;
pub use dynamic::specializations as dynamic_specializations;

impl InductorProgram {
    /// Hands over the traced graph on the eager runner for errors (see `eager_errors`). Only for
    /// a graph that writes no input and draws no random numbers: the kernels stop at the first
    /// kernel that read a bad index, before any write back into an input, so running the graph
    /// again from the start does what eager's one run did.
    pub fn set_eager_errors(&mut self, p: super::eager::EagerProgram) {
        self.eager_errors = Some(std::sync::Arc::new(p));
    }

    /// Marks the program as compiled without its grad-mode switches (see `without_grad`).
    pub fn set_without_grad(&mut self) {
        self.without_grad = true;
    }

    /// Sets where the graph's nodes came from in user code (see `sites`).
    pub fn set_sites(&mut self, sites: crate::traceback::Sites) {
        self.sites = sites;
    }

    /// Compiles `graph` if the inductor can run it: tensors on one device (the CPU, or one CUDA
    /// device when CUDA graphs are enabled and CUDA runs here: see [`super::cuda`]), and no
    /// input that needs autograd (compiled kernels record no backward). `Ok(None)` means "use
    /// the eager runner".
    pub fn try_new(
        graph: &Graph,
        callables: &[(fx::NodeId, Py<PyAny>)],
        grad_enabled: bool,
    ) -> Result<Option<InductorProgram>, String> {
        Self::try_new_with(graph, callables, grad_enabled, Vec::new())
    }

    /// [`Self::try_new`], with the output positions whose layout the inductor may choose
    /// (`inductor::Options::free_outputs`: a training forward's saved values).
    pub fn try_new_with(
        graph: &Graph,
        callables: &[(fx::NodeId, Py<PyAny>)],
        grad_enabled: bool,
        free_outputs: Vec<usize>,
    ) -> Result<Option<InductorProgram>, String> {
        let (placement, mut options) = Self::admit(graph, grad_enabled)?;
        options.free_outputs = free_outputs;
        // Lowering, code generation and above all the C compiler run without the GIL: other
        // threads progress meanwhile (the inductor touches no Python object; its log records
        // take the GIL themselves when they reach Python).
        let compiled = Python::attach(|py| py.detach(|| inductor::compile(graph, &options)))
            .map_err(|e| e.to_string())?;
        Self::wrap(graph, callables, placement, compiled).map(Some)
    }

    /// Whether the inductor can run `graph` (see [`Self::try_new`]), and its target.
    fn admit(
        graph: &Graph,
        grad_enabled: bool,
    ) -> Result<(super::cuda::Placement, inductor::Options), String> {
        for (id, n) in graph.nodes() {
            if let NodeKind::Call { target, .. } = &n.kind {
                if target.name() == "torch._C._set_grad_enabled" {
                    return Err("a grad-mode region (runs on the eager backend)".into());
                }
                // Its attention weights are an undefined tensor (None) when not asked for, which
                // the inductor's buffer metadata cannot describe: the op runs through torch
                // only where nothing reads them (`getitem(_, 0)` alone: the weights are then a
                // discarded result, dropped unchecked), as in torchvision's ViT.
                if target.name() == "torch._native_multi_head_attention"
                    && !graph
                        .users(id)
                        .into_iter()
                        .all(|u| takes_first(graph, u, id))
                {
                    return Err(
                        "torch._native_multi_head_attention (runs on the eager backend)".into(),
                    );
                }
            }
            if let NodeMeta::Tensor(t) = &n.meta {
                if grad_enabled && t.requires_grad && matches!(n.kind, NodeKind::Placeholder { .. })
                {
                    return Err("an input that requires grad (no backward yet)".into());
                }
            }
            // The kernels have no complex type: a copy or write of a complex value that some
            // lowering still emitted as a kernel panicked in code generation ("no C type for
            // Complex64") and the frame ran eagerly as an internal error.
            if has_complex(&n.meta) {
                return Err("complex tensors (runs on the eager backend)".into());
            }
        }
        let placement = super::cuda::placement(graph)?;
        let options = match placement {
            super::cuda::Placement::Cpu => inductor::Options::default(),
            super::cuda::Placement::Cuda(_) if !super::cuda::enabled() => {
                return Err(
                    "CUDA tensors (the inductor's CUDA path is off: TORCHFERRO_CUDA=0)".into(),
                )
            }
            super::cuda::Placement::Cuda(i) => Python::attach(|py| super::cuda::options(py, i))?,
        };
        Ok((placement, options))
    }

    /// The program running `compiled`, the inductor's build of `graph`.
    fn wrap(
        graph: &Graph,
        callables: &[(fx::NodeId, Py<PyAny>)],
        placement: super::cuda::Placement,
        compiled: inductor::CompiledGraph,
    ) -> Result<InductorProgram, String> {
        let handles = std::sync::Arc::new(Self::handles_for(placement)?);
        Ok(Self::wrap_with(
            Self::callables_by_name(graph, callables),
            handles,
            compiled,
        ))
    }

    /// The callables of `graph`'s function targets by their path (dead-code elimination may
    /// have removed some of the traced calls).
    fn callables_by_name(
        graph: &Graph,
        callables: &[(fx::NodeId, Py<PyAny>)],
    ) -> HashMap<String, Py<PyAny>> {
        let mut map = HashMap::new();
        for (id, c) in callables.iter().filter(|(id, _)| graph.contains(*id)) {
            if let NodeKind::Call {
                target: Target::Function(path),
                ..
            } = &graph.node(*id).kind
            {
                map.insert(path.clone(), c.clone());
            }
        }
        map
    }

    /// The torch functions and dtype objects a program on `placement` calls.
    fn handles_for(placement: super::cuda::Placement) -> Result<TorchHandles, String> {
        Python::attach(|py| -> PyResult<TorchHandles> {
            let mut h = TorchHandles::new(py)?;
            if let super::cuda::Placement::Cuda(i) = placement {
                h.cuda = Some(super::cuda::CudaHandles::new(py, i)?);
            }
            let torch = py.import("torch")?;
            for d in [
                DType::Float32,
                DType::Float64,
                DType::Float16,
                DType::BFloat16,
                DType::Int32,
                DType::Int64,
                DType::Bool,
                DType::Int8,
                DType::UInt8,
                DType::Int16,
            ] {
                h.dtypes.insert(d, torch.getattr(d.torch_name())?.unbind());
            }
            Ok(h)
        })
        .map_err(|e| e.to_string())
    }

    fn wrap_with(
        callables: HashMap<String, Py<PyAny>>,
        handles: std::sync::Arc<TorchHandles>,
        compiled: inductor::CompiledGraph,
    ) -> InductorProgram {
        crate::alloc_threshold::raise_mmap_threshold();
        InductorProgram {
            workspace: std::sync::Mutex::new(compiled.new_workspace()),
            compiled,
            callables,
            handles,
            eager_errors: None,
            sites: Default::default(),
            dynamic: None,
            without_grad: false,
        }
    }

    pub fn source(&self) -> &str {
        self.compiled.source()
    }

    /// Whether the graph has size symbols. Precompile keeps such a graph's kernels only when
    /// they were lowered symbolically (`symbolic_export`); else it writes an eager-runner
    /// replay (a loaded artifact may not compile, and per-size kernels serve some sizes only).
    pub fn is_dynamic(&self) -> bool {
        self.dynamic.is_some()
    }

    /// The kernels' shared object (precompile copies it into its cache).
    pub fn library_path(&self) -> Option<&std::path::Path> {
        self.compiled.library_path()
    }

    /// Frees what the graph keeps from one call to the next: its workspace of intermediates (an
    /// empty one takes its place and allocates again on the next call). A call in flight keeps the workspace it took out and puts it back when it ends.
    pub fn release_kept(&self) {
        let fresh = self.compiled.new_workspace();
        let old = self
            .workspace
            .lock()
            .ok()
            .map(|mut w| std::mem::replace(&mut *w, fresh));
        // Dropped outside the lock: freeing it releases Python objects.
        drop(old);
        self.size_variants().iter().for_each(|p| p.release_kept());
    }

    pub fn fallback_reasons(&self) -> Vec<String> {
        self.compiled.fallback_reasons()
    }

    /// The inductor's compile phases, for the `perf` log.
    pub fn phase_times(&self) -> &inductor::PhaseTimes {
        self.compiled.phase_times()
    }

    /// (generated kernels, extern calls, fallback ops).
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.compiled.num_kernels(),
            self.compiled.num_extern_calls(),
            self.compiled.num_fallbacks(),
        )
    }

    /// Runs the kernels on `inputs`. `guarded`: the entry's tensor guards have just passed for
    /// exactly these input objects, so their dtypes, sizes and strides are the compiled ones and
    /// the per-input layout check (three Python calls each) is skipped.
    pub fn run<'py>(
        &self,
        py: Python<'py>,
        inputs: Vec<Bound<'py, PyAny>>,
        guarded: bool,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let _no_grad = match self.without_grad {
            true => Some(NoGrad::enter(py)?),
            false => None,
        };
        let mut inputs = Some(inputs);
        if let Some(r) = self.run_dynamic(py, &mut inputs, guarded) {
            return r;
        }
        let inputs = inputs.unwrap_or_default();
        let mut host = TorchHost::new(py, &self.handles, &self.callables);
        let inputs: Vec<Py<PyAny>> = inputs.into_iter().map(|b| b.unbind()).collect();
        // Buffers kept between calls must not be inference tensors: a later call outside
        // `torch.inference_mode()` could not write them (an extern call's `out=` raises). So a
        // workspace is only filled outside inference mode; under it, a call allocates its own and
        // leaves the workspace alone. Once complete, every kept buffer is a normal tensor, which
        // inference mode may write, and the per-call question is skipped.
        let mut ws = self.workspace.lock().ok().and_then(|mut w| {
            if w.as_ref().is_some_and(|ws| !ws.is_complete()) && inference_mode_enabled(py) {
                None
            } else {
                w.take()
            }
        });
        let outs = match (guarded, ws.as_mut()) {
            // SAFETY: every graph input is a tensor read from a source that carries a
            // TENSOR_MATCH guard (type, dtype, device, sizes and every stride), and the caller
            // passes `guarded` only right after those guards passed on these very objects. The
            // workspace is this graph's own (made in `try_new`).
            (true, Some(ws)) => unsafe { self.compiled.run_trusted_in(&mut host, &inputs, ws) },
            // SAFETY: as above.
            (true, None) => unsafe { self.compiled.run_trusted(&mut host, &inputs) },
            (false, Some(ws)) => self.compiled.run_in(&mut host, &inputs, ws),
            (false, None) => self.compiled.run(&mut host, &inputs),
        };
        // Back even after an error: each kept buffer is still valid storage of its layout.
        if let Some(mut ws) = ws {
            if outs.is_ok() {
                ws.mark_complete();
            }
            // One put back meanwhile by a concurrent call is dropped after the lock is released:
            // freeing it releases tensors, whose finalizers may run Python and switch threads.
            let replaced = self
                .workspace
                .lock()
                .ok()
                .and_then(|mut slot| slot.replace(ws));
            drop(replaced);
        }
        let outs = match (outs, &self.eager_errors) {
            (Ok(outs), _) => outs,
            // A `KeyboardInterrupt` (or any non-`Exception`) from a host call is not the op's
            // error: it propagates as it is.
            // Not on CUDA: eager's out-of-range gather there is a device-side assert, which
            // leaves the process's CUDA context unusable; the kernels' IndexError is raised
            // instead (below).
            (Err(inductor::RunError::IndexOutOfRange), Some(eager))
                if self.handles.cuda.is_none() =>
            {
                drop(host);
                let inputs = inputs.into_iter().map(|i| i.into_bound(py)).collect();
                return eager.run(py, inputs);
            }
            (Err(inductor::RunError::Host(e)), Some(eager))
                if e.is_instance_of::<pyo3::exceptions::PyException>(py) =>
            {
                drop(host);
                let inputs = inputs.into_iter().map(|i| i.into_bound(py)).collect();
                return eager.run(py, inputs);
            }
            (Err(inductor::RunError::Op { node, source }), _) => {
                if !source.is_instance_of::<pyo3::exceptions::PyException>(py) {
                    return Err(source);
                }
                return Err(match self.sites.of(node) {
                    Some(site) => crate::traceback::add_user_frames(py, source, &site),
                    None => source,
                });
            }
            (Err(e), _) => {
                let e = run_error_to_py(e);
                return Err(match &self.sites.root {
                    Some(site) => crate::traceback::add_user_frames(py, e, site),
                    None => e,
                });
            }
        };
        Ok(outs.into_iter().map(|o| o.into_bound(py)).collect())
    }
}

/// Grad mode switched off for a program compiled without its grad-mode switches, and on again
/// when dropped (the entry is guarded to run in grad mode), an error included.
struct NoGrad<'py> {
    set: Bound<'py, PyAny>,
}

impl<'py> NoGrad<'py> {
    fn enter(py: Python<'py>) -> PyResult<NoGrad<'py>> {
        static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
        let set = match F.get() {
            Some(f) => f.bind(py).clone(),
            None => {
                let f = py
                    .import("torch")?
                    .getattr("_C")?
                    .getattr("_set_grad_enabled")?;
                F.get_or_init(|| f.clone().unbind());
                f
            }
        };
        set.call1((false,))?;
        Ok(NoGrad { set })
    }
}

impl Drop for NoGrad<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.set.call1((true,)) {
            e.restore(self.set.py());
        }
    }
}

/// `torch.is_inference_mode_enabled()`, the function looked up once.
fn inference_mode_enabled(py: Python<'_>) -> bool {
    static F: std::sync::OnceLock<Py<PyAny>> = std::sync::OnceLock::new();
    let f = match F.get() {
        Some(f) => f,
        None => match py
            .import("torch")
            .and_then(|t| t.getattr("is_inference_mode_enabled"))
        {
            Ok(f) => F.get_or_init(|| f.unbind()),
            Err(_) => return false,
        },
    };
    f.bind(py)
        .call0()
        .and_then(|r| r.is_truthy())
        .unwrap_or(false)
}

/// The Python exception eager torch raises for the same failure: an embedding or index_select
/// position out of range is an `IndexError` there ("index out of range in self").
fn run_error_to_py(e: inductor::RunError<PyErr>) -> PyErr {
    match e {
        inductor::RunError::Host(e) | inductor::RunError::Op { source: e, .. } => e,
        inductor::RunError::IndexOutOfRange => {
            pyo3::exceptions::PyIndexError::new_err("index out of range in self")
        }
        other => pyo3::exceptions::PyRuntimeError::new_err(format!("torchferro inductor: {other}")),
    }
}
