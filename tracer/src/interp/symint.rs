//! Python ints read from symbolic sizes (dynamic shapes): `x.size(0)`, `x.shape[1]`, `len(x)`,
//! `x.numel()` and arithmetic on them are graph values ([`Var::SymInt`]), computed on every
//! call by `size` and `operator.*` nodes, so a size argument of a later op is never a baked
//! constant. Comparisons and truth tests are decided at the hints and guarded
//! (`ShapeEnv::decide`); code that needs a plain int (`range`, builtins, `math`, formatting)
//! gets one by specialization: a guard that the expression keeps its hint, as torch's
//! `guard_int`.

use pyo3::prelude::*;

use fx::{Arg, Dim, NodeMeta, RelOp, SymExpr, Target};

use super::vars::Var;
use super::Frame;
use crate::error::TraceError;
use crate::output::TensorValue;

/// The largest constant exponent `n ** k` of a symbolic int is expanded for (a polynomial of
/// degree `k`); a larger one specializes.
const MAX_INT_POWER: i64 = 8;

/// Positional and keyword arguments of a call.
type CallArgs = (Vec<Var>, Vec<(String, Var)>);

/// An int operand: a constant or a symbolic int.
fn operand(py: Python<'_>, v: &Var) -> Option<SymExpr> {
    match v {
        Var::SymInt(_, e) => Some(e.clone()),
        Var::Py(o, _) => {
            let o = o.bind(py);
            // bools are ints in Python, but `True + s` is rare enough to refuse.
            if o.is_instance_of::<pyo3::types::PyBool>()
                || !o.is_instance_of::<pyo3::types::PyInt>()
            {
                return None;
            }
            o.extract::<i64>().ok().map(SymExpr::constant)
        }
        _ => None,
    }
}

impl Frame<'_, '_> {
    /// The symbolic int `expr`, computed by a new `target(args)` node (a constant expression
    /// folds to a plain int).
    pub(super) fn sym_node(
        &mut self,
        name: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        expr: SymExpr,
    ) -> Result<Var, TraceError> {
        // Over the representatives: a symbol unified with another since `expr` was read (a
        // size taken before an op guarded `s1 == s0`) is written as that one.
        let expr = self.tx.output.shapes.canon(&expr);
        if let Some(c) = expr.as_const() {
            return Ok(Var::py_const(self.tx.py, c));
        }
        let meta = NodeMeta::SymInt(expr.clone());
        let node = self.number_node(name, target, callable, args, meta);
        Ok(Var::SymInt(node, expr))
    }

    /// A new `target(args)` node computing a symbolic number described by `meta`, with the
    /// callable the runners call and the user's stack.
    pub(super) fn number_node(
        &mut self,
        name: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        meta: NodeMeta,
    ) -> fx::NodeId {
        let out = &mut self.tx.output;
        let node = out.graph.call(name, target, args, vec![], meta);
        if let Some(c) = callable {
            out.callables.push((node, c.clone().unbind()));
        }
        let stack = self.user_stack();
        self.tx.output.sites.nodes.insert(node, stack);
        node
    }

    /// `float(v)` of a symbolic int: a `torch.sym_float` node whose value is the int's, kept
    /// a graph value as torch.compile keeps a `SymFloat` (`specialize_float=False`), so an op
    /// filling or scaling by it (`torch.full((m,), float(n))`) is not traced per size. An
    /// expression that folds to a constant is a plain float.
    pub(super) fn sym_float(&mut self, v: &Var) -> Result<Var, TraceError> {
        let Var::SymInt(_, e) = v else {
            return Err(TraceError::internal(
                "sym_float of a value that is no symbolic int",
            ));
        };
        let py = self.tx.py;
        let expr = self.tx.output.shapes.canon(e);
        if let Some(c) = expr.as_const() {
            return Ok(Var::py_const(py, c as f64));
        }
        let f = py.import("torch")?.getattr("sym_float")?;
        let arg = v.to_arg(py)?;
        let float = fx::FloatExpr::of_int(expr);
        let node = self.number_node(
            "sym_float",
            Target::Function("torch.sym_float".into()),
            Some(&f),
            vec![arg],
            NodeMeta::SymFloat(float.clone()),
        );
        Ok(Var::SymFloat(node, float))
    }

