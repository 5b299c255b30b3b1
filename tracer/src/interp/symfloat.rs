//! Python floats computed from symbolic sizes (dynamic shapes): `n ** 0.5`, `n ** -0.5`,
//! `a / b` of ints, `math.sqrt(n)` and float arithmetic on such values with Python numbers
//! and with each other (`float(n) * 2.0 + 1.5`) are graph values ([`Var::SymFloat`]),
//! computed on every call by `operator.*` / `torch._sym_sqrt` nodes, as torch 2.11 keeps them
//! `SymFloat` expressions (`specialize_float=False`). A torch op takes one as a scalar
//! (`x * d ** -0.5`, `torch.full((n,), n / 2)`), so the graph serves every size.
//!
//! An operation Python could raise on for some admitted size (a divisor not proved non-zero,
//! a power of a base not proved positive, the square root of a value not proved non-negative)
//! is symbolic where its condition holds at the hints, the condition guarded (`s0 - 1 != 0`,
//! `L['n'] > 0`): a call where it fails traces again, and that trace specializes the operands
//! and lets Python compute it, raising where eager raises. A comparison is decided at the
//! hints and guarded (`ShapeEnv::decide_float`); two floats that are ints' values
//! (`float(n) == 4`) compare as the ints. `int()`, `math.floor`/`ceil`/`trunc` of a quotient
//! of ints (`math.ceil(n / 4)`) are the ints' floor division, as torch's `FloorToInt` /
//! `CeilToInt`.

use pyo3::prelude::*;

use fx::{Arg, FloatExpr, FloatOp, NodeMeta, RelOp, SymExpr, Target};

use super::vars::Var;
use super::Frame;
use crate::error::TraceError;

/// A float operand: a symbolic float, a symbolic int (its value as a float), a Python int or
/// float constant. `None` for anything else (a bool too: `True / n` is rare enough to refuse).
fn float_operand(py: Python<'_>, v: &Var) -> Option<FloatExpr> {
    match v {
        Var::SymFloat(_, f) => Some(f.clone()),
        Var::SymInt(_, e) => Some(FloatExpr::of_int(e.clone())),
        Var::Py(o, _) => {
            let o = o.bind(py);
            if o.is_instance_of::<pyo3::types::PyBool>() {
                return None;
            }
            if o.is_instance_of::<pyo3::types::PyInt>() {
                // An int too large for a float exactly stays Python's business.
                let i = o.extract::<i64>().ok()?;
                return (i.unsigned_abs() < (1u64 << 53)).then_some(FloatExpr::Const(i as f64));
            }
            if o.is_exact_instance_of::<pyo3::types::PyFloat>() {
                return o.extract::<f64>().ok().map(FloatExpr::Const);
            }
            None
        }
        _ => None,
    }
}

/// Every argument as a float operand, or `None` where one is not a number.
fn float_operands(py: Python<'_>, args: &[Var]) -> Option<Vec<FloatExpr>> {
    args.iter().map(|a| float_operand(py, a)).collect()
}

/// The int a float operand is the value of: `float(e)`, or an integral constant.
fn int_value(f: &FloatExpr) -> Option<SymExpr> {
    match f {
        FloatExpr::Int(e) => Some(e.clone()),
        FloatExpr::Const(c) if c.fract() == 0.0 && c.abs() < 9.0e15 => {
            Some(SymExpr::constant(*c as i64))
        }
        _ => None,
    }
}

impl Frame<'_, '_> {
    /// The symbolic float `f`, computed by a new `target(args)` node (a constant folds to a
    /// plain float).
    fn float_node(
        &mut self,
        name: &str,
        target: Target,
        callable: &Bound<'_, PyAny>,
        args: Vec<Arg>,
        f: FloatExpr,
    ) -> Result<Var, TraceError> {
        let f = self.tx.output.shapes.canon_float(&f);
        if let Some(c) = f.as_const() {
            return Ok(Var::py_const(self.tx.py, c));
        }
        let meta = NodeMeta::SymFloat(f.clone());
        let node = self.number_node(name, target, Some(callable), args, meta);
        Ok(Var::SymFloat(node, f))
    }

