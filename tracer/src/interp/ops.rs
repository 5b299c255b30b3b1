//! Python operators, subscripts and attribute reads over variable trackers.

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use fx::{Arg, NodeMeta, Target};

use crate::decode::Op;
use crate::error::TraceError;
use crate::output::TensorValue;

use super::pyobj::{
    is_constant_module, is_container_object, is_immutable_const, is_nn_module, named_tuple_fields,
};
use super::vars::{is_fresh_tuple, Var};
use super::Frame;

/// `BINARY_OP` argument → the `operator` function it performs (3.11 and 3.12 agree).
const BINARY_OPS: [&str; 26] = [
    "add",
    "and_",
    "floordiv",
    "lshift",
    "matmul",
    "mul",
    "mod",
    "or_",
    "pow",
    "rshift",
    "sub",
    "truediv",
    "xor",
    "iadd",
    "iand",
    "ifloordiv",
    "ilshift",
    "imatmul",
    "imul",
    "imod",
    "ior",
    "ipow",
    "irshift",
    "isub",
    "itruediv",
    "ixor",
];

/// `a op= b` where `a` is a Python value whose type has no in-place dunder (`n = 0;
/// n += tensor`): Python evaluates `a op b`, so the graph records the plain operator (an
/// `operator.iadd` node on a constant is also not valid `fx` code). The plain name is the
/// in-place one without its `i` (`ior` to `or_`).
fn plain_if_immutable_lhs<'a>(
    py: Python<'_>,
    name: &'a str,
    args: &[Var],
) -> Result<&'a str, TraceError> {
    let Some(i) = BINARY_OPS.iter().position(|n| *n == name) else {
        return Ok(name);
    };
    // The in-place names follow the plain ones in the same order.
    let plain_count = BINARY_OPS.len() / 2;
    if i < plain_count || !args.iter().any(|a| matches!(a, Var::Tensor(_))) {
        return Ok(name);
    }
    let Some(lhs) = args.first().filter(|a| !matches!(a, Var::Tensor(_))) else {
        return Ok(name);
    };
    let Some(value) = lhs.as_py(py) else {
        return Ok(name);
    };
    let dunder = format!("__{}__", name.trim_end_matches('_'));
    if value.get_type().hasattr(dunder.as_str())? {
        return Ok(name);
    }
    Ok(BINARY_OPS[i - plain_count])
}

const COMPARE_OPS: [&str; 6] = ["lt", "le", "eq", "ne", "gt", "ge"];

impl Frame<'_, '_> {
    pub(super) fn binary_op(&mut self, arg: usize, lhs: Var, rhs: Var) -> Result<Var, TraceError> {
        let name = *BINARY_OPS
            .get(arg)
            .ok_or_else(|| TraceError::unsupported(format!("BINARY_OP {arg}")))?;
        self.operator(name, vec![lhs, rhs])
    }

    pub(super) fn compare_op(&mut self, arg: usize, lhs: Var, rhs: Var) -> Result<Var, TraceError> {
        let name = *COMPARE_OPS
            .get(arg)
            .ok_or_else(|| TraceError::unsupported(format!("COMPARE_OP {arg}")))?;
        self.operator(name, vec![lhs, rhs])
    }

    pub(super) fn unary_op(&mut self, op: Op, v: Var) -> Result<Var, TraceError> {
        let name = match op {
            Op::UnaryNegative => "neg",
            Op::UnaryPositive => "pos",
            Op::UnaryInvert => "invert",
            _ => {
                let t = self.truth(&v)?;
                return Ok(Var::py_const(self.tx.py, !t));
            }
        };
        self.operator(name, vec![v])
    }