    /// `t.size(dim)`: a plain int for a static dimension, else a `size` node.
    pub(super) fn size_of(&mut self, t: &TensorValue, dim: usize) -> Result<Var, TraceError> {
        self.dim_value(t, dim, &t.meta.sizes[dim], "size")
    }

    /// `t.<method>(dim)` whose answer is `value`: a plain int where it is known, else a node
    /// of that method with `value` as its metadata.
    fn dim_value(
        &mut self,
        t: &TensorValue,
        dim: usize,
        value: &Dim,
        method: &str,
    ) -> Result<Var, TraceError> {
        match value {
            Dim::Known(v) => Ok(Var::py_const(self.tx.py, *v)),
            Dim::Sym(e) => self.sym_node(
                method,
                Target::Method(method.into()),
                None,
                vec![Arg::Node(t.node), Arg::Int(dim as i64)],
                e.clone(),
            ),
        }
    }

    /// `t.stride(dim)`: a plain int for a constant stride, else a `stride` node (a product of
    /// size symbols for a dense input, a stride symbol of its own for a column slice of a
    /// moving parent), as torch.compile's SymInt strides.
    pub(super) fn stride_of(&mut self, t: &TensorValue, dim: usize) -> Result<Var, TraceError> {
        // A dimension that may be 1: the tensor check of a dynamic input does not compare its
        // stride (torch's contiguity ignores it), so the metadata's need not be the call's,
        // nor that of a view keeping the dimension (`x[:1]` of an expanded `x` whose
        // size-oblivious batch is 1 at the call: eager's stride is the parent's).
        let oblivious = self.tx.output.shapes.oblivious();
        let may_be_one = match &t.meta.sizes[dim] {
            Dim::Known(v) => *v <= 1,
            Dim::Sym(e) => e.symbols().iter().any(|k| oblivious.contains(k)),
        };
        if may_be_one {
            return Err(TraceError::unsupported(
                "the stride of a dynamic tensor's dimension that may be 1",
            ));
        }
        self.dim_value(t, dim, &t.meta.strides[dim], "stride")
    }