    /// `operator.<name>` with Python float semantics where an operand is a symbolic float,
    /// or a true division or a negative power of symbolic ints: a node, or for a comparison
    /// the answer at the hints, guarded. `None`: not such an operation, or one Python could
    /// raise on for some size (the caller specializes).
    pub(super) fn sym_float_operator(
        &mut self,
        name: &str,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if !args
            .iter()
            .any(|a| matches!(a, Var::SymInt(..) | Var::SymFloat(..)))
        {
            return Ok(None);
        }
        let Some(ops) = float_operands(py, args) else {
            return Ok(None);
        };
        let any_float = args.iter().any(|a| match a {
            Var::SymFloat(..) => true,
            Var::Py(o, _) => o.bind(py).is_exact_instance_of::<pyo3::types::PyFloat>(),
            _ => false,
        });
        let op = name
            .strip_prefix('i')
            .filter(|p| {
                matches!(
                    *p,
                    "add" | "sub" | "mul" | "truediv" | "pow" | "floordiv" | "mod"
                )
            })
            .unwrap_or(name);
        let rel = RelOp::from_operator(op);
        if let (Some(rel), [a, b]) = (rel, ops.as_slice()) {
            if !any_float {
                return Ok(None);
            }
            if let (Some(x), Some(y)) = (int_value(a), int_value(b)) {
                // Ints' values: the ints' comparison, undecided until read (`sym_operator`).
                return self.sym_int_compare(rel, &x, &y).map(Some);
            }
            let origin = self.tx.guards.origin.clone();
            let answer = self
                .tx
                .output
                .shapes
                .decide_float(a, rel, b, origin)
                .ok_or_else(|| TraceError::unsupported("a comparison of symbolic floats"))?;
            return Ok(Some(Var::py_const(py, answer)));
        }
        let shapes = &self.tx.output.shapes;
        let min = |k: u32| shapes.symbol_min(k);
        let ops: Vec<FloatExpr> = ops.iter().map(|f| shapes.canon_float(f)).collect();
        let f = match (op, ops.as_slice()) {
            ("neg", [a]) if any_float => FloatExpr::negated(a.clone()),
            ("pos", [_]) if any_float => return Ok(Some(args[0].clone())),
            ("add", [a, b]) if any_float => FloatExpr::binary(FloatOp::Add, a.clone(), b.clone()),
            ("sub", [a, b]) if any_float => FloatExpr::binary(FloatOp::Sub, a.clone(), b.clone()),
            ("mul", [a, b]) if any_float => FloatExpr::binary(FloatOp::Mul, a.clone(), b.clone()),
            // A float `//` or `%` (`n / 2 // 1`) is a float, as the true division; int ones
            // are `sym_operator`'s.
            ("truediv", [a, b]) | ("floordiv" | "mod", [a, b]) if op == "truediv" || any_float => {
                let proved = b.nonzero(&min);
                let (a, b) = (a.clone(), b.clone());
                if !proved && !self.guard_holds(&b, RelOp::Ne, 0.0) {
                    return Ok(None);
                }
                if !self.guard_exact(&a) || !self.guard_exact(&b) {
                    return Ok(None);
                }
                let fop = match op {
                    "truediv" => FloatOp::Div,
                    "floordiv" => FloatOp::FloorDiv,
                    _ => FloatOp::Mod,
                };
                FloatExpr::binary(fop, a, b)
            }
            // An int power is an int unless the exponent is negative (`n ** -1`).
            ("pow", [a, b]) if any_float || b.as_const().is_some_and(|c| c < 0.0) => {
                let proved = pow_defined(a, b, &min);
                let (a, b) = (a.clone(), b.clone());
                if !proved && !self.guard_holds(&a, RelOp::Gt, 0.0) {
                    return Ok(None);
                }
                FloatExpr::binary(FloatOp::Pow, a, b)
            }
            _ => return Ok(None),
        };
        let callable = py.import("operator")?.getattr(op)?;
        let gargs = args
            .iter()
            .map(|a| a.to_arg(py))
            .collect::<Result<Vec<_>, _>>()?;
        self.float_node(
            op,
            Target::Function(format!("operator.{op}")),
            &callable,
            gargs,
            f,
        )
        .map(Some)
    }