    /// Applies `operator.<name>`: a graph node when a tensor is involved, else folded at trace
    /// time on the known Python values.
    pub(super) fn operator(&mut self, name: &str, args: Vec<Var>) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let args = args
            .into_iter()
            .map(|a| self.decide_bools(a))
            .collect::<Result<Vec<_>, _>>()?;
        if let Some(r) = self.frozen_compare(name, &args)? {
            return Ok(r);
        }
        if let Some(r) = self.user_container_equality(name, &args)? {
            return Ok(r);
        }
        // A comparison between tracked objects whose left one has no Python dunder for it:
        // Python tries the right one's reflection (`a > b` is `b.__lt__(a)`).
        if let [Var::Object(a), Var::Object(b)] = args.as_slice() {
            const SWAPPED: &[(&str, &str)] =
                &[("lt", "gt"), ("gt", "lt"), ("le", "ge"), ("ge", "le")];
            if let Some(&(_, sw)) = SWAPPED.iter().find(|(n, _)| *n == name) {
                if !self.object_has_dunder(a, name)? && self.object_has_dunder(b, sw)? {
                    let (a, b) = (a.clone(), b.clone());
                    return self.object_operator(&b, sw, vec![Var::Object(a)]);
                }
            }
        }
        if let Some(Var::Object(o)) = args.first() {
            let o = o.clone();
            return self.object_operator(&o, name, args[1..].to_vec());
        }
        if let [lhs, Var::Object(o)] = args.as_slice() {
            let o = o.clone();
            if let Some(r) = self.object_reflected(&o, name, lhs.clone())? {
                return Ok(r);
            }
        }
        if args.iter().any(|a| matches!(a, Var::Ndarray(_))) {
            return self.ndarray_operator(name, args);
        }
        if let Some(r) = self.sym_operator(name, &args)? {
            return Ok(r);
        }
        if let Some(r) = self.sym_float_operator(name, &args)? {
            return Ok(r);
        }
        // Concatenating or repeating tuples and sizes moves their items: symbolic ints in
        // them stay symbolic (`x.size()[:-1] + (n,)`, as GPT-2's Conv1D builds its output
        // size); comparing them compares the items one by one.
        if matches!(name, "add" | "iadd" | "mul" | "imul" | "eq" | "ne")
            && args.iter().any(|a| a.holds_sym_int())
        {
            if let Some(r) = self.sequence_operator(name, &args)? {
                return Ok(r);
            }
        }
        // Other operations of symbolic ints with Python values (`T / 2`, `(T, 4) * 2`) need
        // their value: specialized (a tensor operand takes the int as a graph value instead).
        let args = if args.iter().any(|a| matches!(a, Var::Tensor(_))) {
            args
        } else {
            args.into_iter()
                .map(|a| self.specialize(a))
                .collect::<Result<Vec<_>, _>>()?
        };
        if let Some(r) = self.sequence_operator(name, &args)? {
            return Ok(r);
        }
        let name = plain_if_immutable_lhs(py, name, &args)?;
        let f = py.import("operator")?.getattr(name)?;
        if args.iter().any(|a| matches!(a, Var::Tensor(_))) {
            let gargs = args
                .iter()
                .map(|a| a.to_arg(py))
                .collect::<Result<Vec<_>, _>>()?;
            let r = self.graph_call(
                name,
                Target::Function(format!("operator.{name}")),
                Some(&f),
                gargs,
                vec![],
            )?;
            // `+x` is `x` itself, as in eager.
            return Ok(super::calls::identity::input_itself(
                py,
                name,
                &args,
                &[],
                r,
            ));
        }
        // Python values: sequences of known items fold through their Python form. Not a live
        // iterator or mutable container from the frame: the fold would consume or mutate it at
        // trace time (`xs += it`), and its result is guarded by identity alone.
        if let Some(a) = args.iter().find(|a| {
            matches!(a, Var::Py(o, Some(_))
                if crate::interp::vars::is_mutable_container(py, o.bind(py))
                    || o.bind(py).hasattr("__next__").unwrap_or(true))
        }) {
            return Err(TraceError::unsupported(format!(
                "operator.{name} on a {} read from the frame",
                a.type_name(py)
            )));
        }
        for a in &args {
            self.tx.realize_identity(a);
        }
        let vals: Option<Vec<_>> = args.iter().map(|a| a.as_py(py)).collect();
        let Some(vals) = vals else {
            return Err(TraceError::unsupported(format!(
                "operator.{name} on {}",
                args.iter()
                    .map(|a| a.type_name(py))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let r = match f.call1(PyTuple::new(py, vals)?) {
            Ok(r) => r,
            Err(e) => {
                let fallback = TraceError::UserError {
                    call: format!("operator.{name}"),
                    message: e.to_string(),
                    error: e.clone_ref(py),
                };
                return Err(self.python_raised(e, fallback));
            }
        };
        // Sizes stay sizes through `+` and slicing; everything else is a plain value.
        self.tx.wrap(r, None).map(|v| self.revive_size(v))
    }

    fn revive_size(&self, v: Var) -> Var {
        let py = self.tx.py;
        if let Var::Py(o, None) = &v {
            let b = o.bind(py);
            if b.get_type().name().map(|n| n == "Size").unwrap_or(false) {
                if let Ok(s) = b.extract::<Vec<i64>>() {
                    return Var::size_const(py, &s);
                }
            }
        }
        v
    }

    /// Python truthiness of a traced value. An object from the frame that is guarded by type
    /// alone answers from its type when that decides it (no `__bool__`/`__len__`: always true),
    /// from its guarded keys when it is a plain dict subclass, and otherwise its identity is
    /// guarded too (its `__bool__` or `__len__` reads its state).
    pub(super) fn truth(&mut self, v: &Var) -> Result<bool, TraceError> {
        let py = self.tx.py;
        if let Var::Object(o) = v {
            return self.object_truth(&o.clone());
        }
        if let Var::SymInt(_, e) = v {
            return self.sym_truth(&e.clone());
        }
        if let Var::SymFloat(_, f) = v {
            // `float(T)` is non-zero exactly where `T` is.
            if let Some(e) = f.as_int() {
                return self.sym_truth(&e.clone());
            }
            let origin = self.tx.guards.origin.clone();
            let zero = fx::FloatExpr::Const(0.0);
            return self
                .tx
                .output
                .shapes
                .decide_float(f, fx::RelOp::Ne, &zero, origin)
                .ok_or_else(|| TraceError::unsupported("the truth of a symbolic float"));
        }
        if let Var::SymBool(r) = v {
            return self.sym_bool_truth(&r.clone());
        }
        if let Var::Py(o, Some(src)) = v {
            let o = o.bind(py);
            let ty = o.get_type();
            let dict_type = py.get_type::<PyDict>();
            // Whether the class overrides `dict`'s slot `n` (or adds one `dict` lacks).
            let own = |n: &str| -> bool {
                match (ty.getattr(n), dict_type.getattr(n)) {
                    (Ok(a), Ok(b)) => !a.is(b),
                    (Ok(_), Err(_)) => true,
                    _ => false,
                }
            };
            if o.is_instance_of::<PyDict>() && !own("__bool__") && !own("__len__") {
                let keys: Vec<Py<PyAny>> = o
                    .cast::<PyDict>()
                    .map_err(PyErr::from)?
                    .keys()
                    .iter()
                    .map(|k| k.unbind())
                    .collect();
                let n = keys.len();
                self.tx
                    .guards
                    .add(py, src, crate::guards::Check::DictKeys(keys));
                return Ok(n > 0);
            }
            if !o.is_instance_of::<PyDict>()
                && !ty.hasattr("__bool__")?
                && !ty.hasattr("__len__")?
            {
                return Ok(true);
            }
        }
        self.tx.realize_identity(v);
        v.truthy(py)
    }

    pub(super) fn is_op(&mut self, lhs: Var, rhs: Var, negate: bool) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // `x is None` depends on the type of `x` alone (guarded); other `is` tests on identity.
        let is_none = |v: &Var| matches!(v, Var::Py(o, _) if o.is_none(py));
        if !is_none(&lhs) && !is_none(&rhs) {
            self.tx.realize_identity(&lhs);
            self.tx.realize_identity(&rhs);
        }
        let same = match (&lhs, &rhs) {
            (Var::Py(a, _), Var::Py(b, _)) => a.is(b),
            (Var::Tensor(a), Var::Tensor(b)) => {
                let (ra, rb) = (
                    self.tx.output.alias_root(a.node),
                    self.tx.output.alias_root(b.node),
                );
                // Two graph inputs are distinct objects on this call only: later calls must
                // pass distinct objects too (one object passed twice is one placeholder).
                if ra != rb {
                    let sources = (
                        self.tx.output.source_of_input(ra).cloned(),
                        self.tx.output.source_of_input(rb).cloned(),
                    );
                    if let (Some(sa), Some(sb)) = sources {
                        self.tx.guards.add_identity(&sa, &sb, false);
                    }
                }
                ra == rb
            }
            (Var::Tensor(_), Var::Py(_, _)) | (Var::Py(_, _), Var::Tensor(_)) => false,
            (Var::List(a), Var::List(b)) => std::rc::Rc::ptr_eq(a, b),
            (Var::Deque(a), Var::Deque(b)) => std::rc::Rc::ptr_eq(a, b),
            (Var::Deque(_), _) | (_, Var::Deque(_)) => false,
            (Var::Object(a), Var::Object(b)) => std::rc::Rc::ptr_eq(a, b),
            // A tracked object is made by the traced code: no other value can be it.
            (Var::Object(_), _) | (_, Var::Object(_)) => false,
            (Var::ModelOutput(a), Var::ModelOutput(b)) => std::rc::Rc::ptr_eq(a, b),
            (Var::ModelOutput(_), _) | (_, Var::ModelOutput(_)) => false,
            (Var::Set(a), Var::Set(b)) => a.is(b),
            // A tuple held under two names, in a container slot or an attribute is
            // one `Rc`: the same object, as in eager (`u = t; t is u`). Two different `Rc`s may
            // still be one object (an input tuple read twice is unpacked twice), so only
            // sameness is decided here.
            (
                Var::Tuple(a) | Var::Size(a) | Var::NamedTuple { items: a, .. },
                Var::Tuple(b) | Var::Size(b) | Var::NamedTuple { items: b, .. },
            ) if std::rc::Rc::ptr_eq(a, b) => true,
            // A tuple the frame built as a new object is no other tuple it built, and no
            // object read from the frame (which existed before it).
            (Var::Tuple(a), Var::Tuple(b))
                if (is_fresh_tuple(a)
                    && (is_fresh_tuple(b)
                        || self.tx.external_container_source(&rhs).is_some()))
                    || (is_fresh_tuple(b) && self.tx.external_container_source(&lhs).is_some()) =>
            {
                false
            }
            (Var::Tuple(a), Var::Py(_, Some(_))) | (Var::Py(_, Some(_)), Var::Tuple(a))
                if is_fresh_tuple(a) =>
            {
                false
            }
            // A plain tuple is not an object of another type.
            (Var::Tuple(_), Var::Py(o, _)) | (Var::Py(o, _), Var::Tuple(_))
                if !o.bind(py).is_instance_of::<pyo3::types::PyTuple>() =>
            {
                false
            }
            (Var::Tuple(_), Var::List(_) | Var::Dict(_) | Var::Tensor(_) | Var::Function(_))
            | (Var::List(_) | Var::Dict(_) | Var::Tensor(_) | Var::Function(_), Var::Tuple(_)) => {
                false
            }
            // A dict, as a list, has one tracker per object (`Tracer::wrap` finds a frame's
            // dict again by identity): two trackers are two dicts.
            (Var::Dict(a), Var::Dict(b)) => std::rc::Rc::ptr_eq(a, b),
            // Two tuples read from the frame are two objects (one object read twice is one
            // tracker): guarded to stay two, below.
            (Var::Tuple(_), Var::Tuple(_))
                if self.tx.external_container_source(&lhs).is_some()
                    && self.tx.external_container_source(&rhs).is_some() =>
            {
                false
            }
            (Var::Py(o, _), _) | (_, Var::Py(o, _)) if o.is_none(py) => false,
            // A tracked container is a container: an object of no container type (a sentinel
            // such as a dataclass's `_HAS_DEFAULT_FACTORY`) is not it.
            (Var::Py(o, _), c) | (c, Var::Py(o, _))
                if is_tracked_container(c) && !is_container_object(py, o.bind(py))? =>
            {
                false
            }
            _ => return Err(TraceError::unsupported("`is` between these values")),
        };
        // Two containers read from the frame through two sources: the answer holds while the
        // sources hold one object (or two) again (`f(l, l)` then `f(l, l2)`).
        if let (Some(sa), Some(sb)) = (
            self.tx.external_container_source(&lhs),
            self.tx.external_container_source(&rhs),
        ) {
            if !sa.same_as(&sb) {
                self.tx.guards.add_identity(&sa, &sb, same);
            }
        }
        Ok(Var::py_const(py, same != negate))
    }

    pub(super) fn contains_op(
        &mut self,
        lhs: Var,
        rhs: Var,
        negate: bool,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(found) = self.symbolic_sequence_contains(&lhs, &rhs)? {
            return Ok(match found {
                Var::SymBool(c) if negate => Var::SymBool(c.negate()),
                Var::SymBool(c) => Var::SymBool(c),
                plain => Var::py_const(py, self.truth(&plain)? != negate),
            });
        }
        // Membership hashes or compares a symbolic int by its value (a dict key, a set
        // element): it is specialized, guarded to keep that value (torch's `guard_int`), as
        // an int that automatic dynamic made symbolic would otherwise break the graph here.
        let (lhs, rhs) = if matches!(rhs, Var::Tensor(_)) {
            (lhs, rhs)
        } else {
            (self.specialize(lhs)?, self.specialize(rhs)?)
        };
        if let Var::Object(o) = &rhs {
            // `__contains__`, inlined (its result's truth, as `in` takes it).
            let o = o.clone();
            let r = self.object_operator(&o, "contains", vec![lhs])?;
            let found = self.truth(&r)?;
            return Ok(Var::py_const(py, found != negate));
        }
        if !self.frozen_argument_by_fields(&lhs)? {
            self.tx.realize_identity(&lhs);
        }
        // Membership in a dict depends on its keys alone (guarded with the dict), not on the
        // identity of its values.
        if !matches!(rhs, Var::Dict(_)) {
            self.tx.realize_identity(&rhs);
        }
        if let Var::ModelOutput(o) = &rhs {
            let key = lhs
                .as_py(py)
                .and_then(|k| k.extract::<String>().ok())
                .ok_or_else(|| TraceError::unsupported("`in` a ModelOutput with a non-str key"))?;
            let found = o.has_key(&key);
            return Ok(Var::py_const(py, found != negate));
        }
        // A frozen dataclass the trace made is looked up by its fields' values.
        let frozen = self.tx.frozen_key(&lhs)?.map(|k| k.into_bound(py));
        if let Var::Dict(d) = &rhs {
            let key = frozen
                .clone()
                .or_else(|| lhs.as_py(py))
                .ok_or_else(|| TraceError::unsupported("`in` with a tensor key"))?;
            let found = d
                .borrow()
                .iter()
                .any(|(k, _)| k.bind(py).eq(&key).unwrap_or(false));
            return Ok(Var::py_const(py, found != negate));
        }
        match (frozen.or_else(|| lhs.as_py(py)), rhs.as_py(py)) {
            (Some(a), Some(b)) => {
                let r = b.contains(a)?;
                Ok(Var::py_const(py, r != negate))
            }
            _ => Err(TraceError::unsupported("`in` involving tensors")),
        }
    }

    fn frozen_argument_by_fields(&mut self, v: &Var) -> Result<bool, TraceError> {
        self.tx.frozen_argument_by_fields(v)
    }

    /// `==` / `!=` of frozen dataclass values, one at least an argument: compared by their
    /// types and fields (the generated `__eq__`), each argument's type and fields guarded
    /// rather than its identity, so an equal instance made anew per call reuses the graph (as
    /// torch.compile's inlined `__eq__`). `None`: not such a comparison.
    fn frozen_compare(&mut self, name: &str, args: &[Var]) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !matches!(name, "eq" | "ne") || args.len() != 2 {
            return Ok(None);
        }
        if !args.iter().any(|a| matches!(a, Var::Py(_, Some(_)))) {
            return Ok(None);
        }
        let frozen = |a: &Var| -> PyResult<bool> {
            Ok(match a {
                Var::Py(o, Some(_)) => {
                    super::vars::hashes_by_fields(o.bind(py).get_type().as_any())?
                }
                Var::Object(o) => super::vars::hashes_by_fields(o.cls.bind(py))?,
                _ => false,
            })
        };
        if !(frozen(&args[0])? && frozen(&args[1])?) {
            return Ok(None);
        }
        if let Some(r) = self.frozen_compare_fields(&args[0], &args[1])? {
            return Ok(Some(Var::py_const(py, r == (name == "eq"))));
        }
        let mut vals = Vec::with_capacity(2);
        for a in args {
            let v = match a {
                Var::Py(o, _) if self.frozen_argument_by_fields(a)? => o.clone_ref(py),
                Var::Object(_) => match self.tx.frozen_key(a)? {
                    Some(k) => k,
                    None => return Ok(None),
                },
                _ => return Ok(None),
            };
            vals.push(v.into_bound(py));
        }
        let r = vals[0].eq(&vals[1])?;
        Ok(Some(Var::py_const(py, r == (name == "eq"))))
    }

    /// `a == b` of two frozen dataclass values of one type, as the generated `__eq__` runs it:
    /// field by field (those with `compare=True`), each field read as the trace reads any
    /// attribute, so an int field automatic dynamic made symbolic compares symbolically (`k ==
    /// k` is true for every `k.a`, with no guard on its value; a field of another value
    /// guards the relation it decided), as torch.compile's inlined `__eq__`. The type is
    /// guarded as for any argument. `None`: values of two types (the general path: both
    /// `__eq__` decline) or a field that is not an immutable constant or an int.
    fn frozen_compare_fields(&mut self, a: &Var, b: &Var) -> Result<Option<bool>, TraceError> {
        let py = self.tx.py;
        let cls = |v: &Var| match v {
            Var::Py(o, _) => Some(o.bind(py).get_type().into_any().unbind()),
            Var::Object(o) => Some(o.cls.clone_ref(py)),
            _ => None,
        };
        let (Some(ca), Some(cb)) = (cls(a), cls(b)) else {
            return Ok(None);
        };
        if !ca.bind(py).is(cb.bind(py)) {
            return Ok(None);
        }
        let mut names = Vec::new();
        for f in py
            .import("dataclasses")?
            .call_method1("fields", (ca.bind(py),))?
            .try_iter()?
        {
            let f = f?;
            if f.getattr("compare")?.is_truthy()? {
                names.push(f.getattr("name")?.extract::<String>()?);
            }
        }
        for v in [a, b] {
            self.tx.realize(v);
        }
        for name in names {
            let (fa, fb) = (
                self.getattr(a.clone(), &name)?,
                self.getattr(b.clone(), &name)?,
            );
            let plain = |v: &Var| {
                matches!(v, Var::SymInt(..))
                    || v.as_py(py)
                        .is_some_and(|o| super::pyobj::is_immutable_const(&o))
            };
            if !(plain(&fa) && plain(&fb)) {
                return Ok(None);
            }
            let eq = self.operator("eq", vec![fa, fb])?;
            if !self.truth(&eq)? {
                return Ok(Some(false));
            }
        }
        Ok(Some(true))
    }

    /// `x in (a, b, c)` over ints where a symbolic one takes part, as torch.compile decides it:
    /// in a tuple, a list or a `torch.Size`, one condition, the disjunction of the items'
    /// equalities (`T == 2 or T == 3 or T == C`), left undecided (a symbolic bool, as torch's
    /// `Or`) and guarded whole where it is read, so a size that meets the membership through
    /// different items keeps one graph; an item equal for every size decides it with no guard
    /// (`C in x.shape` is true, nothing guarded), one never equal drops out. `None`: not such a
    /// membership (hashing containers and the rest take the general path).
    fn symbolic_sequence_contains(
        &mut self,
        lhs: &Var,
        rhs: &Var,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let items = match rhs {
            Var::Tuple(items) | Var::Size(items) => items.to_vec(),
            Var::List(items) => items.borrow().clone(),
            _ => return Ok(None),
        };
        let is_int = |v: &Var| match v {
            Var::SymInt(..) => true,
            _ => v
                .as_py(py)
                .is_some_and(|o| o.is_exact_instance_of::<pyo3::types::PyInt>()),
        };
        let symbolic =
            matches!(lhs, Var::SymInt(..)) || items.iter().any(|i| matches!(i, Var::SymInt(..)));
        if !symbolic || !is_int(lhs) || !items.iter().all(is_int) {
            return Ok(None);
        }
        let mut open = Vec::new();
        for item in items {
            let eq = self.operator("eq", vec![lhs.clone(), item])?;
            match eq {
                Var::SymBool(c) => open.extend(c.relations().iter().cloned()),
                eq => {
                    if self.truth(&eq)? {
                        return Ok(Some(Var::py_const(py, true)));
                    }
                }
            }
        }
        let Some(c) = fx::Cond::join(open, true) else {
            return Ok(Some(Var::py_const(py, false)));
        };
        Ok(Some(match self.tx.output.shapes.reduce(&c) {
            crate::guards::shape_cond::Reduced::Known(answer) => Var::py_const(py, answer),
            crate::guards::shape_cond::Reduced::Open(c) => Var::SymBool(c),
        }))
    }

    pub(super) fn subscript(&mut self, obj: Var, idx: Var) -> Result<Var, TraceError> {
        if let Some(m) = self.user_container_override(&obj, "__getitem__")? {
            return self.call(m, vec![idx], vec![]);
        }
        if self.user_getitem(&obj)? {
            let m = self.getattr(obj, "__getitem__")?;
            return self.call(m, vec![idx], vec![]);
        }
        self.subscript_raw(obj, idx)
    }

    /// Whether `obj[idx]` of a user object held as a Python value runs its class's Python
    /// `__getitem__` traced (inlined), as any method call does: run at trace time instead, its
    /// effects would happen once and an exception it raises (a registry's `KeyError` under a
    /// `Mapping.get`, transformers' `ALL_ATTENTION_FUNCTIONS`) could not be caught by the
    /// traced code. Builtin containers and their subclasses (a `ModelOutput` is a dict) and
    /// torch modules keep their own paths.
    fn user_getitem(&mut self, obj: &Var) -> Result<bool, TraceError> {
        let py = self.tx.py;
        let Var::Py(o, Some(_)) = obj else {
            return Ok(false);
        };
        let o = o.bind(py);
        if o.is_instance_of::<pyo3::types::PyType>()
            || o.is_instance_of::<PyDict>()
            || o.is_instance_of::<pyo3::types::PyList>()
            || o.is_instance_of::<PyTuple>()
            || o.is_instance(&py.import("torch.nn")?.getattr("Module")?)?
        {
            return Ok(false);
        }
        let Ok(f) = o.get_type().getattr(intern!(py, "__getitem__")) else {
            return Ok(false);
        };
        if !f.is_instance(&py.import("types")?.getattr("FunctionType")?)? {
            return Ok(false);
        }
        self.inlinable(&f)
    }

    /// `obj[idx]` by the builtin operation (a user container's override not consulted).
    pub(super) fn subscript_raw(&mut self, obj: Var, idx: Var) -> Result<Var, TraceError> {
        let py = self.tx.py;
        match &obj {
            Var::Deque(q) => {
                let q = q.clone();
                self.deque_index(&q, &idx, None)
            }
            Var::Tensor(_) | Var::Object(_) | Var::Ndarray(_) => {
                self.operator("getitem", vec![obj, idx])
            }
            Var::ModelOutput(o) => {
                let o = o.clone();
                self.model_output_item(&o, &idx)
            }
            Var::Tuple(_) | Var::List(_) | Var::Size(_) | Var::NamedTuple { .. } => {
                let items = obj.items(py).unwrap();
                let i = idx
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("indexing a sequence with a tensor"))?;
                if let Ok(i) = i.extract::<isize>() {
                    let n = items.len() as isize;
                    let j = if i < 0 { i + n } else { i };
                    if j < 0 || j >= n {
                        let kind = if matches!(obj, Var::List(_)) {
                            "list"
                        } else {
                            "tuple"
                        };
                        let fallback = TraceError::unsupported(
                            "an index out of range (the frame raises IndexError)",
                        );
                        let msg = format!("{kind} index out of range");
                        return Err(self.raise_new("IndexError", (msg,), fallback));
                    }
                    return Ok(items[j as usize].clone());
                }
                if let Ok(s) = i.cast::<pyo3::types::PySlice>() {
                    let ind = s.indices(items.len() as isize)?;
                    let mut out = Vec::new();
                    let mut k = ind.start;
                    while (ind.step > 0 && k < ind.stop) || (ind.step < 0 && k > ind.stop) {
                        out.push(items[k as usize].clone());
                        k += ind.step;
                    }
                    // A whole plain tuple sliced forward (`t[:]`) is `t` itself in CPython.
                    if matches!(obj, Var::Tuple(_))
                        && ind.start == 0
                        && ind.step == 1
                        && out.len() == items.len()
                    {
                        return Ok(obj.clone());
                    }
                    return Ok(match obj {
                        Var::List(_) => Var::list(out),
                        Var::Size(_) => Var::Size(out.into()),
                        _ => Var::Tuple(out.into()),
                    });
                }
                Err(TraceError::unsupported(
                    "indexing a sequence with a non-integer",
                ))
            }
            Var::Dict(d) => {
                let key = self.hash_key(&idx)?.into_bound(py);
                let found = d
                    .borrow()
                    .iter()
                    .find(|(k, _)| k.bind(py).eq(&key).unwrap_or(false))
                    .map(|(_, v)| v.clone());
                match found {
                    Some(v) => Ok(v),
                    None => {
                        let d = d.clone();
                        if self.dict_has_missing(&d) {
                            self.dict_missing(&d, key.unbind())
                        } else {
                            let fallback = TraceError::unsupported(
                                "a missing dict key (the frame raises KeyError)",
                            );
                            Err(self.raise_new("KeyError", (key,), fallback))
                        }
                    }
                }
            }
            // A dict keyed by a tensor the graph takes as an input (an optimizer's state keyed
            // by its parameters): read by that tensor object, hashed by identity.
            Var::Py(o, Some(src))
                if o.bind(py).is_instance_of::<pyo3::types::PyDict>()
                    && matches!(&idx, Var::Tensor(t) if self.tx.output.example_input(t.node).is_some()) =>
            {
                let Var::Tensor(t) = &idx else { unreachable!() };
                let key = self
                    .tx
                    .output
                    .example_input(t.node)
                    .map(|k| k.bind(py).clone())
                    .ok_or_else(|| TraceError::internal("a graph input's object"))?;
                let d = o
                    .bind(py)
                    .cast::<pyo3::types::PyDict>()
                    .map_err(|_| TraceError::internal("a dict"))?;
                let Some(v) = d.get_item(&key)? else {
                    return Err(TraceError::unsupported(
                        "a missing key of a dict keyed by tensors",
                    ));
                };
                let repr = super::calls::object_key_repr(&key);
                let src = src.item_named(key, repr);
                self.tx.wrap(v, Some(src))
            }
            Var::Py(o, Some(src)) if self.is_plain_module_list(o.bind(py))? => {
                let (o, src) = (o.clone_ref(py), src.clone());
                self.module_list_item(o.bind(py), &src, &idx)
            }
            Var::Py(o, src) => {
                let key = idx.as_py(py).ok_or_else(|| {
                    TraceError::unsupported("indexing a Python object with a tensor")
                })?;
                let o = o.bind(py);
                let v = match o.get_item(&key) {
                    Ok(v) => v,
                    Err(e) => return Err(self.subscript_raised(o, src.as_ref(), e)),
                };
                // A class subscripted (`list[Tensor]`, its `__class_getitem__`) makes a new alias
                // object per call from guarded operands: a constant, never held by identity.
                // Otherwise the item's source reads it as this read did, by subscription: a
                // dict subclass held as a Python value (a `ModelOutput` a resume function gets
                // on its stack) answers `out[0]` through its `__getitem__` override, which a raw
                // dict read of key 0 would not find.
                let src = if o.is_instance_of::<pyo3::types::PyType>() {
                    None
                } else {
                    src.as_ref().map(|s| s.subscript(key))
                };
                self.tx.wrap(v, src)
            }
            other => Err(TraceError::unsupported(format!(
                "indexing a {}",
                other.type_name(py)
            ))),
        }
    }

