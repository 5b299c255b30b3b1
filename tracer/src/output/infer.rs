//! Inferring a call's result: natively in `fx::infer` (with symbolic sizes, `fx::infer_symbolic`),
//! else by running the op on meta tensors under the traced code's modes.

use super::*;

impl OutputGraph {
    /// A call with symbolic sizes among its inputs: inferred natively or not at all (meta
    /// tensors would bake the hints into the graph's metadata). The relations the inference
    /// relied on become the shape environment's guards.
    pub(super) fn call_symbolic(
        &mut self,
        py: Python<'_>,
        name_hint: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<(NodeId, NodeMeta), TraceError> {
        if self.shapes.dirty {
            self.apply_replacements();
        }
        let hints = self.shapes.hints();
        let same = self.shapes.reps();
        // (Metadata is over representatives: a merge below moves representatives, whose
        // shifts are 0, so the members' shifts stay right for every symbol a meta reads.)
        let shift = self.shapes.shifts();
        // The sizes this trace admits so far (its relations): probe points outside them say
        // nothing about the graph (`fx::infer::Symbols::admits`).
        let admitted: Vec<fx::Cond> = self.shapes.conditions();
        let admits = |p: &[i64]| {
            admitted
                .iter()
                .all(|r| r.eval(&|k| p.get(k as usize).copied().unwrap_or(0)) == Some(true))
        };
        // Under autocast the op is valid as autocast runs it (`layer_norm` of a bfloat16 input
        // with a float32 weight), so the meta runs that fit its sizes run under the state too.
        let autocast = self.any_autocast();
        let external = |point: &[i64]| -> Result<NodeMeta, fx::InferError> {
            self.eval_on_meta(py, &target, callable, &args, &kwargs, point, autocast)
        };
        // Size-oblivious symbols (automatic dynamic's, lower bound 1): each answer is verified
        // at 1 too. One the op needs at least 2 (traced above 1) leaves the set below.
        let oblivious = std::cell::RefCell::new(self.shapes.oblivious());
        // Size-oblivious symbols traced at 1 that the op needs at 1 (`y.expand(x.shape)` of a
        // `[1, n]` `y`): pinned to 1 in every attempt below.
        let ones: std::cell::RefCell<Vec<u32>> = Default::default();
        let infer_with = |pinned: &[u32], same: &[u32]| {
            let oblivious = oblivious.borrow();
            let ones = ones.borrow();
            let pinned: Vec<u32> = pinned.iter().chain(ones.iter()).copied().collect();
            let pinned = &pinned[..];
            fx::infer_symbolic(
                &self.infer_ctx,
                &self.graph,
                &target,
                &args,
                &kwargs,
                fx::infer::Symbols {
                    hints: &hints,
                    external: Some(&external),
                    pinned,
                    same,
                    shift: &shift,
                    admits: Some(&admits),
                    autocast,
                    oblivious: &oblivious,
                },
            )
        };
        let infer = |pinned: &[u32]| infer_with(pinned, &same);
        let mut input_symbols: Vec<u32> = Vec::new();
        {
            let mut nodes = Vec::new();
            args.iter().for_each(|a| a.nodes(&mut nodes));
            kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
            for n in nodes {
                input_symbols.extend(fx::infer::meta_symbols(&self.graph.node(n).meta));
            }
            input_symbols.sort_unstable();
            input_symbols.dedup();
        }
        // Torch's replacements: an op that needs two symbols of equal hints to be equal
        // (broadcasting `[s0] + [s1]`, `cat` of `[s0, 4]` and `[s1, 4]`) guards `s1 == s0` and
        // goes on with one symbol. Every pair of the op's symbols with equal hints is tried
        // together; then each pair is given back while the answer stays verified, so only
        // what the op needs is guarded (greedy, as the pinning below).
        let mut unified: Vec<(u32, u32)> = Vec::new();
        let mut first = infer(&[]);
        // No answer valid at 1 as well: the op's size-oblivious symbols traced above 1 are
        // taken at least 2 from here (torch's 0/1 specialization: `squeeze(0)` of `[s0, 4]`,
        // a broadcast of `s0` against another size); ones traced at 1 stay, and are pinned.
        let mut at_least_2: Vec<u32> = Vec::new();
        if matches!(first, Err(fx::InferError::Unsupported)) {
            at_least_2 = oblivious
                .borrow()
                .iter()
                .copied()
                .filter(|k| input_symbols.contains(k) && hints[*k as usize] >= 2)
                .collect();
            if !at_least_2.is_empty() {
                oblivious.borrow_mut().retain(|k| !at_least_2.contains(k));
                first = infer(&[]);
            }
        }
        if matches!(first, Err(fx::InferError::Unsupported)) {
            let at_one: Vec<u32> = oblivious
                .borrow()
                .iter()
                .copied()
                .filter(|k| input_symbols.contains(k) && hints[*k as usize] < 2)
                .collect();
            if !at_one.is_empty() {
                oblivious.borrow_mut().retain(|k| !at_one.contains(k));
                *ones.borrow_mut() = at_one;
                first = infer(&[]);
            }
        }
        let first = match first {
            Err(fx::InferError::Unsupported) => {
                let mut pairs: Vec<(u32, u32)> = Vec::new();
                for (i, &a) in input_symbols.iter().enumerate() {
                    for &b in &input_symbols[i + 1..] {
                        let (ra, rb) = (same[a as usize], same[b as usize]);
                        if ra != rb
                            && hints[a as usize] == hints[b as usize]
                            && !pairs
                                .iter()
                                .any(|&(x, y)| same[x as usize] == ra && same[y as usize] == rb)
                        {
                            pairs.push((a, b));
                        }
                    }
                }
                // The representatives with `pairs` merged (each class to its first symbol).
                let merged = |pairs: &[(u32, u32)]| -> Vec<u32> {
                    let mut m = same.clone();
                    let root = |m: &Vec<u32>, mut k: u32| {
                        while m[k as usize] != k {
                            k = m[k as usize];
                        }
                        k
                    };
                    for &(a, b) in pairs {
                        let (ra, rb) = (root(&m, a), root(&m, b));
                        if ra != rb {
                            m[ra.max(rb) as usize] = ra.min(rb);
                        }
                    }
                    (0..m.len() as u32).map(|k| root(&m, k)).collect()
                };
                let mut result = Err(fx::InferError::Unsupported);
                if !pairs.is_empty() {
                    result = infer_with(&[], &merged(&pairs));
                    let mut k = 0;
                    while result.is_ok() && k < pairs.len() {
                        let fewer: Vec<(u32, u32)> = [&pairs[..k], &pairs[k + 1..]].concat();
                        match infer_with(&[], &merged(&fewer)) {
                            Ok(r) => {
                                pairs = fewer;
                                result = Ok(r);
                            }
                            Err(_) => k += 1,
                        }
                    }
                    if result.is_ok() {
                        unified = pairs;
                    }
                }
                result
            }
            other => other,
        };
        // Without a symbolic answer, the op's sizes specialize (torch's `guard_int`): every
        // symbol it reads is guarded equal to its hint, and its result is the static one.
        let mut pinned: Vec<u32> = Vec::new();
        let result = match first {
            Err(fx::InferError::Unsupported) => {
                pinned = input_symbols.clone();
                let mut result = infer(&pinned);
                // Pin only what the op needs: `layer_norm` over `[s0, s1, s2]` with a static
                // normalized shape needs `s2` alone, and pinning `s0`/`s1` too would recompile
                // a transformer block for every sequence length. Each symbol is unpinned in
                // turn while the answer stays verified (greedy: a minimal set, not the least).
                let mut k = 0;
                while result.is_ok() && k < pinned.len() {
                    let fewer: Vec<u32> = [&pinned[..k], &pinned[k + 1..]].concat();
                    match infer(&fewer) {
                        Ok(r) => {
                            pinned = fewer;
                            result = Ok(r);
                        }
                        Err(_) => k += 1,
                    }
                }
                result
            }
            other => other,
        };
        if result.is_ok() {
            for &k in &at_least_2 {
                if self.shapes.not_oblivious(k) {
                    tracing::debug!(
                        target: "torchferro::dynamic",
                        "{} >= 2: {} answers differently at size 1",
                        self.shapes.name(k),
                        target.name()
                    );
                }
            }
            for &(a, b) in &unified {
                let origin = self.shapes.origin.clone();
                tracing::debug!(
                    target: "torchferro::dynamic",
                    "{} == {}: {} needs them equal{}",
                    self.shapes.name(b),
                    self.shapes.name(a),
                    target.name(),
                    origin.as_ref().map(|o| format!(" ({o})")).unwrap_or_default()
                );
                self.shapes.unify(a, b, origin);
            }
        }
        let mut pinned: Vec<u32> = pinned.into_iter().chain(ones.take()).collect();
        pinned.sort_unstable();
        pinned.dedup();
        for &k in &pinned {
            if result.is_ok() {
                let hint = hints[k as usize];
                let origin = self.shapes.origin.clone();
                tracing::debug!(
                    target: "torchferro::dynamic",
                    "specialized {} = {hint}: {} has no symbolic shape rule here{}",
                    self.shapes.name(k),
                    target.name(),
                    origin.as_ref().map(|o| format!(" ({o})")).unwrap_or_default()
                );
                self.shapes.add_relation(
                    fx::Relation::new(
                        fx::SymExpr::symbol(k),
                        fx::RelOp::Eq,
                        fx::SymExpr::constant(hint),
                    ),
                    origin,
                );
            }
        }
        let (meta, relations) = match result {
            Ok((meta, rels)) => (self.canon_meta(&meta), rels),
            Err(e) => {
                // Torch's own answer at the hints (the sizes of this call).
                let torch_at_hints = match self.eval_on_meta(
                    py,
                    &target,
                    callable,
                    &args,
                    &kwargs,
                    &hints,
                    self.any_autocast(),
                ) {
                    Err(fx::InferError::Invalid(m)) => Some(m),
                    _ => None,
                };
                // An op whose result sizes depend on data (`torch.where(mask)`, `nms`) says so,
                // as with static sizes, whatever the symbolic rules made of it.
                let at_hints = match &e {
                    fx::InferError::Invalid(m) => Some(m.clone()),
                    fx::InferError::Unsupported => torch_at_hints.clone(),
                };
                if at_hints.as_deref().is_some_and(data_dependent_text)
                    || torch_at_hints.as_deref().is_some_and(data_dependent_text)
                {
                    return Err(TraceError::unsupported(format!(
                        "{}: its result depends on tensor data",
                        target.name()
                    )));
                }
                // Torch refuses the op at these sizes (`reshape(0, -1)` of a call with 0 rows):
                // the program raises here, as eagerly, and the frame runs eagerly as with
                // static sizes (`call_on_meta`), not a graph break with an entry of its own
                // (torch.compile raises from its trace and keeps nothing).
                if let Some(m) = torch_at_hints {
                    return Err(TraceError::UserError {
                        call: target.name().to_string(),
                        error: pyo3::exceptions::PyRuntimeError::new_err(m.clone()),
                        message: m,
                    });
                }
                return Err(TraceError::unsupported(format!(
                    "{} on symbolic sizes (dynamic shapes): {}",
                    target.name(),
                    match e {
                        fx::InferError::Invalid(m) => m,
                        fx::InferError::Unsupported => "no symbolic shape rule".into(),
                    }
                )));
            }
        };
        // A symbolic int in the result's sizes or the relations is used as a size.
        let mut read = fx::infer::meta_symbols(&meta);
        relations.iter().for_each(|r| read.extend(r.symbols()));
        if self.shapes.size_like(&read, self.shapes.origin.clone()) {
            // Traced again with that int static (`compile.rs` sees the request first).
            return Err(TraceError::unsupported(
                "an int traced at 0 or 1 reached a size: traced again with it static",
            ));
        }
        for r in relations {
            let origin = self.shapes.origin.clone();
            self.shapes.add_relation(r, origin);
        }
        // Autocast changes dtypes, never sizes: the symbolic sizes above stand, and torch
        // itself decides the dtypes, on meta tensors at the hints under the traced code's
        // autocast state (as `call_on_meta` for static sizes).
        let tensor_input = {
            let mut nodes = Vec::new();
            args.iter().for_each(|a| a.nodes(&mut nodes));
            kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
            nodes
                .iter()
                .any(|&n| matches!(self.graph.node(n).meta, NodeMeta::Tensor(_)))
        };
        // (Autocast casts tensor inputs: an op without one, a factory, is unchanged by it.)
        let mut meta = if self.any_autocast() && tensor_input {
            let at_hints = self
                .eval_on_meta(py, &target, callable, &args, &kwargs, &hints, true)
                .map_err(|e| {
                    TraceError::unsupported(format!(
                        "{} on symbolic sizes under autocast: {}",
                        target.name(),
                        match e {
                            fx::InferError::Invalid(m) => m,
                            fx::InferError::Unsupported => "no meta evaluation".into(),
                        }
                    ))
                })?;
            with_dtypes_of(meta, &at_hints).ok_or_else(|| {
                TraceError::unsupported(format!(
                    "{} on symbolic sizes under autocast: results of another structure",
                    target.name()
                ))
            })?
        } else {
            meta
        };
        if self.shapes.dirty {
            // The op's own relations may have replaced a symbol (`s2 == 32`): its result too.
            meta = self.canon_meta(&meta);
            self.apply_replacements();
        }
        let node = self
            .graph
            .call(name_hint, target, args, kwargs, meta.clone());
        if let Some(c) = callable {
            self.callables.push((node, c.clone().unbind()));
        }
        Ok((node, meta))
    }

    /// `meta` over the shape environment's representatives, with symbols replaced by
    /// constants written as those constants (a `Dim::Known`, a plain `Int`).
    pub(crate) fn canon_meta(&self, meta: &NodeMeta) -> NodeMeta {
        if !self.shapes.has_replacements() {
            return meta.clone();
        }
        fx::infer::substitute_meta(meta, &|k| self.shapes.replacement(k))
    }

    /// Rewrites every node's metadata over the representatives after a unification (an op
    /// or a branch guarded `s1 == s0`) or a replacement by a constant (`s2 == 32`): later
    /// rules and the backends see one symbol, or the constant, and the placeholders' sizes
    /// name what is read (a placeholder `[s0, s1, 32]`: that dimension is static, checked by
    /// the shape guard `L['x'].size(2) == 32`).
    pub(crate) fn apply_replacements(&mut self) {
        self.shapes.dirty = false;
        let ids: Vec<NodeId> = self.graph.nodes().map(|(id, _)| id).collect();
        for id in ids {
            let old = &self.graph.node(id).meta;
            let meta = self.canon_meta(old);
            match (old, &meta) {
                (NodeMeta::SymInt(_), NodeMeta::Int(c)) => self.folded.push((id, Arg::Int(*c))),
                (NodeMeta::SymFloat(_), NodeMeta::Float(c)) => {
                    self.folded.push((id, Arg::Float(*c)))
                }
                _ => {}
            }
            self.graph.node_mut(id).meta = meta;
        }
        // Meta tensors made at the old sizes stay right: the sizes are equal at the hints.
    }

    /// Gives every use of a symbolic int that a replacement by a constant made known (`C`
    /// of `B, T, C = x.shape`, read before a layer norm guarded `s2 == 32`) the constant, so
    /// the node that read it is dead (the backends see `split(h, 32)`, as torch's graph does
    /// once its replacement is known). One the graph returns stays a node.
    pub(crate) fn fold_replaced_sizes(&mut self) {
        let output = self.graph.output_node();
        for (id, c) in std::mem::take(&mut self.folded) {
            if !self.graph.contains(id) || output.is_some_and(|o| self.graph.users(id).contains(&o))
            {
                continue;
            }
            self.graph.replace_all_uses_with_arg(id, &c);
        }
    }

    /// The result metadata of `target(args)` with the symbols at `point`, from meta tensors
    /// (for ops the native rules do not know; `fx::infer_symbolic` fits the symbolic sizes).
    /// `autocast`: under the traced code's autocast state (for the result dtypes).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn eval_on_meta<'py>(
        &self,
        py: Python<'py>,
        target: &Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        point: &[i64],
        autocast: bool,
    ) -> Result<NodeMeta, fx::InferError> {
        let unsupported = |_| fx::InferError::Unsupported;
        let mut node = |py: Python<'py>, n: NodeId| self.stand_in_at(py, n, point);
        let py_args = args
            .iter()
            .map(|a| arg_to_py(py, a, &mut node))
            .collect::<Result<Vec<_>, _>>()
            .map_err(unsupported)?;
        let py_kwargs = PyDict::new(py);
        for (k, a) in kwargs {
            let v = arg_to_py(py, a, &mut node).map_err(unsupported)?;
            py_kwargs
                .set_item(k, v)
                .map_err(|_| fx::InferError::Unsupported)?;
        }
        let has_tensor = args
            .iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .any(has_node);
        if !has_tensor {
            return Err(fx::InferError::Unsupported);
        }
        let grad_now = crate::guards::grad_enabled(py);
        let set_grad = py
            .import("torch")
            .and_then(|t| t.getattr("_C")?.getattr("_set_grad_enabled"))
            .map_err(|_| fx::InferError::Unsupported)?;
        let switch = grad_now != self.infer_ctx.grad_enabled;
        if switch {
            let _ = set_grad.call1((self.infer_ctx.grad_enabled,));
        }
        let dtype_before = self.enter_traced_default_dtype(py);
        let result = match target {
            _ if autocast => {
                let (f, method) = match target {
                    Target::Function(_) => match callable {
                        Some(f) => (f.clone(), None),
                        None => return Err(fx::InferError::Unsupported),
                    },
                    Target::Method(name) => (py.None().into_bound(py), Some(name.as_str())),
                };
                let device = self.result_device(py, target, args, kwargs).to_string();
                py.import("torchferro._amp").and_then(|m| {
                    m.getattr("infer")?.call1((
                        f,
                        method,
                        PyTuple::new(py, &py_args)?,
                        py_kwargs.clone(),
                        device,
                        self.autocast_states(py)?,
                    ))
                })
            }
            Target::Function(_) => match callable {
                Some(f) => f.call(
                    PyTuple::new(py, &py_args).map_err(|_| fx::InferError::Unsupported)?,
                    Some(&py_kwargs),
                ),
                None => return Err(fx::InferError::Unsupported),
            },
            Target::Method(name) => match py_args.split_first() {
                Some((recv, rest)) => recv.call_method(
                    name.as_str(),
                    PyTuple::new(py, rest).map_err(|_| fx::InferError::Unsupported)?,
                    Some(&py_kwargs),
                ),
                None => return Err(fx::InferError::Unsupported),
            },
        };
        if switch {
            let _ = set_grad.call1((grad_now,));
        }
        self.leave_traced_default_dtype(py, dtype_before);
        // Torch refusing these sizes is an answer at this point (an invalid call).
        let result = result.map_err(|e| fx::InferError::Invalid(e.to_string()))?;
        let result = to_meta(py, result).map_err(|_| fx::InferError::Unsupported)?;
        let device = self.result_device(py, target, args, kwargs);
        node_meta_of(py, &result, &device).map_err(|_| fx::InferError::Unsupported)
    }