    /// `math.sqrt(v)` of a symbolic int or float proved non-negative: a `torch._sym_sqrt`
    /// node (torch.compile's spelling). `None`: not such a value (the caller specializes).
    pub(super) fn sym_sqrt(&mut self, v: &Var) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let f = match v {
            Var::SymInt(_, e) => FloatExpr::of_int(e.clone()),
            Var::SymFloat(_, f) => f.clone(),
            _ => return Ok(None),
        };
        let shapes = &self.tx.output.shapes;
        let f = shapes.canon_float(&f);
        if f.sign(&|k| shapes.symbol_min(k)) == fx::sym_float::Sign::Unknown
            && !self.guard_holds(&f, RelOp::Ge, 0.0)
        {
            return Ok(None);
        }
        let callable = py.import("torch")?.getattr("_sym_sqrt")?;
        let arg = v.to_arg(py)?;
        self.float_node(
            "_sym_sqrt",
            Target::Function("torch._sym_sqrt".into()),
            &callable,
            vec![arg],
            FloatExpr::sqrt(f),
        )
        .map(Some)
    }
}

impl Frame<'_, '_> {
    /// `max(a, b, ...)` / `min(...)` (`is_max`) of numbers, one a symbolic float
    /// (`max(n / 2, 3)`; `sym_min_max` hands them over): a `torch.sym_max` / `sym_min` node
    /// per pair, a float as torch's (which makes the result a float where an int operand
    /// wins, as torch.compile does; eager would give the int). `None`: an operand that is not
    /// a number.
    pub(super) fn sym_float_min_max(
        &mut self,
        is_max: bool,
        args: &[Var],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let (op, name) = if is_max {
            (FloatOp::Max, "max")
        } else {
            (FloatOp::Min, "min")
        };
        let Some(ops) = float_operands(py, args) else {
            return Ok(None);
        };
        let callable = py.import("torch")?.getattr(format!("sym_{name}"))?;
        let mut acc = (args[0].clone(), self.tx.output.shapes.canon_float(&ops[0]));
        for (v, e) in args.iter().zip(&ops).skip(1) {
            let e = self.tx.output.shapes.canon_float(e);
            let f = FloatExpr::binary(op, acc.1.clone(), e);
            let gargs = vec![acc.0.to_arg(py)?, v.to_arg(py)?];
            let target = Target::Function(format!("torch.sym_{name}"));
            let node =
                self.float_node(&format!("sym_{name}"), target, &callable, gargs, f.clone())?;
            acc = (node, f);
        }
        Ok(Some(acc.0))
    }