    /// `o[key]` of a Python value raised `err` at trace time (a missing key of a class-level
    /// registry dict, `MAPPING._global_mapping[key]` under a `Mapping.get`): the program raises
    /// it there, so a traced `try`/`except KeyError` handles it, where the miss is a fact the
    /// guards keep: a dict read from a source has its keys guarded (a key added later misses
    /// the entry), an immutable constant cannot change. Otherwise (a user `__getitem__` run at
    /// trace time) the frame runs eagerly and raises it for real.
    fn subscript_raised(
        &mut self,
        o: &Bound<'_, PyAny>,
        src: Option<&crate::source::Source>,
        err: PyErr,
    ) -> TraceError {
        let py = self.tx.py;
        let fallback = TraceError::UserError {
            call: "getitem".into(),
            message: err.to_string(),
            error: err.clone_ref(py),
        };
        let known = match (o.cast::<PyDict>(), src) {
            (Ok(d), Some(src)) if o.get_type().is(py.get_type::<PyDict>()) => {
                match crate::guards::dict_keys_in_order(py, d) {
                    Ok(keys) => {
                        let keys = keys.into_iter().map(Bound::unbind).collect();
                        self.tx
                            .guards
                            .add(py, src, crate::guards::Check::DictKeys(keys));
                        true
                    }
                    Err(_) => false,
                }
            }
            _ => crate::interp::pyobj::is_immutable_const(o),
        };
        if known {
            self.python_raised(err, fallback)
        } else {
            fallback
        }
    }