    pub(super) fn call_on_meta(
        &mut self,
        py: Python<'_>,
        name_hint: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<(NodeId, NodeMeta), TraceError> {
        let meta_args = PyTuple::new(
            py,
            args.iter()
                .map(|a| self.meta_arg(py, a))
                .collect::<Result<Vec<_>, _>>()?,
        )?;
        let meta_kwargs = PyDict::new(py);
        for (k, a) in &kwargs {
            meta_kwargs.set_item(k, self.meta_arg(py, a)?)?;
        }
        let is_factory = matches!(&target, Target::Function(_))
            && !args
                .iter()
                .chain(kwargs.iter().map(|(_, a)| a))
                .any(has_node);
        if is_factory {
            // A factory runs on metadata only: never allocate the real tensor while tracing.
            meta_kwargs.set_item("device", "meta")?;
        }
        // Run under the grad mode the traced code is in at this point.
        let grad_now = crate::guards::grad_enabled(py);
        let switch = grad_now != self.infer_ctx.grad_enabled;
        let set_grad = py
            .import("torch")?
            .getattr("_C")?
            .getattr("_set_grad_enabled")?;
        if switch {
            set_grad.call1((self.infer_ctx.grad_enabled,))?;
        }
        let dtype_before = self.enter_traced_default_dtype(py);
        let result = if self.any_autocast() {
            let device = self.result_device(py, &target, &args, &kwargs).to_string();
            let (f, method) = match &target {
                Target::Function(_) => (
                    callable
                        .expect("function targets carry their callable")
                        .clone(),
                    None,
                ),
                Target::Method(name) => (py.None().into_bound(py), Some(name.as_str())),
            };
            py.import("torchferro._amp").and_then(|m| {
                m.getattr("infer")?.call1((
                    f,
                    method,
                    meta_args,
                    meta_kwargs,
                    device,
                    self.autocast_states(py)?,
                ))
            })
        } else {
            match &target {
                Target::Function(_) => callable
                    .expect("function targets carry their callable")
                    .call(meta_args, Some(&meta_kwargs)),
                Target::Method(name) => {
                    let recv = meta_args.get_item(0)?;
                    let rest = meta_args.get_slice(1, meta_args.len());
                    recv.call_method(name.as_str(), rest, Some(&meta_kwargs))
                }
            }
        };
        if switch {
            set_grad.call1((grad_now,))?;
        }
        self.leave_traced_default_dtype(py, dtype_before);
        let result = result.map_err(|e| {
            // Ops whose result depends on data (nonzero, unique, masked_select, item) cannot run
            // on metadata: that is a limit of tracing, not the user's error.
            let text = e.to_string();
            let data_dependent = e.is_instance_of::<pyo3::exceptions::PyNotImplementedError>(py)
                || data_dependent_text(&text);
            if data_dependent {
                TraceError::unsupported(format!(
                    "{}: its result depends on tensor data",
                    target.name()
                ))
            } else {
                TraceError::UserError {
                    call: target.name().to_string(),
                    message: text,
                    error: e,
                }
            }
        })?;
        let result = to_meta(py, result)?;
        let device = self.result_device(py, &target, &args, &kwargs);
        let meta = node_meta_of(py, &result, &device)?;
        // The meta kernel of attention is its math path (a contiguous result); the device's
        // fused kernel lays the result out like q. Later meta runs read the relaid metadata.
        let relaid = match &meta {
            NodeMeta::Tensor(t)
                if fx::ops::canonical(&target, &args, &kwargs)
                    .is_some_and(|c| c.name == "scaled_dot_product_attention") =>
            {
                fx::infer::attention::relaid_result(&self.graph, &args, &kwargs, t)
                    .filter(|r| r.strides != t.strides)
            }
            _ => None,
        };
        let was_relaid = relaid.is_some();
        let meta = relaid.map(NodeMeta::Tensor).unwrap_or(meta);
        let node = self
            .graph
            .call(name_hint, target, args, kwargs, meta.clone());
        if let Some(c) = callable {
            self.callables.push((node, c.clone().unbind()));
        }
        if matches!(meta, NodeMeta::Tensor(_) | NodeMeta::Tuple(_)) && !was_relaid {
            self.metas.insert(node, result.unbind());
        }
        Ok((node, meta))
    }

    /// The device of a new result: the `device=` argument of factories and `.to()`, else the
    /// device of the first tensor argument, else CPU. (Meta tensors forget devices.)
    pub(super) fn result_device(
        &self,
        py: Python<'_>,
        target: &Target,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Device {
        for (k, a) in kwargs {
            if k == "device" {
                if let Arg::Device(d) = a {
                    return d.clone();
                }
            }
        }
        if let Target::Method(m) = target {
            if m == "to" || m == "cuda" || m == "cpu" {
                if m == "cpu" {
                    return Device::cpu();
                }
                for a in args.iter().skip(1) {
                    if let Arg::Device(d) = a {
                        return d.clone();
                    }
                }
                if m == "cuda" {
                    return Device {
                        kind: "cuda".into(),
                        index: Some(0),
                    };
                }
            }
        }
        let _ = py;
        let mut nodes = Vec::new();
        args.iter().for_each(|a| a.nodes(&mut nodes));
        kwargs.iter().for_each(|(_, a)| a.nodes(&mut nodes));
        // A tuple's items count too: `split(...)[0]` under autocast is inferred by a meta run,
        // and its device is the split's (CPU here made a CUDA graph mix devices).
        fn first_device(meta: &NodeMeta) -> Option<&Device> {
            match meta {
                NodeMeta::Tensor(t) => Some(&t.device),
                NodeMeta::Tuple(items) => items.iter().find_map(first_device),
                _ => None,
            }
        }
        nodes
            .into_iter()
            .find_map(|n| first_device(&self.graph.node(n).meta).cloned())
            .unwrap_or_else(Device::cpu)
    }

    /// A Python value standing for `arg` in a meta-tensor run.
    pub(super) fn meta_arg<'py>(
        &mut self,
        py: Python<'py>,
        arg: &Arg,
    ) -> Result<Bound<'py, PyAny>, TraceError> {
        Ok(match arg {
            Arg::Node(n) => self.meta_tensor(py, *n)?,
            other => arg_to_py(py, other, &mut |py, n| self.meta_tensor(py, n))?,
        })
    }