    /// `t.shape` / `t.size()`: a `torch.Size` whose items are ints and, for symbolic
    /// dimensions, symbolic ints.
    pub(super) fn shape_of(&mut self, t: &TensorValue) -> Result<Var, TraceError> {
        if let Some(s) = t.meta.known_sizes() {
            return Ok(Var::size_const(self.tx.py, &s));
        }
        let items = (0..t.meta.ndim())
            .map(|d| self.size_of(t, d))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Var::Size(items.into()))
    }

    /// `t.numel()`.
    pub(super) fn numel_of(&mut self, t: &TensorValue) -> Result<Var, TraceError> {
        let e = t
            .meta
            .sizes
            .iter()
            .fold(SymExpr::constant(1), |acc, d| acc.mul(&d.expr()));
        self.sym_node(
            "numel",
            Target::Method("numel".into()),
            None,
            vec![Arg::Node(t.node)],
            e,
        )
    }

    /// `operator.<name>` where an operand is a symbolic int and none a tensor: arithmetic
    /// makes a node, comparisons are decided and guarded. `None`: not an int operation.
    pub(super) fn sym_operator(
        &mut self,
        name: &str,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !args.iter().any(|a| matches!(a, Var::SymInt(..))) {
            return Ok(None);
        }
        let ops: Option<Vec<SymExpr>> = args.iter().map(|a| operand(py, a)).collect();
        let Some(ops) = ops else {
            return Ok(None);
        };
        let plain = name
            .strip_prefix('i')
            .filter(|p| matches!(*p, "add" | "sub" | "mul" | "floordiv" | "mod" | "pow"));
        let op = plain.unwrap_or(name);
        let rel = RelOp::from_operator(op);
        if let (Some(rel), [a, b]) = (rel, ops.as_slice()) {
            return self.sym_int_compare(rel, a, b).map(Some);
        }
        let expr = match (op, ops.as_slice()) {
            ("add", [a, b]) => a.add(b),
            ("sub", [a, b]) => a.sub(b),
            ("mul", [a, b]) => a.mul(b),
            ("floordiv" | "mod", [a, b]) => {
                // Division by a size that may be 0 at run time raises there, as in eager.
                if self.tx.output.shapes.hint(b) == Some(0) {
                    return Ok(None);
                }
                if op == "floordiv" {
                    a.floordiv(b)
                } else {
                    a.modulo(b)
                }
            }
            ("neg", [a]) => a.neg(),
            ("pos", [a]) => a.clone(),
            // `n ** 2`: an int polynomial (torch keeps a SymInt). A negative exponent makes a
            // float (`symfloat.rs`); a symbolic one, an exponential, specializes.
            ("pow", [a, b]) => match b.as_const() {
                Some(k @ 0..=MAX_INT_POWER) => {
                    (0..k).fold(SymExpr::constant(1), |acc, _| acc.mul(a))
                }
                _ => return Ok(None),
            },
            // `/`, `**`, shifts and bit operations: a plain int by specialization.
            _ => return Ok(None),
        };
        let f = py.import("operator")?.getattr(op)?;
        let gargs = args
            .iter()
            .map(|a| a.to_arg(py))
            .collect::<Result<Vec<_>, _>>()?;
        self.sym_node(
            op,
            Target::Function(format!("operator.{op}")),
            Some(&f),
            gargs,
            expr,
        )
        .map(Some)
    }

    /// `a rel b` of ints: known for every admitted size, a plain bool, nothing guarded;
    /// otherwise a SymBool, decided (and guarded) where its value is needed.
    pub(super) fn sym_int_compare(
        &mut self,
        rel: RelOp,
        a: &SymExpr,
        b: &SymExpr,
    ) -> Result<Var, TraceError> {
        let r = fx::Relation::new(a.clone(), rel, b.clone());
        let shapes = &self.tx.output.shapes;
        if shapes.hint(a).is_none() || shapes.hint(b).is_none() {
            return Err(TraceError::unsupported("a comparison of symbolic sizes"));
        }
        Ok(match shapes.known(&r) {
            Some(answer) => Var::py_const(self.tx.py, answer),
            None => Var::SymBool(fx::Cond::Rel(shapes.canon_relation(&r))),
        })
    }

    /// `min(a, b, ...)` / `max(a, b, ...)` of ints, some symbolic: as torch's `sym_min` /
    /// `sym_max`, a graph value (`torch.sym_max(a, b)`, folded left to right) whose order is
    /// never guarded, so values on either side of the threshold share the graph. An operand
    /// known to win for every size the guards admit (`max(T, 1)` with `T >= 2`) is the
    /// result itself. `None`: not that call (keywords, one iterable argument, a non-int
    /// operand).
    pub(super) fn sym_min_max(
        &mut self,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let is_max = match name {
            "min" => false,
            "max" => true,
            _ => return Ok(None),
        };
        if !kwargs.is_empty() || args.len() < 2 {
            return Ok(None);
        }
        if args.iter().any(|a| matches!(a, Var::SymFloat(..))) {
            return self.sym_float_min_max(is_max, args);
        }
        let Some(ops) = args
            .iter()
            .map(|a| operand(py, a))
            .collect::<Option<Vec<SymExpr>>>()
        else {
            return Ok(None);
        };
        let f = py
            .import("torch")?
            .getattr(if is_max { "sym_max" } else { "sym_min" })?;
        let mut acc = (args[0].clone(), ops[0].clone());
        for (v, e) in args.iter().zip(&ops).skip(1) {
            let shapes = &self.tx.output.shapes;
            let min = |k: u32| shapes.symbols[shapes.rep(k) as usize].min;
            let (a, b) = (shapes.canon(&acc.1), shapes.canon(e));
            let r = if is_max {
                a.max_with(&b, &min)
            } else {
                a.min_with(&b, &min)
            };
            acc = if r == a {
                acc
            } else if r == b {
                (v.clone(), r)
            } else {
                let gargs = vec![acc.0.to_arg(py)?, v.to_arg(py)?];
                let target = Target::Function(format!("torch.sym_{name}"));
                let node =
                    self.sym_node(&format!("sym_{name}"), target, Some(&f), gargs, r.clone())?;
                (node, r)
            };
        }
        Ok(Some(acc.0))
    }

    /// The truth of a symbolic int (`if T:`), decided at the hint and guarded.
    pub(super) fn sym_truth(&mut self, e: &SymExpr) -> Result<bool, TraceError> {
        let origin = self.tx.guards.origin.clone();
        self.tx
            .output
            .shapes
            .decide(e, RelOp::Ne, &SymExpr::constant(0), origin)
            .ok_or_else(|| TraceError::unsupported("the truth of a symbolic size"))
    }

    /// The truth of a comparison of symbolic ints (`if x.size(0) == y.size(0):`) or of a
    /// membership (`if T in (2, 3, C):`), decided at the hints and guarded.
    pub(super) fn sym_bool_truth(&mut self, c: &fx::Cond) -> Result<bool, TraceError> {
        self.tx.decide_sym_bool(c)
    }

    /// `bool(c)` of a comparison of sizes, or `bool(n)` of a symbolic int (`n != 0`): still
    /// undecided (torch's `bool()` of a SymBool is a SymBool; only a branch guards it). `None`:
    /// not that call.
    pub(super) fn sym_bool_call(
        &mut self,
        f: &Var,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let (Var::Py(f, _), [arg], []) = (f, args, kwargs) else {
            return Ok(None);
        };
        if !f.bind(py).is(py.get_type::<pyo3::types::PyBool>()) {
            return Ok(None);
        }
        let c = match arg {
            Var::SymBool(c) => c.clone(),
            Var::SymInt(_, e) => fx::Cond::Rel(fx::Relation::new(
                e.clone(),
                RelOp::Ne,
                SymExpr::constant(0),
            )),
            _ => return Ok(None),
        };
        let shapes = &self.tx.output.shapes;
        if c.relations().iter().any(|r| shapes.hint(&r.lhs).is_none()) {
            return Ok(None);
        }
        Ok(Some(match shapes.reduce(&c) {
            crate::guards::shape_cond::Reduced::Known(answer) => Var::py_const(py, answer),
            crate::guards::shape_cond::Reduced::Open(c) => Var::SymBool(c),
        }))
    }

    /// `v` with each undecided comparison of sizes ([`Var::SymBool`]) decided and guarded, at
    /// its top level and in a tuple or list it is: a call or an operator reads the value (only
    /// a return, a store or a container keeps it undecided). Symbolic ints stay symbolic.
    pub(super) fn decide_bools(&mut self, v: Var) -> Result<Var, TraceError> {
        Ok(match v {
            Var::SymBool(r) => {
                let answer = self.sym_bool_truth(&r)?;
                Var::py_const(self.tx.py, answer)
            }
            Var::Tuple(items) if items.iter().any(|i| matches!(i, Var::SymBool(_))) => Var::Tuple(
                items
                    .iter()
                    .cloned()
                    .map(|i| self.decide_bools(i))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            ),
            Var::List(items) if items.borrow().iter().any(|i| matches!(i, Var::SymBool(_))) => {
                let decided = items
                    .borrow()
                    .iter()
                    .map(|i| self.decide_bools(i.clone()))
                    .collect::<Result<Vec<_>, _>>()?;
                *items.borrow_mut() = decided;
                Var::List(items)
            }
            other => other,
        })
    }

    /// A plain int for a symbolic one, guarded to keep its value (torch's `guard_int`); other
    /// values unchanged, containers item by item (`Tracer::specialize`).
    pub(super) fn specialize(&mut self, v: Var) -> Result<Var, TraceError> {
        self.tx.specialize(v)
    }

    /// The object a dict or set hashes for `v` (`Tracer::hash_key`).
    pub(super) fn hash_key(&mut self, v: &Var) -> Result<Py<PyAny>, TraceError> {
        self.tx.hash_key(v)
    }

    /// [`Frame::specialize`] over call arguments.
    pub(super) fn specialize_args(
        &mut self,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<CallArgs, TraceError> {
        let args = args
            .into_iter()
            .map(|a| self.specialize(a))
            .collect::<Result<_, _>>()?;
        let kwargs = kwargs
            .into_iter()
            .map(|(k, a)| Ok((k, self.specialize(a)?)))
            .collect::<Result<_, TraceError>>()?;
        Ok((args, kwargs))
    }
}

