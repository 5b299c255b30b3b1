//! Binding a call's arguments to a Python signature, as torch's argument parser does: positional
//! parameters in order, then keywords; parameters after `*` are keyword-only. An argument the
//! signature does not know is not an error here: the op falls back to the host, which will
//! either accept it or raise torch's own error.

use fx::Arg;

/// Why an op was not lowered; `Fatal` makes the whole graph unsupported.
#[derive(Debug)]
pub enum Reject {
    Fallback(String),
    Fatal(crate::InductorError),
}

pub type LResult<T> = Result<T, Reject>;

pub fn fallback<T>(msg: impl Into<String>) -> LResult<T> {
    Err(Reject::Fallback(msg.into()))
}

/// Arguments bound to parameter names.
pub struct Bound<'a> {
    names: Vec<&'static str>,
    vals: Vec<Option<&'a Arg>>,
}

/// Binds `args`/`kwargs` to `sig` (parameter names; `"*"` starts keyword-only parameters)
/// through the catalog's one binder ([`fx::ops::bind`]).
pub fn bind<'a>(
    sig: &'static [&'static str],
    args: &'a [Arg],
    kwargs: &'a [(String, Arg)],
) -> LResult<Bound<'a>> {
    let vals = fx::ops::bind(sig, args, kwargs).map_err(|e| Reject::Fallback(e.to_string()))?;
    Ok(Bound {
        names: fx::ops::schema::param_names(sig),
        vals,
    })
}

impl<'a> Bound<'a> {
    /// The argument for `name`, `None` when absent or Python `None`.
    pub fn get(&self, name: &str) -> Option<&'a Arg> {
        let i = self.names.iter().position(|s| *s == name)?;
        match self.vals[i] {
            Some(Arg::None) | None => None,
            Some(a) => Some(a),
        }
    }

    pub fn req(&self, name: &str) -> LResult<&'a Arg> {
        self.get(name)
            .ok_or_else(|| Reject::Fallback(format!("missing argument {name}")))
    }

    pub fn int_or(&self, name: &str, default: i64) -> LResult<i64> {
        match self.get(name) {
            None => Ok(default),
            Some(a) => as_int(a).ok_or_else(|| Reject::Fallback(format!("{name} is not an int"))),
        }
    }

    pub fn float_or(&self, name: &str, default: f64) -> LResult<f64> {
        match self.get(name) {
            None => Ok(default),
            Some(Arg::Float(f)) => Ok(*f),
            Some(Arg::Int(i)) => Ok(*i as f64),
            Some(_) => fallback(format!("{name} is not a number")),
        }
    }

    pub fn bool_or(&self, name: &str, default: bool) -> LResult<bool> {
        match self.get(name) {
            None => Ok(default),
            Some(Arg::Bool(b)) => Ok(*b),
            Some(_) => fallback(format!("{name} is not a bool")),
        }
    }

    pub fn str_or(&self, name: &str, default: &'static str) -> LResult<String> {
        match self.get(name) {
            None => Ok(default.to_string()),
            Some(Arg::Str(s)) => Ok(s.clone()),
            Some(_) => fallback(format!("{name} is not a string")),
        }
    }

    pub fn dtype(&self, name: &str) -> LResult<Option<fx::DType>> {
        match self.get(name) {
            None => Ok(None),
            Some(Arg::DType(d)) => Ok(Some(*d)),
            Some(_) => fallback(format!("{name} is not a dtype")),
        }
    }

    /// `dim`: absent/None, an int, or a sequence of ints.
    pub fn dims(&self, name: &str) -> LResult<Option<Vec<i64>>> {
        match self.get(name) {
            None => Ok(None),
            Some(a) => int_list(a)
                .map(Some)
                .ok_or_else(|| Reject::Fallback(format!("{name} is not an int or int sequence"))),
        }
    }
}

pub fn as_int(a: &Arg) -> Option<i64> {
    match a {
        Arg::Int(i) => Some(*i),
        Arg::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

/// An int, or a tuple/list of ints.
pub fn int_list(a: &Arg) -> Option<Vec<i64>> {
    match a {
        Arg::Int(i) => Some(vec![*i]),
        Arg::Tuple(xs) | Arg::List(xs) => xs.iter().map(as_int).collect(),
        _ => None,
    }
}

/// Sizes given torch-style to a method: varargs (`x.view(2, 3)`) or one sequence
/// (`x.view((2, 3))`), or by keyword.
pub fn sizes_arg(args: &[Arg], kwargs: &[(String, Arg)], kw: &[&str]) -> LResult<Vec<i64>> {
    if let Some((_, a)) = kwargs.iter().find(|(k, _)| kw.contains(&k.as_str())) {
        if args.len() > 1 || kwargs.len() > 1 {
            return fallback("sizes given twice");
        }
        return int_list(a).ok_or_else(|| Reject::Fallback("sizes are not ints".into()));
    }
    if !kwargs.is_empty() {
        return fallback(format!("unexpected keyword argument {}", kwargs[0].0));
    }
    match &args[1..] {
        [a @ (Arg::Tuple(_) | Arg::List(_))] => {
            int_list(a).ok_or_else(|| Reject::Fallback("sizes are not ints".into()))
        }
        rest => rest
            .iter()
            .map(as_int)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Reject::Fallback("sizes are not ints".into())),
    }
}

/// Wraps a possibly negative dim against a rank (a 0-d tensor accepts -1 and 0), by the
/// catalog's rule ([`fx::ops::schema::wrap_dim`]).
pub fn wrap_dim(dim: i64, ndim: usize) -> LResult<usize> {
    fx::ops::schema::wrap_dim(dim, ndim).map_err(|e| Reject::Fallback(e.to_string()))
}