    pub(super) fn meta_tensor<'py>(
        &mut self,
        py: Python<'py>,
        node: NodeId,
    ) -> Result<Bound<'py, PyAny>, TraceError> {
        if let Some(m) = self.metas.get(&node) {
            return Ok(m.bind(py).clone());
        }
        let n = self.graph.node(node);
        let t = match &n.meta {
            // An op's result that requires grad is no leaf in eager: its meta stand-in must
            // accept in-place writes (`h[i] = v` on `h = x * w`) as eager does.
            NodeMeta::Tensor(t)
                if t.requires_grad && matches!(n.kind, fx::NodeKind::Call { .. }) =>
            {
                make_meta_non_leaf(py, t)?
            }
            NodeMeta::Tensor(t) => make_meta_tensor(py, t)?,
            NodeMeta::Tuple(items) => {
                let mut out = Vec::new();
                for m in items {
                    match m {
                        NodeMeta::Tensor(t) => out.push(make_meta_tensor(py, t)?),
                        _ => {
                            return Err(TraceError::unsupported(
                                "a tuple result with non-tensor items",
                            ))
                        }
                    }
                }
                PyTuple::new(py, out)?.into_any()
            }
            _ => {
                return Err(TraceError::internal(
                    "a non-tensor node without a meta value",
                ))
            }
        };
        self.metas.insert(node, t.clone().unbind());
        Ok(t)
    }
}