impl super::Tracer<'_> {
    /// A condition on symbolic ints decided at the hints, the answer guarded (a disjunction
    /// as one guard: `ShapeEnv::decide_cond`).
    pub fn decide_sym_bool(&mut self, c: &fx::Cond) -> Result<bool, TraceError> {
        let origin = self.guards.origin.clone();
        self.output
            .shapes
            .decide_cond(c, origin)
            .ok_or_else(|| TraceError::unsupported("a comparison of symbolic sizes"))
    }

    /// A plain int for a symbolic one, guarded to keep its value (torch's `guard_int`); other
    /// values unchanged, containers item by item.
    pub fn specialize(&mut self, v: Var) -> Result<Var, TraceError> {
        let sym = |i: &Var| matches!(i, Var::SymInt(..) | Var::SymFloat(..) | Var::SymBool(_));
        Ok(match v {
            // `float(e)`: its int specialized, as `float()` of a plain int (a replacement by
            // a constant follows). Any other: guarded to keep its value (torch's
            // `guard_float`), a comparison of floats.
            Var::SymFloat(node, f) => match f {
                fx::FloatExpr::Int(e) => {
                    let i = self.specialize(Var::SymInt(node, e))?;
                    match i.as_py(self.py) {
                        Some(o) => Var::py_const(self.py, o.extract::<i64>()? as f64),
                        None => {
                            return Err(TraceError::internal("a specialized size without a value"))
                        }
                    }
                }
                f => {
                    let hint = self.output.shapes.float_hint(&f).ok_or_else(|| {
                        TraceError::unsupported("a symbolic float without a value")
                    })?;
                    let origin = self.guards.origin.clone();
                    self.output.shapes.decide_float(
                        &f,
                        RelOp::Eq,
                        &fx::FloatExpr::Const(hint),
                        origin,
                    );
                    Var::py_const(self.py, hint)
                }
            },
            Var::SymBool(r) => {
                let answer = self.decide_sym_bool(&r)?;
                Var::py_const(self.py, answer)
            }
            Var::SymInt(_, e) => {
                let hint =
                    self.output.shapes.hint(&e).ok_or_else(|| {
                        TraceError::unsupported("a symbolic size without a value")
                    })?;
                let origin = self.guards.origin.clone();
                self.output.shapes.add_relation(
                    fx::Relation::new(e, RelOp::Eq, SymExpr::constant(hint)),
                    origin,
                );
                Var::py_const(self.py, hint)
            }
            Var::Tuple(items) if items.iter().any(sym) => Var::Tuple(
                items
                    .iter()
                    .cloned()
                    .map(|i| self.specialize(i))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            ),
            Var::Size(items) if items.iter().any(sym) => Var::Size(
                items
                    .iter()
                    .cloned()
                    .map(|i| self.specialize(i))
                    .collect::<Result<Vec<_>, _>>()?
                    .into(),
            ),
            other => other,
        })
    }

    /// The object a dict or a set hashes for the key or element `v`: a symbolic int is
    /// specialized first (hashing needs its value); a tensor or another value with no object
    /// is unsupported.
    pub fn hash_key(&mut self, v: &Var) -> Result<Py<PyAny>, TraceError> {
        let py = self.py;
        if let Some(k) = self.frozen_key(v)? {
            return Ok(k);
        }
        self.guard_hashed(v)?;
        self.specialize(v.clone())?
            .as_py(py)
            .map(Bound::unbind)
            .ok_or_else(|| TraceError::unsupported("a dict key that is a tensor"))
    }
}