    /// Whether `o` is a `torch.nn.ModuleList` itself (not a subclass, whose `__getitem__` or
    /// `__init__` may differ): its slice is `ModuleList(list(self._modules.values())[idx])`.
    fn is_plain_module_list(&self, o: &Bound<'_, PyAny>) -> Result<bool, TraceError> {
        let py = self.tx.py;
        Ok(o.get_type()
            .is(py.import("torch.nn")?.getattr("ModuleList")?))
    }

    /// `lst[idx]` of a `ModuleList` the frame reached (`src`), or of a slice of one made in the
    /// trace. A slice is a new list on every call; building it in the guard walk runs
    /// `Module.__init__` (Llama's `self.layers[: n]`), so the trace keeps it out of every source:
    /// the keys of the source list's `_modules` are guarded, the slice is recorded with the keys
    /// it selected (`ModuleListSlice`), and its children (iterated or indexed) are read through
    /// `parent._modules[key]`. An int index of a slice is that child; other reads of a slice
    /// (its attributes) still go through its own source, which builds it.
    fn module_list_item(
        &mut self,
        o: &Bound<'_, PyAny>,
        src: &crate::source::Source,
        idx: &Var,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let key = idx
            .as_py(py)
            .ok_or_else(|| TraceError::unsupported("indexing a Python object with a tensor"))?;
        let v = o.get_item(&key).map_err(|e| TraceError::UserError {
            call: "getitem".into(),
            message: e.to_string(),
            error: e,
        })?;
        let recorded = self
            .tx
            .module_list_slices
            .iter()
            .find(|s| s.list.bind(py).is(o))
            .map(|s| (s.parent.clone(), s.keys.clone()));
        let is_slice = key.is_instance_of::<pyo3::types::PySlice>();
        if recorded.is_none() && !is_slice {
            // An item of a list the frame holds: its own source, as before.
            return self.tx.wrap(v, Some(src.item(key)));
        }
        let (parent, keys) = match recorded {
            Some(r) => r,
            None => {
                let modules = o.getattr("_modules")?;
                let keys: Vec<Bound<'_, PyAny>> = modules
                    .call_method0("keys")?
                    .try_iter()?
                    .collect::<PyResult<_>>()?;
                self.tx.guards.add(
                    py,
                    &src.attr(py, "_modules"),
                    crate::guards::Check::DictKeys(
                        keys.iter().map(|k| k.clone().unbind()).collect(),
                    ),
                );
                let keys = keys
                    .iter()
                    .map(|k| k.extract::<String>())
                    .collect::<PyResult<Vec<_>>>()?;
                (src.clone(), keys)
            }
        };
        let selected = pyo3::types::PyList::new(py, &keys)?.as_any().get_item(&key);
        let selected = selected.map_err(|e| TraceError::UserError {
            call: "getitem".into(),
            message: e.to_string(),
            error: e,
        })?;
        if is_slice {
            let keys: Vec<String> = selected.extract()?;
            self.tx.module_list_slices.push(super::ModuleListSlice {
                list: v.clone().unbind(),
                parent,
                keys,
            });
            // No guard of its own: its type and length follow from the parent's.
            return Ok(Var::Py(v.unbind(), Some(src.item(key))));
        }
        let k: String = selected.extract()?;
        let s = parent
            .attr(py, "_modules")
            .item(pyo3::types::PyString::new(py, &k).into_any());
        self.tx.wrap(v, Some(s))
    }