pub(super) fn has_node(a: &Arg) -> bool {
    let mut v = Vec::new();
    a.nodes(&mut v);
    !v.is_empty()
}

/// `meta` (symbolic sizes) with the dtypes of `at_hints` (the same op's result at the hints
/// under autocast), tensor by tensor; `None` when the two differ in structure.
pub(super) fn with_dtypes_of(meta: NodeMeta, at_hints: &NodeMeta) -> Option<NodeMeta> {
    match (meta, at_hints) {
        (NodeMeta::Tensor(mut t), NodeMeta::Tensor(h)) if t.sizes.len() == h.sizes.len() => {
            t.dtype = h.dtype;
            Some(NodeMeta::Tensor(t))
        }
        (NodeMeta::Tuple(items), NodeMeta::Tuple(hs)) if items.len() == hs.len() => items
            .into_iter()
            .zip(hs)
            .map(|(m, h)| with_dtypes_of(m, h))
            .collect::<Option<Vec<_>>>()
            .map(NodeMeta::Tuple),
        (NodeMeta::Tensor(_) | NodeMeta::Tuple(_), _) => None,
        (m, _) => Some(m),
    }
}

/// Whether torch's error from running an op on meta tensors says its result depends on data
/// (nonzero, unique, masked_select, item, nms): a limit of tracing, not the user's error.
pub(super) fn data_dependent_text(text: &str) -> bool {
    let t = text.to_lowercase();
    text.starts_with("NotImplementedError")
        || t.contains("meta tensor")
        || t.contains("data-dependent")
        || t.contains("on meta")
        // An argument refused for being on the meta device (`pack_padded_sequence`'s lengths
        // "should be a 1D CPU int64 tensor, but got 1D meta Long tensor"): the op reads data.
        || t.contains(" meta ") && t.contains("cpu")
}