    /// `abs(v)` of a symbolic float or int: an `operator.abs` node (torch's `Abs`); an int's
    /// is `max(e, -e)` (the int atom; `e` itself where its sign is known). `None`: not a
    /// symbolic number.
    pub(super) fn sym_abs(&mut self, v: &Var) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if let Var::SymInt(_, e) = v {
            let shapes = &self.tx.output.shapes;
            let e = shapes.canon(e);
            let r = e.max_with(&e.neg(), &|k| shapes.symbol_min(k));
            let callable = py.import("operator")?.getattr("abs")?;
            let arg = v.to_arg(py)?;
            let target = Target::Function("operator.abs".into());
            return self
                .sym_node("abs", target, Some(&callable), vec![arg], r)
                .map(Some);
        }
        let Var::SymFloat(_, f) = v else {
            return Ok(None);
        };
        let f = FloatExpr::abs(self.tx.output.shapes.canon_float(f));
        let callable = py.import("operator")?.getattr("abs")?;
        let arg = v.to_arg(py)?;
        self.float_node(
            "abs",
            Target::Function("operator.abs".into()),
            &callable,
            vec![arg],
            f,
        )
        .map(Some)
    }

    /// Whether `f op c` holds at the hints; where it does it is guarded (an int relation
    /// where `f` is an int's value and `c` integral), else nothing is.
    fn guard_holds(&mut self, f: &FloatExpr, op: RelOp, c: f64) -> bool {
        let rel = fx::FloatRelation::new(f.clone(), op, FloatExpr::Const(c));
        let shapes = &mut self.tx.output.shapes;
        if rel.eval(&|k| shapes.symbols[k as usize].hint) != Some(true) {
            return false;
        }
        let origin = self.tx.guards.origin.clone();
        match f.as_int() {
            Some(e) if c.fract() == 0.0 => {
                shapes.decide(e, op, &SymExpr::constant(c as i64), origin) == Some(true)
            }
            _ => shapes.decide_float(f, op, &rel.rhs, origin) == Some(true),
        }
    }

    /// Python divides two ints exactly, then rounds once; the kernel's and the guards' float
    /// quotient rounds each int first. The two agree below 2**53, which sizes always are; an
    /// int argument's expression (a symbol of no lower bound) is guarded to stay there
    /// (`false`: outside at the hints, the caller specializes).
    fn guard_exact(&mut self, f: &FloatExpr) -> bool {
        let Some(e) = f.as_int() else {
            return true;
        };
        let shapes = &self.tx.output.shapes;
        if e.symbols().iter().all(|&k| shapes.symbol_min(k) >= 0) {
            return true;
        }
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2**53
        self.guard_holds(f, RelOp::Lt, EXACT) && self.guard_holds(f, RelOp::Gt, -EXACT)
    }

    /// `int(v)` / `math.trunc(v)` (`Round::Trunc`), `math.floor(v)`, `math.ceil(v)`,
    /// `round(v)` of a symbolic float: the int itself for `float(e)`; for a quotient of ints
    /// `a / b` with `b` known positive, the ints' floor division (exact for ints below 2**53:
    /// the float quotient is then never rounded across an integer), `a` known non-negative
    /// for a truncation; otherwise the float's rounding as an int atom
    /// (`fx::sym::Atom::FloatToInt`), computed per call. `None`: not a symbolic float.
    pub(super) fn sym_float_to_int(
        &mut self,
        f_name: &str,
        callable: &Bound<'_, PyAny>,
        v: &Var,
        round: Round,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let Var::SymFloat(_, f) = v else {
            return Ok(None);
        };
        let f = self.tx.output.shapes.canon_float(f);
        let quotient = match &f {
            FloatExpr::Bin(FloatOp::Div, a, b) => int_value(a).zip(int_value(b)),
            _ => None,
        };
        let e = match (&f, quotient) {
            (FloatExpr::Int(e), _) => e.clone(),
            (_, Some((a, b))) => {
                let fa = FloatExpr::Int(a.clone());
                let fb = FloatExpr::Int(b.clone());
                let shapes = &self.tx.output.shapes;
                let min = |k: u32| shapes.symbol_min(k);
                let b_pos = fb.sign(&min) == fx::sym_float::Sign::Positive;
                let a_nonneg = fa.sign(&min) != fx::sym_float::Sign::Unknown;
                if !self.guard_exact(&fa) || !self.guard_exact(&fb) {
                    return Ok(None);
                }
                // A divisor not known positive, a truncation of a dividend not known
                // non-negative (`int((3 - n) / 2)`): the float's rounding, unguarded.
                let as_ints = b_pos && (round != Round::Trunc || a_nonneg);
                match round {
                    _ if !as_ints => SymExpr::of_float(round.how(), f.clone()),
                    Round::Floor => a.floordiv(&b),
                    Round::Ceil => a.neg().floordiv(&b).neg(),
                    Round::Trunc => a.floordiv(&b),
                    Round::Half => SymExpr::of_float(round.how(), f.clone()),
                }
            }
            // Any other float (`round(n / 2)`, `math.floor(n ** 0.5)`): torch's `RoundToInt`,
            // `FloorToInt`, ...; Python raises on no finite float a size expression makes
            // but an overflowing power (left: the kernel's `inf`).
            _ => SymExpr::of_float(round.how(), f.clone()),
        };
        let arg = v.to_arg(py)?;
        let target = Target::Function(f_name.to_string());
        let node_name = f_name.trim_start_matches("math.");
        self.sym_node(node_name, target, Some(callable), vec![arg], e)
            .map(Some)
    }
}

/// How a float becomes an int.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Round {
    Trunc,
    Floor,
    Ceil,
    /// `round(x)`: half to even.
    Half,
}

impl Round {
    fn how(self) -> fx::IntRound {
        match self {
            Round::Trunc => fx::IntRound::Trunc,
            Round::Floor => fx::IntRound::Floor,
            Round::Ceil => fx::IntRound::Ceil,
            Round::Half => fx::IntRound::Round,
        }
    }
}

/// Whether Python's `a ** b` has a float value for every admitted size: a positive base, or
/// a non-negative one with a non-negative constant exponent.
fn pow_defined(a: &FloatExpr, b: &FloatExpr, min: &dyn Fn(u32) -> i64) -> bool {
    use fx::sym_float::Sign;
    match a.sign(min) {
        Sign::Positive => true,
        Sign::NonNegative => b.as_const().is_some_and(|c| c >= 0.0),
        Sign::Unknown => false,
    }
}