    /// `obj[key] = value`: an in-place graph op on tensors, a mutation of tracked containers.
    pub(super) fn store_subscript(
        &mut self,
        obj: Var,
        key: Var,
        value: Var,
    ) -> Result<(), TraceError> {
        if let Some(m) = self.user_container_override(&obj, "__setitem__")? {
            self.call(m, vec![key, value], vec![])?;
            return Ok(());
        }
        self.store_subscript_raw(obj, key, value)
    }

    /// `obj[key] = value` by the builtin operation.
    pub(super) fn store_subscript_raw(
        &mut self,
        obj: Var,
        key: Var,
        value: Var,
    ) -> Result<(), TraceError> {
        let py = self.tx.py;
        match &obj {
            Var::Ndarray(a) => {
                let a = a.clone();
                self.ndarray_setitem(&a, &key, &value)
            }
            Var::ModelOutput(o) => {
                let k: String = key
                    .as_py(py)
                    .and_then(|k| k.extract().ok())
                    .ok_or_else(|| {
                        TraceError::unsupported("a ModelOutput item of a non-str key")
                    })?;
                o.assign(py, &k, value, true)
            }
            Var::Tensor(_) => {
                let f = py.import("operator")?.getattr("setitem")?;
                let args = vec![obj.to_arg(py)?, key.to_arg(py)?, value.to_arg(py)?];
                self.graph_call(
                    "setitem",
                    Target::Function("operator.setitem".into()),
                    Some(&f),
                    args,
                    vec![],
                )?;
                Ok(())
            }
            Var::Deque(q) => {
                let q = q.clone();
                self.deque_index(&q, &key, Some(value))?;
                Ok(())
            }
            Var::List(l) => {
                let k = key
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("a list index that is a tensor"))?;
                if let Ok(s) = k.cast::<pyo3::types::PySlice>() {
                    return self.list_store_slice(l, s, &value);
                }
                let i: isize = k
                    .extract()
                    .map_err(|_| TraceError::unsupported("assigning to a list slice"))?;
                self.tx.note_list_mutation(l);
                let mut b = l.borrow_mut();
                let n = b.len() as isize;
                let j = if i < 0 { i + n } else { i };
                if j < 0 || j >= n {
                    return Err(TraceError::unsupported(
                        "a list index out of range (the frame raises IndexError)",
                    ));
                }
                b[j as usize] = value;
                Ok(())
            }
            Var::Dict(d) => {
                self.tx.note_dict_mutation(d);
                let k = self.hash_key(&key)?.into_bound(py);
                let mut b = d.borrow_mut();
                if let Some(slot) = b
                    .iter_mut()
                    .find(|(k2, _)| k2.bind(py).eq(&k).unwrap_or(false))
                {
                    slot.1 = value;
                } else {
                    b.push((k.unbind(), value));
                }
                Ok(())
            }
            other => Err(TraceError::unsupported(format!(
                "assigning an item of a {} from outside the compiled function",
                other.type_name(py)
            ))),
        }
    }

    /// Adds a call to the graph and tracks its result.
    pub(super) fn graph_call(
        &mut self,
        name_hint: &str,
        target: Target,
        callable: Option<&Bound<'_, PyAny>>,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        self.check_value_errors(&target, &args, &kwargs)?;
        let (node, meta) = self
            .tx
            .output
            .call(py, name_hint, target, callable, args, kwargs)?;
        let stack = self.user_stack();
        self.tx.output.sites.nodes.insert(node, stack);
        if self.tx.output.reads_default_dtype(node) && !self.tx.output.sets_default_dtype() {
            // The dtype came from `torch.get_default_dtype()`: a later call under another
            // default must not reuse this graph.
            let f = py.import("torch")?.getattr("get_default_dtype")?;
            let value = f.call0()?;
            let origin = self.tx.guards.origin.clone();
            self.tx
                .guards
                .global
                .value(&f, &value, "torch.get_default_dtype()", origin);
        }
        self.result_var(node, meta)
    }

    fn result_var(&mut self, node: fx::NodeId, meta: NodeMeta) -> Result<Var, TraceError> {
        let py = self.tx.py;
        match meta {
            NodeMeta::Tensor(t) => {
                // An in-place op returns the tensor it mutated.
                if let fx::NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } = &self.tx.output.graph.node(node).kind
                {
                    // The tensor written: the first argument, or the `out=` tensor.
                    let written = match fx::ops::mutated_arg(target, args, kwargs) {
                        Some(fx::ops::Mutated::Arg(i)) => args.get(i),
                        Some(fx::ops::Mutated::Out) => {
                            let out = kwargs.iter().find(|(k, _)| k == "out").map(|(_, v)| v);
                            // An `out=` tensor of other sizes is resized by the op: every
                            // tracker of it would have to learn its new sizes, so (as the
                            // shape-changing in-place methods) it runs natively.
                            if let Some(Arg::Node(m)) = out {
                                if let NodeMeta::Tensor(old) = &self.tx.output.graph.node(*m).meta {
                                    if old.sizes != t.sizes || old.strides != t.strides {
                                        return Err(TraceError::unsupported(
                                            "an out= tensor the op resizes (it changes the \
                                             tensor's shape in place)",
                                        ));
                                    }
                                }
                            }
                            out
                        }
                        None => None,
                    };
                    if let Some(Arg::Node(m)) = written {
                        let m = *m;
                        self.tx.output.set_alias(node, m);
                    }
                }
                Ok(Var::Tensor(TensorValue { node, meta: t }))
            }
            NodeMeta::Tuple(items) => {
                let getitem = py.import("operator")?.getattr("getitem")?;
                let mut out = Vec::new();
                for (i, m) in items.into_iter().enumerate() {
                    match m {
                        NodeMeta::Tensor(_) => {
                            let v = self.graph_call(
                                "getitem",
                                Target::Function("operator.getitem".into()),
                                Some(&getitem),
                                vec![Arg::Node(node), Arg::Int(i as i64)],
                                vec![],
                            )?;
                            out.push(v);
                        }
                        other => out.push(self.plain_value(other)?),
                    }
                }
                let ty = match self.tx.output.meta_value(node) {
                    Some(v) => Some(v.bind(py).get_type()),
                    // Natively inferred: torch's named results (`max(dim)`, `sort`, `topk`, ...)
                    // are the `torch.return_types` entry of the same name.
                    None => {
                        let target = match &self.tx.output.graph.node(node).kind {
                            fx::NodeKind::Call { target, .. } => {
                                target.name().rsplit('.').next().unwrap_or("").to_string()
                            }
                            _ => String::new(),
                        };
                        py.import("torch.return_types")?
                            .getattr(target.as_str())
                            .ok()
                            .and_then(|t| t.cast_into::<pyo3::types::PyType>().ok())
                    }
                };
                match ty {
                    Some(ty)
                        if !ty.is(py.get_type::<PyTuple>())
                            && !named_tuple_fields(ty.as_any()).is_empty() =>
                    {
                        Ok(Var::NamedTuple {
                            ty: ty.into_any().unbind(),
                            items: out.into(),
                        })
                    }
                    Some(ty) if ty.is(py.get_type::<pyo3::types::PyList>()) => Ok(Var::list(out)),
                    _ => Ok(Var::Tuple(out.into())),
                }
            }
            other => {
                // A Python value computed from metadata only (e.g. numel): fold it, and drop the
                // node unless it is used.
                let kind = &self.tx.output.graph.node(node).kind;
                if self.tx.output.graph.users(node).is_empty()
                    && !is_mutating(kind)
                    && !crate::passes::keeps_unused(kind)
                {
                    self.tx.output.remove_node(node);
                }
                self.plain_value(other)
            }
        }
    }

    fn plain_value(&self, m: NodeMeta) -> Result<Var, TraceError> {
        let py = self.tx.py;
        Ok(match m {
            NodeMeta::Int(i) => Var::py_const(py, i),
            NodeMeta::Float(f) => Var::py_const(py, f),
            NodeMeta::Bool(b) => Var::py_const(py, b),
            NodeMeta::None => Var::none(py),
            _ => return Err(TraceError::unsupported("a nested tuple result")),
        })
    }

    /// `obj.name` as a value (LOAD_ATTR without a call).
    pub(super) fn getattr(&mut self, obj: Var, name: &str) -> Result<Var, TraceError> {
        let py = self.tx.py;
        if let Some(v) = self.user_container_attr(&obj, name)? {
            return Ok(v);
        }
        if let Var::Function(f) = &obj {
            if let Some((_, v)) = f.attrs.borrow().iter().find(|(n, _)| n == name) {
                return Ok(v.clone());
            }
        }
        match &obj {
            Var::Tensor(t) => self.tensor_attr(t.clone(), name),
            // `g.send`: a lazy generator's method (`generators.rs::generator_send`).
            Var::Generator(_) if name == "send" => Ok(Var::Method {
                recv: Box::new(obj.clone()),
                name: name.to_string(),
            }),
            Var::Ndarray(a) => self.ndarray_attr(a.clone(), name),
            Var::Storage(t) => self.storage_attr(t, name),
            Var::Object(o) => self.object_attr(o, name),
            Var::Library(l) => {
                let l = l.clone();
                self.library_attr(&l, name)
            }
            Var::ModelOutput(o) => {
                let o = o.clone();
                self.model_output_attr(&o, name)
            }
            Var::Super { cls, obj } => {
                let (cls, obj) = (cls.clone_ref(py), (**obj).clone());
                self.super_attr(cls, obj, name)
            }
            // `cm.__enter__()` / `cm.__exit__(...)` called by hand drive the manager as `with`
            // does (`gencm.rs`).
            Var::GenCm(g) if name == "__enter__" || name == "__exit__" => Ok(Var::Method {
                recv: Box::new(Var::GenCm(g.clone())),
                name: name.to_string(),
            }),
            Var::Deque(q) if name == "maxlen" => Ok(match q.maxlen {
                Some(n) => Var::py_const(py, n as i64),
                None => Var::none(py),
            }),
            Var::Deque(_) => Ok(Var::Method {
                recv: Box::new(obj.clone()),
                name: name.to_string(),
            }),
            Var::NamedTuple { ty, items } => {
                let fields = named_tuple_fields(ty.bind(py));
                if let Some(i) = fields.iter().position(|f| f == name) {
                    if i < items.len() {
                        return Ok(items[i].clone());
                    }
                }
                // A property of a namedtuple subclass runs its getter on the traced tuple (the
                // class attribute itself is the property object).
                for k in ty.bind(py).getattr("__mro__")?.try_iter()? {
                    let raw = k?.getattr("__dict__")?.get_item(name);
                    let Ok(raw) = raw else { continue };
                    if raw.is_instance(&py.import("builtins")?.getattr("property")?)? {
                        let fget = raw.getattr("fget")?.unbind();
                        return self.call(Var::Py(fget, None), vec![obj.clone()], vec![]);
                    }
                    break;
                }
                // Methods and class attributes (`_fields`, `_replace`, a user method).
                let attr = ty
                    .bind(py)
                    .getattr(name)
                    .map_err(|e| TraceError::UserError {
                        call: format!("getattr(.., '{name}')"),
                        message: e.to_string(),
                        error: e,
                    })?;
                let types = py.import("types")?;
                if matches!(name, "_replace" | "_asdict" | "count" | "index") {
                    Ok(Var::Method {
                        recv: Box::new(obj.clone()),
                        name: name.to_string(),
                    })
                } else if attr.is_instance(&types.getattr("FunctionType")?)? {
                    Ok(Var::BoundMethod {
                        func: Box::new(Var::Py(attr.unbind(), None)),
                        self_: Box::new(obj.clone()),
                    })
                } else if attr.is_callable() {
                    Err(TraceError::unsupported(format!(
                        "method '{name}' of a {}",
                        obj.type_name(py)
                    )))
                } else {
                    self.tx.wrap(attr, None)
                }
            }
            Var::Py(o, src) => {
                if let Some(v) = self.tx.effects.attr(py, o, name) {
                    return Ok(v);
                }
                let ob = o.bind(py);
                // A user class reached with no source (`type(self)`): its attributes are state
                // (`type(self).count += 1` between calls), so they are read through the class's
                // module global and guarded like any other.
                let class_src;
                let src = match src {
                    None => {
                        class_src = super::attr_writes::class_source(py, ob)?;
                        &class_src
                    }
                    Some(_) => src,
                };
                if name == "__dict__" && self.tx.effects.has_attrs(py, o) {
                    // Its tracker would be built from the real dict, without those writes.
                    return Err(TraceError::unsupported(
                        "reading __dict__ of an object the traced code wrote attributes to",
                    ));
                }
                // Written through its `__dict__` (`self.__dict__[k] = v`, `vars(self)[k] = v`):
                // the dict's tracker holds the value, unless a data descriptor of the class
                // takes the name first.
                if !self.tx.external_dicts.is_empty() {
                    if let Ok(d) = ob.getattr("__dict__") {
                        let descriptor = match ob.get_type().getattr(name) {
                            Ok(a) => a.get_type().hasattr("__set__")?,
                            Err(_) => false,
                        };
                        if !descriptor {
                            if let Some(v) = self.tx.tracked_dict_item(&d, name)? {
                                return Ok(v);
                            }
                        }
                    }
                }
                // An object the traced code wrote to: a property must see those writes, so its
                // getter is traced rather than run on the stale object.
                if self.tx.effects.has_attrs(py, o) {
                    if let Ok(a) = o.bind(py).get_type().getattr(name) {
                        if a.is_instance(&py.import("builtins")?.getattr("property")?)? {
                            let fget = a.getattr("fget")?.unbind();
                            return self.call(Var::Py(fget, None), vec![obj.clone()], vec![]);
                        }
                        if a.get_type().hasattr("__set__")? {
                            return Err(TraceError::unsupported(format!(
                                "reading attribute '{name}' (a descriptor) of an object written to"
                            )));
                        }
                    }
                }
                let o = o.bind(py).clone();
                if is_nn_module(py, &o)? {
                    return self.module_attr(&o, src.clone(), name);
                }
                let v = match o.getattr(name) {
                    Ok(v) => v,
                    // An attribute the object lacks raises `AttributeError` in the traced code,
                    // where an `except AttributeError` may catch it (`ExitStack.push` probes
                    // `type(cb).__exit__` so), its absence guarded.
                    Err(e) if e.is_instance_of::<pyo3::exceptions::PyAttributeError>(py) => {
                        if let Some(s) = src {
                            self.tx.guards.add(
                                py,
                                s,
                                crate::guards::Check::HasAttr(name.to_string(), false),
                            );
                        }
                        let fallback = TraceError::UserError {
                            call: format!("getattr(.., '{name}')"),
                            message: e.to_string(),
                            error: e.clone_ref(py),
                        };
                        return Err(self.python_raised(e, fallback));
                    }
                    Err(e) => {
                        return Err(TraceError::UserError {
                            call: format!("getattr(.., '{name}')"),
                            message: e.to_string(),
                            error: e,
                        })
                    }
                };
                let src = if is_constant_module(&o) {
                    // No guard per read: the module's dict version covers them all, so a
                    // function replaced later (`torch.sigmoid = f`) is seen.
                    let origin = self.tx.guards.origin.clone();
                    self.tx.guards.global.module_attr(&o, name, &v, origin);
                    None
                } else {
                    src.as_ref().map(|s| s.attr(py, name))
                };
                if src.is_some() && is_builtin_method_of(py, &v, &o)? {
                    // `gen.manual_seed`: a new bound object on every read, so an identity guard
                    // on it would fail on every call. The method is the receiver's: a call folds
                    // on the real receiver (guarding its identity then), and one that breaks the
                    // graph runs on whatever receiver the next call brings.
                    return Ok(Var::Method {
                        recv: Box::new(obj.clone()),
                        name: name.to_string(),
                    });
                }
                self.bound_method_or(v, &o, obj.clone(), src)
            }
            // `d.get` read as a value (a `key=` function): the method, bound to the tracker.
            Var::List(_) | Var::Tuple(_) | Var::Dict(_) | Var::Set(_)
                if py
                    .import("builtins")?
                    .getattr(obj.type_name(py).as_str())?
                    .hasattr(name)? =>
            {
                Ok(Var::Method {
                    recv: Box::new(obj.clone()),
                    name: name.to_string(),
                })
            }
            _ => Err(TraceError::unsupported(format!(
                "attribute '{name}' of a {}",
                obj.type_name(py)
            ))),
        }
    }

    /// `obj.name` about to be called (LOAD_METHOD).
    pub(super) fn load_method(&mut self, obj: Var, name: &str) -> Result<Var, TraceError> {
        if let Some(v) = self.user_container_attr(&obj, name)? {
            return Ok(v);
        }
        match &obj {
            Var::Tensor(_)
            | Var::List(_)
            | Var::Deque(_)
            | Var::Tuple(_)
            | Var::Dict(_)
            | Var::Size(_)
            | Var::Set(_) => Ok(Var::Method {
                recv: Box::new(obj),
                name: name.to_string(),
            }),
            _ => self.getattr(obj, name),
        }
    }

    /// Attribute reads on an `nn.Module` go straight to its dicts (as `Module.__getattr__` does),
    /// so the guards and input fetches read plain dict items instead of running Python.
    fn module_attr(
        &mut self,
        m: &Bound<'_, PyAny>,
        src: Option<crate::source::Source>,
        name: &str,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // A property of the module's class (a parametrized module's `weight`, which runs its
        // parametrizations; a user's `@property`) comes before the instance dict and the
        // module's stores, as in Python: its getter is traced, as torch.compile inlines it.
        // Read at trace time, it ran once more on the compiling call than in eager, and a
        // getter with effects (spectral norm's power iteration writing its `_u`/`_v`
        // buffers) left other state than eager's. An installed package's property is still
        // read (transformers' `loss_function` logs a warning once: traced, the logging call
        // would break the graph that reading it keeps whole).
        if let Ok(a) = m.get_type().getattr(name) {
            if a.is_instance(&py.import("builtins")?.getattr("property")?)?
                && traced_property(&a.getattr("fget")?)
            {
                let fget = a.getattr("fget")?.unbind();
                let this = Var::Py(m.clone().unbind(), src);
                return self.call(Var::Py(fget, None), vec![this], vec![]);
            }
        }
        let inst_dict = m.getattr(intern!(py, "__dict__"))?;
        let inst_dict = inst_dict.cast::<PyDict>().map_err(PyErr::from)?;
        if inst_dict.get_item(name)?.is_none() {
            for store in ["_parameters", "_buffers", "_modules"] {
                if let Some(d) = inst_dict.get_item(store)? {
                    if let Some(v) = d.cast::<PyDict>().map_err(PyErr::from)?.get_item(name)? {
                        let s = src.as_ref().map(|s| {
                            s.attr(py, store)
                                .item(pyo3::types::PyString::new(py, name).into_any())
                        });
                        if v.is_none() {
                            // Guarded: another instance of the class may hold a tensor here
                            // (a `Linear` with a bias).
                            if let Some(s) = &s {
                                self.tx.guards.add(py, s, crate::guards::Check::IsNone);
                            }
                            return Ok(Var::none(py));
                        }
                        return self.tx.wrap(v, s);
                    }
                }
            }
        }
        let v = m.getattr(name).map_err(|e| TraceError::UserError {
            call: format!("getattr(.., '{name}')"),
            message: e.to_string(),
            error: e,
        })?;
        let s = src.as_ref().map(|s| s.attr(py, name));
        let this = Var::Py(m.clone().unbind(), src);
        self.bound_method_or(v, m, this, s)
    }

    /// A method bound to `obj` becomes a `BoundMethod` of the tracked `obj` (a new bound-method
    /// object is made on every attribute read, so it cannot be guarded by identity; its
    /// `__func__` is). Anything else is wrapped as read.
    fn bound_method_or(
        &mut self,
        v: Bound<'_, PyAny>,
        obj: &Bound<'_, PyAny>,
        this: Var,
        src: Option<crate::source::Source>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let v = v.unbind().into_bound(py);
        if v.is_instance(&py.import("types")?.getattr("MethodType")?)? {
            let owner = v.getattr("__self__")?;
            if owner.is(obj) {
                let func = v.getattr("__func__")?;
                let func = self.tx.wrap(func, src.map(|s| s.attr(py, "__func__")))?;
                return Ok(Var::BoundMethod {
                    func: Box::new(func),
                    self_: Box::new(this),
                });
            }
            // A classmethod read through an instance: bound to its (guarded) type, a new bound
            // object on every read, so the function is what is guarded.
            if owner.is(obj.get_type().as_any()) {
                let func = v.getattr("__func__")?;
                let func = self.tx.wrap(func, src.map(|s| s.attr(py, "__func__")))?;
                return Ok(Var::BoundMethod {
                    func: Box::new(func),
                    self_: Box::new(Var::Py(owner.unbind(), None)),
                });
            }
        }
        // A method of an immutable constant (`"a".startswith`): a new object on every read, so it
        // is not guarded itself; the receiver already is.
        if is_immutable_const(obj) && v.getattr("__self__").map(|o| o.is(obj)).unwrap_or(false) {
            return Ok(Var::Py(v.unbind(), None));
        }
        // A read-only method of a dict (subclass): a new bound object on every read, so the call
        // is made on the tracked receiver (`py_dict_method`, or folded for a constant dict).
        if matches!(this, Var::Py(..))
            && obj.is_instance_of::<PyDict>()
            && v.getattr("__self__").map(|o| o.is(obj)).unwrap_or(false)
            && super::pyobj::is_dict_read(v.getattr("__name__")?.extract::<String>()?.as_str())
        {
            let name: String = v.getattr("__name__")?.extract()?;
            return Ok(Var::Method {
                recv: Box::new(this),
                name,
            });
        }
        self.tx.wrap(v, src)
    }

    /// `x.grad` of a graph input read from a source (a parameter reached through its module):
    /// the gradient is an input of its own (`<source>.grad`), guarded like any tensor input, or
    /// `None` under an `is None` guard; a value the traced code assigned earlier (`p.grad =
    /// None`, replayed after the graph) is read back. Other tensors' gradients break the graph.
    fn tensor_grad(&mut self, t: &TensorValue) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let root = self.tx.output.alias_root(t.node);
        let (Some(src), Some(obj)) = (
            self.tx.output.source_of_input(root).cloned(),
            self.tx.output.example_input(root).map(|o| o.clone_ref(py)),
        ) else {
            return Err(TraceError::unsupported(
                "reading tensor.grad of a tensor the graph computed",
            ));
        };
        if let Some(v) = self.tx.effects.attr(py, &obj, "grad") {
            return Ok(v);
        }
        let grad = obj.bind(py).getattr(intern!(py, "grad"))?;
        self.tx.wrap(grad, Some(src.attr(py, "grad")))
    }

    fn tensor_attr(&mut self, t: TensorValue, name: &str) -> Result<Var, TraceError> {
        let py = self.tx.py;
        let meta = &t.meta;
        Ok(match name {
            // As `type(x)`: the input's own class (guarded with the tensor), else torch.Tensor.
            "__class__" => match self.type_of(&Var::Tensor(t.clone()))? {
                Some(ty) => Var::Py(ty.into_any(), None),
                None => return Err(TraceError::internal("the type of a tensor")),
            },
            "shape" => {
                let t = t.clone();
                return self.shape_of(&t);
            }
            "ndim" => Var::py_const(py, meta.ndim() as i64),
            "dtype" => {
                let d = py.import("torch")?.getattr(meta.dtype.torch_name())?;
                Var::Py(d.unbind(), None)
            }
            "device" => {
                let d = py
                    .import("torch")?
                    .getattr("device")?
                    .call1((meta.device.to_string(),))?;
                Var::Py(d.unbind(), None)
            }
            "requires_grad" => Var::py_const(py, meta.requires_grad),
            // A tensor that does not require grad is a leaf; one the graph computed with grad
            // is not. An input requiring grad may be either (a parameter, or an activation).
            "is_leaf" if !meta.requires_grad => Var::py_const(py, true),
            "is_leaf" => {
                let inputs = self.tx.output.graph.placeholders();
                match inputs.iter().position(|n| *n == t.node) {
                    None => Var::py_const(py, false),
                    // A parameter (its type is guarded with the tensor) is always a leaf.
                    Some(i) => {
                        let param = py.import("torch.nn")?.getattr("Parameter")?;
                        if !self.tx.output.example_inputs[i]
                            .bind(py)
                            .get_type()
                            .is(&param)
                        {
                            return Err(TraceError::unsupported(
                                "x.is_leaf of an input that requires grad",
                            ));
                        }
                        Var::py_const(py, true)
                    }
                }
            }
            "is_cuda" => Var::py_const(py, meta.device.kind == "cuda"),
            "is_cpu" => Var::py_const(py, meta.device.kind == "cpu"),
            "is_meta" => Var::py_const(py, meta.device.kind == "meta"),
            // Traced tensors are dense and strided (tensor_meta_of refuses anything else).
            "is_nested" | "is_sparse" | "is_sparse_csr" | "is_quantized" | "is_mkldnn" => {
                Var::py_const(py, false)
            }
            "layout" => Var::Py(py.import("torch")?.getattr("strided")?.unbind(), None),
            // `H`/`mH` of a real tensor are `T`/`mT` (no conjugation): spectral norm's power
            // iteration reads `weight_mat.H`.
            "T" | "mT" | "H" | "mH" => {
                let n = meta.ndim() as i64;
                let conjugate = matches!(name, "H" | "mH");
                if conjugate && (meta.dtype.is_complex() || (name == "H" && n != 2)) {
                    return Err(TraceError::unsupported(format!(
                        "tensor.{name} of a complex tensor or of a tensor of {n} dims"
                    )));
                }
                let dims: Vec<Arg> = if name == "T" || name == "H" {
                    (0..n).rev().map(Arg::Int).collect()
                } else {
                    if n < 2 {
                        return Err(TraceError::unsupported(format!(
                            "{name} of a tensor with fewer than 2 dims"
                        )));
                    }
                    let mut d: Vec<Arg> = (0..n).map(Arg::Int).collect();
                    d.swap((n - 1) as usize, (n - 2) as usize);
                    d
                };
                self.graph_call(
                    "permute",
                    Target::Method("permute".into()),
                    None,
                    vec![Arg::Node(t.node), Arg::Tuple(dims)],
                    vec![],
                )?
            }
            "grad" => return self.tensor_grad(&t),
            // `x.real` of a real tensor is `x` itself; of a complex one, and `x.imag`, the view
            // `torch.real(x)`/`torch.imag(x)` returns (as torch.compile traces them; the
            // attribute broke the graph).
            "real" if !meta.dtype.is_complex() => Var::Tensor(t),
            "real" | "imag" => {
                let f = py.import("torch")?.getattr(name)?;
                return self.call_py(&f, None, vec![Var::Tensor(t)], vec![]);
            }
            // `t.data` is eager's own attribute, read per call by a graph node.
            "data" => {
                let f = py.import("torchferro._data")?.getattr("data")?;
                self.graph_call(
                    "data",
                    Target::Function(crate::output::DATA_READ_TARGET.into()),
                    Some(&f),
                    vec![Arg::Node(t.node)],
                    vec![],
                )?
            }
            "grad_fn" | "_version" => {
                return Err(TraceError::unsupported(format!("reading tensor.{name}")));
            }
            _ => {
                let torch_tensor = py.import("torch")?.getattr("Tensor")?;
                let attr = torch_tensor
                    .getattr(name)
                    .map_err(|_| TraceError::unsupported(format!("tensor attribute '{name}'")))?;
                if attr.is_callable() {
                    Var::Method {
                        recv: Box::new(Var::Tensor(t)),
                        name: name.to_string(),
                    }
                } else {
                    return Err(TraceError::unsupported(format!(
                        "tensor attribute '{name}'"
                    )));
                }
            }
        })
    }
}

