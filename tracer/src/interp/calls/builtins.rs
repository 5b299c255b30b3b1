//! Builtins (`len`, `getattr`, `isinstance`, `zip`, ...) over tracked values, folded at trace time.

use pyo3::prelude::*;

use crate::error::TraceError;

use crate::interp::vars::Var;
use crate::interp::Frame;

/// Builtins that are pure functions of their (known) arguments.
pub(super) const FOLDABLE_BUILTINS: &[&str] = &[
    "len",
    "abs",
    "min",
    "max",
    "sum",
    "int",
    "float",
    "bool",
    "str",
    "round",
    "isinstance",
    "issubclass",
    "range",
    "tuple",
    "list",
    "divmod",
    "pow",
    "type",
    "hasattr",
    "callable",
    "repr",
    "all",
    "any",
    "sorted",
    "reversed",
    "enumerate",
    "zip",
    "dict",
    "frozenset",
    "set",
    "hash",
    "chr",
    "ord",
];

impl Frame<'_, '_> {
    pub(super) fn call_builtin(
        &mut self,
        f: &Bound<'_, PyAny>,
        name: &str,
        args: Vec<Var>,
        kwargs: Vec<(String, Var)>,
    ) -> Result<Var, TraceError> {
        let py = self.tx.py;
        // Module containers iterate as their children (with sources), so builtins see a list.
        let args: Vec<Var> = if matches!(
            name,
            "enumerate" | "zip" | "reversed" | "list" | "tuple" | "len"
        ) {
            let mut out = Vec::new();
            for a in args {
                match &a {
                    Var::Py(o, Some(src))
                        if crate::interp::ops::is_nn_module(py, o.bind(py))? && name != "len" =>
                    {
                        let items = self.module_children(o.bind(py).clone(), src.clone())?;
                        out.push(Var::list(items));
                    }
                    _ => out.push(a),
                }
            }
            out
        } else {
            args
        };
        match (name, args.as_slice()) {
            ("getattr", [obj, name]) | ("getattr", [obj, name, _]) => {
                let n: String = name
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("getattr with a computed name"))?
                    .extract()?;
                return match self.getattr(obj.clone(), &n) {
                    Ok(v) => Ok(v),
                    Err(e) if args.len() == 3 && has_no_attr(py, obj, &n) => {
                        let _ = e;
                        Ok(args[2].clone())
                    }
                    Err(e) => Err(e),
                };
            }
            ("hasattr", [obj, name]) => {
                let n: String = name
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("hasattr with a computed name"))?
                    .extract()?;
                if let Var::Tensor(_) = obj {
                    let t = py.import("torch")?.getattr("Tensor")?;
                    return Ok(Var::py_const(py, t.hasattr(n.as_str())?));
                }
                return Ok(Var::py_const(py, !has_no_attr(py, obj, &n)));
            }
            ("len", [Var::Tensor(t)]) => {
                let n = t
                    .meta
                    .sizes
                    .first()
                    .and_then(|d| d.known())
                    .ok_or_else(|| TraceError::unsupported("len() of a 0-d tensor"))?;
                return Ok(Var::py_const(py, n));
            }
            ("len", [v]) if v.items(py).is_some() => {
                return Ok(Var::py_const(py, v.items(py).unwrap().len() as i64))
            }
            ("isinstance", [Var::Tensor(_), cls]) => {
                let tensor = py.import("torch")?.getattr("Tensor")?;
                let cls = cls
                    .as_py(py)
                    .ok_or_else(|| TraceError::unsupported("isinstance with an unknown class"))?;
                let r = py
                    .import("builtins")?
                    .getattr("issubclass")?
                    .call1((tensor, cls))?;
                return self.tx.wrap(r, None);
            }
            ("tuple", [v]) | ("list", [v]) if v.items(py).is_some() => {
                let items = v.items(py).unwrap();
                return Ok(if name == "tuple" {
                    Var::Tuple(items)
                } else {
                    Var::list(items)
                });
            }
            ("reversed", [v]) if kwargs.is_empty() && v.items(py).is_some() => {
                return Ok(Var::list(v.items(py).unwrap().into_iter().rev().collect()));
            }
            ("enumerate", [v]) | ("enumerate", [v, _]) if v.items(py).is_some() => {
                let start = args
                    .get(1)
                    .or_else(|| kwargs.iter().find(|(k, _)| k == "start").map(|(_, v)| v))
                    .map(|s| {
                        s.as_py(py)
                            .ok_or_else(|| TraceError::unsupported("enumerate with a tensor start"))
                    })
                    .transpose()?
                    .map(|s| s.extract::<i64>())
                    .transpose()?
                    .unwrap_or(0);
                let items = v.items(py).unwrap();
                return Ok(Var::list(
                    items
                        .into_iter()
                        .enumerate()
                        .map(|(i, x)| Var::Tuple(vec![Var::py_const(py, start + i as i64), x]))
                        .collect(),
                ));
            }
            ("zip", seqs) if !seqs.is_empty() && seqs.iter().all(|s| s.items(py).is_some()) => {
                let lists: Vec<Vec<Var>> = seqs.iter().map(|s| s.items(py).unwrap()).collect();
                let n = lists.iter().map(|l| l.len()).min().unwrap_or(0);
                return Ok(Var::list(
                    (0..n)
                        .map(|i| Var::Tuple(lists.iter().map(|l| l[i].clone()).collect()))
                        .collect(),
                ));
            }
            _ => {}
        }
        if let Some(r) = self.fold(f, &args, &kwargs)? {
            return Ok(r);
        }
        Err(TraceError::unsupported(format!(
            "builtin {name}() on these arguments"
        )))
    }
}

/// Whether reading `name` from a known object fails (for `getattr` defaults and `hasattr`).
fn has_no_attr(py: Python<'_>, obj: &Var, name: &str) -> bool {
    match obj.as_py(py) {
        Some(o) => !o.hasattr(name).unwrap_or(false),
        None => false,
    }
}
