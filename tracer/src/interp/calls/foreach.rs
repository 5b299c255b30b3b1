//! `torch._foreach_*` list ops, written out per item (`fx::ops::foreach`): the graph holds the
//! per-tensor ops, which functionalization, the derivative rules and the inductor already know;
//! the inductor fuses each tensor's chain of updates (an optimizer's whole step for one
//! parameter) into one kernel.
//!
//! Also here: `addcmul` / `addcdiv` whose `value` is a 0-d tensor (torch's op takes a number
//! there; an optimizer traced with its step counter as a tensor computes such values), written
//! as `input + value * (t1 op t2)`, the op's own formula.

use pyo3::prelude::*;

use crate::error::TraceError;
use crate::interp::vars::Var;
use crate::interp::Frame;
use crate::output::TensorValue;

/// Item `i` of a list operand, or the operand itself when it goes to every item.
fn item(v: &Var, i: usize) -> Result<Var, TraceError> {
    match v {
        Var::List(l) => l
            .borrow()
            .get(i)
            .cloned()
            .ok_or_else(|| TraceError::unsupported("foreach lists of different lengths")),
        Var::Tuple(items) => items
            .get(i)
            .cloned()
            .ok_or_else(|| TraceError::unsupported("foreach lists of different lengths")),
        other => Ok(other.clone()),
    }
}

fn list_len(v: &Var) -> Option<usize> {
    match v {
        Var::List(l) => Some(l.borrow().len()),
        Var::Tuple(items) => Some(items.len()),
        _ => None,
    }
}