pub fn is_mutating(kind: &fx::NodeKind) -> bool {
    match kind {
        fx::NodeKind::Call { target, kwargs, .. } => fx::passes::is_mutating(target, kwargs),
        _ => false,
    }
}

/// Whether `v` is a builtin method bound to the instance `obj` (not a module's function, not a
/// class's classmethod: those are read from a dict that holds them, or guarded with their
/// owner).
fn is_builtin_method_of(
    py: Python<'_>,
    v: &Bound<'_, PyAny>,
    obj: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    if obj.cast::<pyo3::types::PyModule>().is_ok() || obj.is_instance_of::<pyo3::types::PyType>() {
        return Ok(false);
    }
    if !v.is_instance(&py.import("types")?.getattr("BuiltinMethodType")?)? {
        return Ok(false);
    }
    Ok(v.getattr("__self__").map(|s| s.is(obj)).unwrap_or(false))
}

/// Trackers that stand for a Python container (whose type is a builtin container type or a
/// subclass of one).
fn is_tracked_container(v: &Var) -> bool {
    matches!(
        v,
        Var::List(_)
            | Var::Tuple(_)
            | Var::Dict(_)
            | Var::Deque(_)
            | Var::Set(_)
            | Var::NamedTuple { .. }
            | Var::Size(_)
            | Var::Slice(_)
    )
}

/// Whether a module class property's getter is traced where it is read (`module_attr`):
/// the user's code and torch's parametrizations (`super::calls::nn_utils_traced`), not an
/// installed package's code.
fn traced_property(fget: &Bound<'_, PyAny>) -> bool {
    let file: String = fget
        .getattr("__code__")
        .and_then(|c| c.getattr("co_filename"))
        .and_then(|f| f.extract())
        .unwrap_or_default();
    !file.is_empty()
        && (super::calls::nn_utils_traced(&file)
            || !(file.contains("/site-packages/") || file.contains("/dist-packages/")))
}