impl super::Tracer<'_> {
    /// A frozen dataclass argument (`frozen=True`, `eq=True`) whose fields are immutable
    /// constants hashes and compares by those fields (its generated `__hash__`/`__eq__`): its
    /// type and each field are guarded equal instead of its identity, so an equal key made anew
    /// per call reuses the graph, as torch.compile's does. `false`: not such an argument (the
    /// caller guards identity).
    pub fn frozen_argument_by_fields(&mut self, v: &Var) -> Result<bool, TraceError> {
        let py = self.py;
        let Var::Py(obj, Some(source)) = v else {
            return Ok(false);
        };
        let obj = obj.bind(py);
        if !super::vars::hashes_by_fields(obj.get_type().as_any())? {
            return Ok(false);
        }
        let mut fields = Vec::new();
        for f in py
            .import("dataclasses")?
            .call_method1("fields", (obj,))?
            .try_iter()?
        {
            let name: String = f?.getattr("name")?.extract()?;
            let value = obj.getattr(name.as_str())?;
            if !super::pyobj::is_immutable_const(&value) {
                return Ok(false);
            }
            fields.push((name, value.unbind()));
        }
        self.realize(v);
        for (name, value) in fields {
            self.guards.add(
                py,
                &source.attr(py, &name),
                crate::guards::Check::Equals(value),
            );
        }
        Ok(true)
    }

    /// An argument hashed into a dict or a set (a key, an element): a frozen dataclass is
    /// guarded by its type and fields ([`Self::frozen_argument_by_fields`]), any other object
    /// by its identity (the table's later lookups compare it), as `in` guards its left side.
    pub fn guard_hashed(&mut self, v: &Var) -> Result<(), TraceError> {
        if matches!(v, Var::Py(_, Some(_))) && !self.frozen_argument_by_fields(v)? {
            self.realize_identity(v);
        }
        Ok(())
    }

    /// The real instance a frozen dataclass object the trace made hashes and compares as
    /// ([`super::vars::frozen_value_key`]), its symbolic int fields specialized first: hashing
    /// needs their values (`K(k.a)` once automatic dynamic made `k.a` symbolic), so each is
    /// guarded to keep its value and is that constant in the object from then on, as torch
    /// specializes a `SymInt` a hash reads. `None` for any other value.
    pub fn frozen_key(&mut self, v: &Var) -> Result<Option<Py<PyAny>>, TraceError> {
        let py = self.py;
        if let Var::Object(o) = v {
            if super::vars::hashes_by_fields(o.cls.bind(py))?
                && o.attrs
                    .borrow()
                    .iter()
                    .any(|(_, a)| matches!(a, Var::SymInt(..)))
            {
                let fields: Vec<(Py<PyAny>, Var)> = o.attrs.borrow().clone();
                let mut fixed = Vec::with_capacity(fields.len());
                for (name, a) in fields {
                    fixed.push((name, self.specialize(a)?));
                }
                *o.attrs.borrow_mut() = fixed;
            }
        }
        Ok(super::vars::frozen_value_key(py, v)?)
    }
}

impl crate::output::OutputGraph {
    /// The graph input for the int at `source` that automatic dynamic made symbolic: a
    /// placeholder of kind `SymInt` (the runners are handed the int itself, read by its source
    /// like any input), one per source, whose symbol is the int (`ShapeEnv::int_symbol`).
    pub fn int_input(
        &mut self,
        py: Python<'_>,
        source: &crate::source::Source,
        value: &Bound<'_, PyAny>,
    ) -> Result<Var, TraceError> {
        let hint: i64 = value.extract()?;
        let expr = self.shapes.int_symbol(source, hint);
        for (i, s) in self.input_sources.iter().enumerate() {
            if s.same_as(source) {
                return Ok(Var::SymInt(self.graph.placeholders()[i], expr));
            }
        }
        let name = crate::output::placeholder_name(source);
        let node = self
            .graph
            .placeholder(&name, NodeMeta::SymInt(expr.clone()));
        self.input_sources.push(source.clone());
        self.example_inputs.push(value.clone().unbind());
        let _ = py;
        Ok(Var::SymInt(node, expr))
    }
}