impl Frame<'_, '_> {
    /// `torch._foreach_<op>(...)` (module `torch`), written out per item; `None` for any other
    /// call or an op the catalog does not list.
    pub(super) fn foreach_call(
        &mut self,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        if module != "torch" && module != "torch._C._VariableFunctions" {
            return Ok(None);
        }
        let Some((op, inplace)) = fx::ops::foreach::lookup(name) else {
            return Ok(None);
        };
        let py = self.tx.py;
        if args.len() < op.operands {
            return Err(TraceError::unsupported(format!(
                "{name} with {} positional arguments",
                args.len()
            )));
        }
        // The item count: the first list operand's (`_foreach_pow(2.0, xs)` starts with a number).
        let n = args[..op.operands]
            .iter()
            .find_map(list_len)
            .ok_or_else(|| TraceError::unsupported(format!("{name} without a list operand")))?;
        // Every list operand has that length, as torch checks.
        for a in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
            if list_len(a).is_some_and(|m| m != n) {
                return Err(TraceError::unsupported(format!(
                    "{name} over lists of different lengths"
                )));
            }
        }
        let method = if inplace {
            format!("{}_", op.name)
        } else {
            op.name.to_string()
        };
        let mut results = Vec::with_capacity(n);
        for i in 0..n {
            let mut a: Vec<Var> = Vec::with_capacity(args.len());
            for (k, v) in args.iter().enumerate() {
                let v = match v {
                    // One value per item held in a 1-D tensor (`_foreach_addcdiv_`'s `scalars`).
                    Var::Tensor(t) if op.scalars_at == Some(k) && t.meta.sizes.len() == 1 => {
                        let (dim, idx) = (Var::py_const(py, 0i64), Var::py_const(py, i as i64));
                        self.tensor_method(t.clone(), "select", vec![dim, idx], vec![])?
                    }
                    other => item(other, i)?,
                };
                a.push(v);
            }
            let kw = kwargs
                .iter()
                .map(|(k, v)| Ok((k.clone(), item(v, i)?)))
                .collect::<Result<Vec<_>, TraceError>>()?;
            // `scalars` passed positionally is the op's `value`.
            let (mut a, mut kw) = (a, kw);
            if a.len() > op.operands {
                if let Some(at) = op.scalars_at {
                    if a.len() == at + 1 {
                        let v = a.pop().unwrap_or(Var::Null);
                        kw.push(("value".into(), v));
                    }
                }
            }
            let first = a.remove(0);
            let r = match first {
                Var::Tensor(t) => match self.pointwise_form(&t, op.name, inplace, &a, &kw)? {
                    Some(r) => r,
                    None => self.tensor_method(t, &method, a, kw)?,
                },
                // `_foreach_pow(scalar, xs)`: `torch.pow(scalar, x)`.
                other if !inplace && op.name == "pow" => {
                    let f = py.import("torch")?.getattr("pow")?;
                    let mut all = vec![other];
                    all.extend(a);
                    self.call_py(&f, None, all, kw)?
                }
                other => {
                    return Err(TraceError::unsupported(format!(
                        "{name} over a {}",
                        other.type_name(py)
                    )))
                }
            };
            results.push(r);
        }
        if inplace {
            // torch returns the written list itself.
            return Ok(Some(args[0].clone()));
        }
        Ok(Some(Var::Tuple(results.into())))
    }

    /// An item of `lerp` / `addcmul` / `addcdiv` with a number weight or value, written with
    /// the ops of torch's own kernel formula (`x + w * (end - x)` for `w < 0.5`; `x + v * t1 * t2`,
    /// `x + v * t1 / t2`), which the inductor fuses with the rest of the update (it has no
    /// lowering of the three ops); `None` to keep the op.
    fn pointwise_form(
        &mut self,
        t: &TensorValue,
        name: &str,
        inplace: bool,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let number = |v: &Var| -> Option<f64> {
            match v {
                Var::Py(o, _) => {
                    let o = o.bind(py);
                    if o.is_instance_of::<pyo3::types::PyBool>() {
                        return None;
                    }
                    o.extract::<f64>().ok()
                }
                _ => None,
            }
        };
        let add = if inplace { "add_" } else { "add" };
        match (name, args, kwargs) {
            ("lerp", [Var::Tensor(end), w], []) => {
                let Some(w) = number(w).filter(|w| *w < 0.5) else {
                    return Ok(None);
                };
                let d =
                    self.tensor_method(end.clone(), "sub", vec![Var::Tensor(t.clone())], vec![])?;
                let Var::Tensor(d) = d else {
                    return Ok(None);
                };
                let s = self.tensor_method(d, "mul", vec![Var::py_const(py, w)], vec![])?;
                Ok(Some(self.tensor_method(t.clone(), add, vec![s], vec![])?))
            }
            ("addcmul" | "addcdiv", [Var::Tensor(t1), t2 @ Var::Tensor(_)], kw) => {
                let v = match kw {
                    [] => 1.0,
                    [(k, v)] if k == "value" => match number(v) {
                        Some(v) => v,
                        None => return Ok(None),
                    },
                    _ => return Ok(None),
                };
                let s =
                    self.tensor_method(t1.clone(), "mul", vec![Var::py_const(py, v)], vec![])?;
                let Var::Tensor(s) = s else {
                    return Ok(None);
                };
                let between = if name == "addcmul" { "mul" } else { "div" };
                let q = self.tensor_method(s, between, vec![t2.clone()], vec![])?;
                Ok(Some(self.tensor_method(t.clone(), add, vec![q], vec![])?))
            }
            _ => Ok(None),
        }
    }

    /// `x.addcmul(t1, t2, value=v)` / `addcdiv` (and the in-place forms) with `v` a tensor:
    /// `x + v * (t1 * t2)` / `x + v * (t1 / t2)`; `None` for any other call.
    pub(super) fn addc_with_tensor_value(
        &mut self,
        t: &TensorValue,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let (base, inplace) = match name {
            "addcmul" | "addcdiv" => (name, false),
            "addcmul_" | "addcdiv_" => (&name[..name.len() - 1], true),
            _ => return Ok(None),
        };
        let value = match (args.get(2), kwargs.iter().find(|(k, _)| k == "value")) {
            (Some(v @ Var::Tensor(_)), None) if args.len() == 3 => v.clone(),
            (None, Some((_, v @ Var::Tensor(_)))) if args.len() == 2 && kwargs.len() == 1 => {
                v.clone()
            }
            _ => return Ok(None),
        };
        let (Some(Var::Tensor(t1)), Some(t2)) = (args.first(), args.get(1)) else {
            return Ok(None);
        };
        let between = if base == "addcmul" { "mul" } else { "div" };
        let q = self.tensor_method(t1.clone(), between, vec![t2.clone()], vec![])?;
        let Var::Tensor(q) = q else {
            return Err(TraceError::internal("a product of tensors"));
        };
        let scaled = self.tensor_method(q, "mul", vec![value], vec![])?;
        let add = if inplace { "add_" } else { "add" };
        Ok(Some(self.tensor_method(
            t.clone(),
            add,
            vec![scaled],
            vec![],
        )?))
    }
}
