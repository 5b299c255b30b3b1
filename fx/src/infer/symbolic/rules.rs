//! The symbolic rules of ops whose result sizes are computed rather than fitted (`cat`,
//! `stack`, `reshape`/`view`, `flatten`, indexing), and what the fitted ones read: symbolic
//! arguments, candidate expressions, the relations a broadcast or a matrix product requires.

use super::*;

impl Sym<'_> {
    pub(super) fn tensor(&self, a: &Arg) -> Option<&TensorMeta> {
        match a {
            Arg::Node(n) => self.graph.node(*n).meta.tensor(),
            _ => None,
        }
    }

    /// An int argument as an expression: a constant or a symbolic int node.
    pub(super) fn int(&self, a: &Arg) -> Option<SymExpr> {
        match a {
            Arg::Int(v) => Some(SymExpr::constant(*v)),
            Arg::Node(n) => match &self.graph.node(*n).meta {
                NodeMeta::SymInt(e) => Some(e.clone()),
                NodeMeta::Int(v) => Some(SymExpr::constant(*v)),
                _ => None,
            },
            _ => None,
        }
    }

    pub(super) fn hint(&self, e: &SymExpr) -> Option<i64> {
        e.eval(&|k| self.hints[k as usize])
    }

    pub(super) fn candidates(&self, args: &[Arg], kwargs: &[(String, Arg)]) -> Candidates {
        let mut c = Candidates {
            sizes: Vec::new(),
            strides: Vec::new(),
            orders: Vec::new(),
        };
        fn walk(cx: &Sym<'_>, a: &Arg, c: &mut Candidates) {
            match a {
                Arg::Node(n) => match &cx.graph.node(*n).meta {
                    NodeMeta::Tensor(t) => {
                        c.sizes.extend(t.sizes.iter().map(Dim::expr));
                        c.strides.extend(t.strides.iter().map(Dim::expr));
                        let at_hints: Option<Vec<i64>> = t
                            .strides
                            .iter()
                            .map(|d| d.expr().eval(&|k| cx.hints[k as usize]))
                            .collect();
                        if let Some(st) = at_hints {
                            let mut order: Vec<usize> = (0..st.len()).collect();
                            order.sort_by_key(|&d| std::cmp::Reverse(st[d]));
                            if !c.orders.contains(&order) {
                                c.orders.push(order);
                            }
                        }
                    }
                    NodeMeta::SymInt(e) => c.sizes.push(e.clone()),
                    _ => {}
                },
                Arg::Tuple(items) | Arg::List(items) => {
                    items.iter().for_each(|i| walk(cx, i, c));
                }
                _ => {}
            }
        }
        args.iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .for_each(|a| walk(self, a, &mut c));
        // Symbolic candidates first, so a size equal to a constant at every point is still
        // read as the symbol it came from only when it is one.
        c.sizes.sort_by_key(|e| e.is_const());
        c
    }

    /// Each dimension's size times its stride, of the first argument (a tensor).
    pub(super) fn size_stride_products(&self, args: &[Arg]) -> Vec<SymExpr> {
        let Some(t) = args.first().and_then(|a| self.tensor(a)) else {
            return Vec::new();
        };
        t.sizes
            .iter()
            .zip(&t.strides)
            .map(|(s, st)| s.expr().mul(&st.expr()))
            .collect()
    }

    /// The relations an op of `family` requires of its input sizes, known before its sizes
    /// are probed: broadcasting's (pointwise ops), a matrix product's, `cat`'s and `stack`'s,
    /// and a loss's between its input and target.
    pub(super) fn required(
        &self,
        family: &str,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Vec<Relation> {
        let mut rels = Vec::new();
        match family {
            // An in-place op whose only tensor is the one it writes (`x[n // 2:].mul_(3)`)
            // broadcasts nothing: its result has the receiver's sizes whether one is 1 or
            // not, and torch asks nothing of them (no `!= 1` guard, so a view of a moving
            // length reaching 1 shares the graph).
            "pointwise" if in_place(name) && self.tensor_count(args, kwargs) == 1 => {}
            "pointwise" => self.broadcast_relations(args, kwargs, &mut rels),
            "matmul" => self.matmul_relations(name, args, &mut rels),
            "join" => self.join_relations(name, args, kwargs, &mut rels),
            _ if name == "setitem" => self.setitem_relations(args, &mut rels),
            _ if name == "einsum" => self.einsum_relations(args, &mut rels),
            _ if name.starts_with("index_add") => self.index_add_relations(args, kwargs, &mut rels),
            _ if name == "cosine_embedding_loss" => {
                self.cosine_embedding_relations(args, kwargs, &mut rels)
            }
            _ if name == "tensordot" => self.tensordot_relations(args, kwargs, &mut rels),
            _ if name == "cdist" => self.cdist_relations(args, kwargs, &mut rels),
            _ if name == "inner" => self.inner_relations(args, &mut rels),
            _ if name == "grid_sample" => self.grid_sample_relations(args, kwargs, &mut rels),
            _ if name == "addr" => self.addr_relations(args, kwargs, &mut rels),
            _ if BROADCASTING.contains(&name) => self.broadcast_relations(args, kwargs, &mut rels),
            _ => self.loss_relations(name, args, kwargs, &mut rels),
        }
        rels
    }

    fn tensor_count(&self, args: &[Arg], kwargs: &[(String, Arg)]) -> usize {
        args.iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .filter(|a| self.tensor(a).is_some())
            .count()
    }

    /// `x[key] = value` requires the value to broadcast to the indexed view's sizes (aligned
    /// from the right; a value size of 1 broadcasts), and the view's own decisions (a bound
    /// clamped to the size). Without them a written size would be probed apart from the view's
    /// and the write specialized (`z[1:] = x` of `z = x.new_zeros(n + 1, 3)`).
    pub(super) fn setitem_relations(&self, args: &[Arg], rels: &mut Vec<Relation>) {
        let Some(value) = args.get(2).and_then(|a| self.tensor(a)) else {
            return;
        };
        let mut own = Vec::new();
        let Ok(view) = self.getitem(&args[..2], &mut own) else {
            return;
        };
        rels.extend(own);
        self.broadcast_into(&view, value, rels);
    }

    /// `value` broadcast to `sizes` (aligned from the right): each of its sizes that is not 1
    /// (nor 1 at the hints) equals the one it meets.
    pub(super) fn broadcast_into(
        &self,
        sizes: &[Dim],
        value: &TensorMeta,
        rels: &mut Vec<Relation>,
    ) {
        for (d, v) in sizes.iter().rev().zip(value.sizes.iter().rev()) {
            let v = v.expr();
            if v.as_const() != Some(1) && self.hint(&v) != Some(1) {
                rels.push(Relation::new(d.expr(), RelOp::Eq, v));
            }
        }
    }

    /// `addmm(input, mat1, mat2)`: the contracted sizes equal, and `input` broadcast to the
    /// product's `[n, p]`.
    fn addmm_relations(&self, args: &[Arg], rels: &mut Vec<Relation>) {
        let [input, mat1, mat2, ..] = args else {
            return;
        };
        self.matmul_relations("mm", &[mat1.clone(), mat2.clone()], rels);
        let (Some(x), Some(a), Some(b)) =
            (self.tensor(input), self.tensor(mat1), self.tensor(mat2))
        else {
            return;
        };
        if let ([n, _], [_, p]) = (&a.sizes[..], &b.sizes[..]) {
            self.broadcast_into(&[n.clone(), p.clone()], x, rels);
        }
    }

    /// What a loss requires of its input's and target's sizes, as torch checks them:
    /// the element-wise losses broadcast the two (`F.mse_loss` calls `broadcast_tensors`),
    /// the binary cross entropies require them equal, and the class losses require the
    /// target's batch and spatial sizes to be the input's (class indices: input `[N, C, d..]`,
    /// target `[N, d..]`) or every size (probabilities), and a class weight the class count.
    /// (Probing two such sizes apart would fail the op at the probes and specialize both.)
    pub(super) fn loss_relations(
        &self,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let arg = |pos: usize, key: &str| {
            kwargs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, a)| a)
                .or(args.get(pos))
        };
        let (Some(input), Some(target)) = (arg(0, "input"), arg(1, "target")) else {
            return;
        };
        let (Some(x), Some(t)) = (self.tensor(input), self.tensor(target)) else {
            return;
        };
        let mut equal = |a: &Dim, b: &Dim| rels.push(Relation::new(a.expr(), RelOp::Eq, b.expr()));
        match name {
            "mse_loss" | "l1_loss" | "smooth_l1_loss" | "huber_loss" | "kl_div" => {
                self.broadcast_relations(&[input.clone(), target.clone()], &[], rels)
            }
            "binary_cross_entropy" | "binary_cross_entropy_with_logits" if x.ndim() == t.ndim() => {
                x.sizes.iter().zip(&t.sizes).for_each(|(a, b)| equal(a, b))
            }
            "cross_entropy" | "nll_loss" => {
                if x.ndim() == t.ndim() {
                    x.sizes.iter().zip(&t.sizes).for_each(|(a, b)| equal(a, b));
                } else if x.ndim() >= 2 && t.ndim() + 1 == x.ndim() {
                    equal(&x.sizes[0], &t.sizes[0]);
                    x.sizes[2..]
                        .iter()
                        .zip(&t.sizes[1..])
                        .for_each(|(a, b)| equal(a, b));
                }
                let class = usize::from(x.ndim() >= 2);
                let weight = arg(2, "weight").and_then(|w| self.tensor(w));
                if let (Some(w), Some(c)) = (weight, x.sizes.get(class)) {
                    if w.ndim() == 1 {
                        equal(&w.sizes[0], c);
                    }
                }
            }
            _ => {}
        }
    }

    /// `cat` requires the sizes off its dim to be equal across its tensors (`cat([x[1:], y],
    /// 1)`: `s0 - 1 == s2`), `stack` every size.
    pub(super) fn join_relations(
        &self,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let Some(Arg::List(items) | Arg::Tuple(items)) = args.first() else {
            return;
        };
        let tensors: Vec<&TensorMeta> = items.iter().filter_map(|a| self.tensor(a)).collect();
        // (A 1-d empty tensor is skipped by `cat`: no requirement then.)
        let Some(first) = tensors.first() else {
            return;
        };
        if tensors.iter().any(|t| t.ndim() != first.ndim()) {
            return;
        }
        let along = match name {
            "cat" | "concat" | "concatenate" => {
                let Some(d) = self.dim_arg(args, kwargs, 1, &["dim", "axis"]) else {
                    return;
                };
                match super::super::wrap_dim(d, first.ndim()) {
                    Ok(d) => Some(d),
                    Err(_) => return,
                }
            }
            "stack" => None,
            _ => return,
        };
        for t in &tensors[1..] {
            for (d, (a, b)) in first.sizes.iter().zip(&t.sizes).enumerate() {
                if Some(d) != along {
                    rels.push(Relation::new(a.expr(), RelOp::Eq, b.expr()));
                }
            }
        }
    }

    /// Broadcasting requires aligned sizes other than 1 to be equal.
    pub(super) fn broadcast_relations(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) {
        let tensors: Vec<&TensorMeta> = args
            .iter()
            .chain(kwargs.iter().map(|(_, a)| a))
            .filter_map(|a| self.tensor(a))
            .collect();
        let rank = tensors.iter().map(|t| t.ndim()).max().unwrap_or(0);
        // A binary op (two tensors, or a tensor and a number) asks of each size whether it is
        // 1 (torch's `infer_size`, on the hint, guarded): a size that is an expression the
        // symbols' lower bounds do not keep from 1 (`s0 - 6`, a `chunk` piece `(s0 + 1) // 2`)
        // is guarded `!= 1`, or `== 1` (a replacement by a constant) when it is 1 at the
        // hints. So `x[:, 6:] + 1` and `x.split(3, 1)[-1] + 1` recompile when the piece
        // reaches 1, as torch.compile.
        let operand = |a: &Arg| {
            self.tensor(a).is_some()
                || matches!(a, Arg::Int(_) | Arg::Float(_) | Arg::Bool(_))
                || matches!(a, Arg::Node(n) if matches!(self.graph.node(*n).meta, NodeMeta::SymInt(_) | NodeMeta::SymFloat(_) | NodeMeta::Int(_) | NodeMeta::Float(_)))
        };
        if args.len() >= 2 && args[..2].iter().all(operand) {
            let one = SymExpr::constant(1);
            for t in &tensors {
                for d in &t.sizes {
                    let e = d.expr();
                    let ne = Relation::new(e.clone(), RelOp::Ne, one.clone());
                    if e.is_const() || ne.implied(&|_| 2) {
                        continue;
                    }
                    match self.hint(&e) {
                        Some(1) => rels.push(Relation::new(e, RelOp::Eq, one.clone())),
                        Some(_) => rels.push(ne),
                        None => {}
                    }
                }
            }
        }
        for i in 0..rank {
            let dims: Vec<SymExpr> = tensors
                .iter()
                .filter_map(|t| t.ndim().checked_sub(rank - i).map(|j| t.sizes[j].expr()))
                // A size that is 1 (or 1 at the hints: `x[:-1]` of a 2-row `x`, guarded `== 1`
                // above) broadcasts: no equality with the others.
                .filter(|e| e.as_const() != Some(1) && self.hint(e) != Some(1))
                .collect();
            for d in dims.iter().skip(1) {
                rels.push(Relation::new(dims[0].clone(), RelOp::Eq, d.clone()));
            }
        }
    }

    /// A matrix product requires the contracted sizes to be equal: the last of the first
    /// operand and the second-to-last of the second (`linear`: the weight's last).
    pub(super) fn matmul_relations(&self, name: &str, args: &[Arg], rels: &mut Vec<Relation>) {
        if name == "addmm" {
            return self.addmm_relations(args, rels);
        }
        let (Some(a), Some(b)) = (
            args.first().and_then(|a| self.tensor(a)),
            args.get(1).and_then(|a| self.tensor(a)),
        ) else {
            return;
        };
        let k2 = match name {
            "linear" => b.sizes.last(),
            "matmul" | "mm" | "bmm" | "__matmul__" if b.ndim() >= 2 => b.sizes.get(b.ndim() - 2),
            _ => None,
        };
        if let (Some(k), Some(k2)) = (a.sizes.last(), k2) {
            rels.push(Relation::new(k.expr(), RelOp::Eq, k2.expr()));
        }
    }

    /// Whether the dimension `split`/`chunk`/`narrow`/`unbind` cuts has a static size (known,
    /// or every symbol of it pinned).
    pub(super) fn cuts_static_dim(
        &self,
        name: &str,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Option<bool> {
        let pos = match name {
            "split" | "split_with_sizes" | "chunk" | "tensor_split" => 2,
            "narrow" | "unbind" => 1,
            _ => return Some(false),
        };
        let x = self.tensor(args.first()?)?;
        let dim = self.dim_arg(args, kwargs, pos, &["dim"])?;
        let dim = super::super::wrap_dim(dim, x.ndim()).ok()?;
        let d = &x.sizes[dim];
        Some(d.known().is_some() || d.expr().symbols().iter().all(|k| self.pinned.contains(k)))
    }

    pub(super) fn dim_arg(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        pos: usize,
        names: &[&str],
    ) -> Option<i64> {
        kwargs
            .iter()
            .find(|(k, _)| names.contains(&k.as_str()))
            .map(|(_, a)| a)
            .or(args.get(pos))
            .map(|a| match a {
                Arg::Int(v) => Some(*v),
                _ => None,
            })
            .unwrap_or(Some(0))
    }

    pub(super) fn tensor_list(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Option<Vec<&TensorMeta>> {
        let list = kwargs
            .iter()
            .find(|(k, _)| k == "tensors")
            .map(|(_, a)| a)
            .or(args.first())?;
        match list {
            Arg::Tuple(items) | Arg::List(items) => items.iter().map(|a| self.tensor(a)).collect(),
            _ => None,
        }
    }

    pub(super) fn cat(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let ts = self
            .tensor_list(args, kwargs)
            .ok_or(InferError::Unsupported)?;
        // Legacy empty 1-d tensors take no part.
        let ts: Vec<&TensorMeta> = ts
            .into_iter()
            .filter(|t| !(t.ndim() == 1 && t.sizes[0] == Dim::Known(0)))
            .collect();
        let first = ts.first().ok_or(InferError::Unsupported)?;
        let dim = self
            .dim_arg(args, kwargs, 1, &["dim", "axis"])
            .ok_or(InferError::Unsupported)?;
        let dim = super::super::wrap_dim(dim, first.ndim())?;
        let mut sizes = Vec::new();
        for d in 0..first.ndim() {
            if d == dim {
                let total = ts
                    .iter()
                    .fold(SymExpr::constant(0), |acc, t| acc.add(&t.sizes[d].expr()));
                sizes.push(Dim::from_expr(total));
            } else {
                for t in &ts[1..] {
                    rels.push(Relation::new(
                        first.sizes[d].expr(),
                        RelOp::Eq,
                        t.sizes[d].expr(),
                    ));
                }
                sizes.push(first.sizes[d].clone());
            }
        }
        Ok(sizes)
    }

    pub(super) fn stack(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Result<Vec<Dim>, InferError> {
        let ts = self
            .tensor_list(args, kwargs)
            .ok_or(InferError::Unsupported)?;
        let first = ts.first().ok_or(InferError::Unsupported)?;
        let dim = self
            .dim_arg(args, kwargs, 1, &["dim", "axis"])
            .ok_or(InferError::Unsupported)?;
        let dim = super::super::wrap_dim(dim, first.ndim() + 1)?;
        if ts.iter().any(|t| t.sizes != first.sizes) {
            return Err(InferError::Unsupported);
        }
        let mut sizes = first.sizes.clone();
        sizes.insert(dim, Dim::Known(ts.len() as i64));
        Ok(sizes)
    }

    /// `view`/`reshape`: the sizes are the arguments, a `-1` the element count over the others.
    pub(super) fn reshape(
        &self,
        args: &[Arg],
        rels: &mut Vec<Relation>,
    ) -> Result<Option<Vec<Dim>>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        let shape: Vec<&Arg> = match &args[1..] {
            [Arg::Tuple(items) | Arg::List(items)] => items.iter().collect(),
            rest => rest.iter().collect(),
        };
        let exprs: Vec<SymExpr> = shape
            .iter()
            .map(|a| self.int(a))
            .collect::<Option<_>>()
            .ok_or(InferError::Unsupported)?;
        let numel = x
            .sizes
            .iter()
            .fold(SymExpr::constant(1), |acc, d| acc.mul(&d.expr()));
        let Some(infer_at) = exprs.iter().position(|e| e.as_const() == Some(-1)) else {
            // The sizes are the arguments; their product must be the element count.
            let total = exprs.iter().fold(SymExpr::constant(1), |acc, e| acc.mul(e));
            rels.push(Relation::new(total, RelOp::Eq, numel));
            return Ok(Some(exprs.into_iter().map(Dim::from_expr).collect()));
        };
        let known = exprs
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != infer_at)
            .fold(SymExpr::constant(1), |acc, (_, e)| acc.mul(e));
        if self.hint(&known) == Some(0) {
            return Err(InferError::Unsupported);
        }
        let rem = numel.modulo(&known);
        if rem.as_const() != Some(0) {
            rels.push(Relation::new(rem, RelOp::Eq, SymExpr::constant(0)));
        }
        let mut sizes: Vec<Dim> = exprs.into_iter().map(Dim::from_expr).collect();
        sizes[infer_at] = Dim::from_expr(numel.floordiv(&known));
        Ok(Some(sizes))
    }

    pub(super) fn flatten(
        &self,
        args: &[Arg],
        kwargs: &[(String, Arg)],
    ) -> Result<Vec<Dim>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        if x.ndim() == 0 {
            return Ok(vec![Dim::Known(1)]);
        }
        let start = self
            .dim_arg(args, kwargs, 1, &["start_dim"])
            .ok_or(InferError::Unsupported)?;
        let end = kwargs
            .iter()
            .find(|(k, _)| k == "end_dim")
            .map(|(_, a)| a)
            .or(args.get(2))
            .map(|a| match a {
                Arg::Int(v) => Ok(*v),
                _ => Err(InferError::Unsupported),
            })
            .unwrap_or(Ok(-1))?;
        let start = super::super::wrap_dim(start, x.ndim())?;
        let end = super::super::wrap_dim(end, x.ndim())?;
        let mut sizes: Vec<Dim> = x.sizes[..start].to_vec();
        let prod = x.sizes[start..=end]
            .iter()
            .fold(SymExpr::constant(1), |acc, d| acc.mul(&d.expr()));
        sizes.push(Dim::from_expr(prod));
        sizes.extend(x.sizes[end + 1..].iter().cloned());
        Ok(sizes)
    }

    /// Whether the index of `x[index]` holds a tensor (advanced indexing).
    pub(super) fn has_tensor_index(&self, args: &[Arg]) -> bool {
        let is_tensor = |a: &Arg| self.tensor(a).is_some();
        match args.get(1) {
            Some(Arg::Tuple(items) | Arg::List(items)) => items.iter().any(is_tensor),
            Some(a) => is_tensor(a),
            None => false,
        }
    }

    /// `x[...]` with ints, slices, `None`, `...` and integer tensors. Slice bounds are clamped
    /// to the size as Python does; which way each clamp went at the hints becomes a relation.
    /// Integer tensor indices (advanced indexing, e.g. transformers' `position_ids[b, q]` in
    /// its mask functions) each consume one dimension; their broadcast shape (equal sizes
    /// other than 1 are relations) replaces the first of them when they are adjacent after
    /// the ints are applied (torch selects ints first), and goes in front otherwise. Bool
    /// masks give a data-dependent size: `Unsupported`. The native rule leaves advanced
    /// indexing to torch, whose values at each point check this answer.
    pub(super) fn getitem(
        &self,
        args: &[Arg],
        rels: &mut Vec<Relation>,
    ) -> Result<Vec<Dim>, InferError> {
        let x = args
            .first()
            .and_then(|a| self.tensor(a))
            .ok_or(InferError::Unsupported)?;
        let index: Vec<&Arg> = match args.get(1) {
            Some(Arg::Tuple(items)) => items.iter().collect(),
            Some(a) => vec![a],
            None => return Err(InferError::Unsupported),
        };
        let consumed = index
            .iter()
            .filter(|a| !matches!(a, Arg::None | Arg::Ellipsis))
            .count();
        if consumed > x.ndim() || index.iter().filter(|a| matches!(a, Arg::Ellipsis)).count() > 1 {
            return Err(InferError::Unsupported);
        }
        let mut sizes = Vec::new();
        let mut d = 0usize;
        // The integer tensor indices, where the first one's result dimensions go, and whether
        // they are adjacent in the result (nothing pushed between two of them).
        let mut advanced: Vec<&TensorMeta> = Vec::new();
        let mut first_at: Option<usize> = None;
        let mut last_at: Option<usize> = None;
        let mut adjacent = true;
        for a in &index {
            match a {
                Arg::None => sizes.push(Dim::Known(1)),
                a if self.tensor(a).is_some() => {
                    let t = self.tensor(a).ok_or(InferError::Unsupported)?;
                    // uint8 and bool tensors are masks.
                    if !matches!(
                        t.dtype,
                        DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64
                    ) {
                        return Err(InferError::Unsupported);
                    }
                    match last_at {
                        None => first_at = Some(sizes.len()),
                        Some(l) if l != sizes.len() => adjacent = false,
                        Some(_) => {}
                    }
                    last_at = Some(sizes.len());
                    advanced.push(t);
                    d += 1;
                }
                Arg::Ellipsis => {
                    let skip = x.ndim() - consumed;
                    sizes.extend(x.sizes[d..d + skip].iter().cloned());
                    d += skip;
                }
                Arg::Slice(start, stop, step) => {
                    let n = x.sizes[d].expr();
                    let step = match &**step {
                        Arg::None => 1,
                        Arg::Int(s) if *s > 0 => *s,
                        _ => return Err(InferError::Unsupported),
                    };
                    let start = self.bound(start, &n, SymExpr::constant(0), rels)?;
                    let stop = self.bound(stop, &n, n.clone(), rels)?;
                    let (sh, eh) = (
                        self.hint(&start).ok_or(InferError::Unsupported)?,
                        self.hint(&stop).ok_or(InferError::Unsupported)?,
                    );
                    let len = if eh > sh {
                        rels.push(Relation::new(stop.clone(), RelOp::Gt, start.clone()));
                        stop.sub(&start).add_const(step - 1).floordiv(&step.into())
                    } else {
                        rels.push(Relation::new(stop.clone(), RelOp::Le, start.clone()));
                        SymExpr::constant(0)
                    };
                    sizes.push(Dim::from_expr(len));
                    d += 1;
                }
                // An integer index drops the dimension (out of range raises at run time).
                a if self.int(a).is_some() => d += 1,
                _ => return Err(InferError::Unsupported),
            }
        }
        sizes.extend(x.sizes[d..].iter().cloned());
        if let Some(f) = first_at {
            let rank = advanced.iter().map(|t| t.ndim()).max().unwrap_or(0);
            let mut shape = Vec::with_capacity(rank);
            for i in 0..rank {
                let dims: Vec<SymExpr> = advanced
                    .iter()
                    .filter_map(|t| t.ndim().checked_sub(rank - i).map(|j| t.sizes[j].expr()))
                    .filter(|e| e.as_const() != Some(1))
                    .collect();
                match dims.first() {
                    None => shape.push(Dim::Known(1)),
                    Some(first) => {
                        for other in &dims[1..] {
                            rels.push(Relation::new(first.clone(), RelOp::Eq, other.clone()));
                        }
                        shape.push(Dim::from_expr(first.clone()));
                    }
                }
            }
            let at = if adjacent { f } else { 0 };
            sizes.splice(at..at, shape);
        }
        Ok(sizes)
    }

    /// A slice bound as Python resolves it against size `n`: negative counts from the end,
    /// then clamped to `[0, n]`.
    pub(super) fn bound(
        &self,
        a: &Arg,
        n: &SymExpr,
        default: SymExpr,
        rels: &mut Vec<Relation>,
    ) -> Result<SymExpr, InferError> {
        if matches!(a, Arg::None) {
            return Ok(default);
        }
        let b = self.int(a).ok_or(InferError::Unsupported)?;
        let bh = self.hint(&b).ok_or(InferError::Unsupported)?;
        let nh = self.hint(n).ok_or(InferError::Unsupported)?;
        let zero = SymExpr::constant(0);
        // From the end: b + n, clamped at 0.
        let b = if bh < 0 {
            rels.push(Relation::new(b.clone(), RelOp::Lt, zero.clone()));
            let from_end = b.add(n);
            if bh + nh < 0 {
                rels.push(Relation::new(from_end, RelOp::Lt, zero.clone()));
                return Ok(zero);
            }
            rels.push(Relation::new(from_end.clone(), RelOp::Ge, zero));
            return Ok(from_end);
        } else {
            rels.push(Relation::new(b.clone(), RelOp::Ge, zero));
            b
        };
        if bh <= nh {
            rels.push(Relation::new(b.clone(), RelOp::Le, n.clone()));
            Ok(b)
        } else {
            rels.push(Relation::new(b, RelOp::Gt, n.clone()));
            Ok(n.clone())
        }
    }
}

/// Ops outside the pointwise family that broadcast all their tensor operands as a pointwise
/// op does: fitted from meta runs (as [`super::EXTERNAL_FITTED`]), with broadcasting's
/// requirements.
pub(super) const BROADCASTING: &[&str] = &[
    "lerp",
    "addcmul",
    "addcdiv",
    "cosine_similarity",
    "pairwise_distance",
    "margin_ranking_loss",
    "triplet_margin_loss",
    // Each result is its input broadcast to the common sizes.
    "broadcast_tensors",
    // The two inputs broadcast, the cross product taken along a dim of 3.
    "linalg_cross",
];

/// Whether an op name is an in-place form: a method `mul_`, a dunder `__imul__`, an operator
/// `imul`.
fn in_place(name: &str) -> bool {
    (name.ends_with('_') && !name.starts_with("__"))
        || (name.starts_with("__i") && name != "__invert__")
        || crate::ops::operator_name(name).is_some_and(|(_, inplace)| inplace)
}
