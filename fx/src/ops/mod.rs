//! The op catalog: what the project knows about each torch op, written once.
//!
//! A graph names a callable the way the user reached it (`torch.add`, `x.add_`, `operator.iadd`,
//! `F.relu(x, inplace=True)`, `torch._C._nn.linear`). Everything downstream (metadata inference,
//! dead-code and common-subexpression elimination, functionalization, the inductor's lowering,
//! the tracer's dispatch) needs the same few facts about such a call: which op it is, whether it
//! writes one of its arguments and which, whether its result shares storage with an argument,
//! whether it draws random numbers, whether it matters for an effect. They live here and nowhere
//! else; [`table`] holds the rows, this module the rules that read a call's spelling.
//!
//! `tests/ops_torch.rs` checks the rows against torch on real tensors (`tests/gen_ops_cases.py`).

pub mod aten;
pub mod foreach;
pub mod schema;
mod table;

use crate::graph::{Arg, Target};

pub use schema::{bind, BindError};
pub use table::{OpDef, EFFECT_FUNCTIONS, EFFECT_METHODS, OPS};

/// Flag bits of an [`OpDef`].
pub mod flag {
    /// The result is always a view of the first argument (shares its storage).
    pub const VIEW: u16 = 1;
    /// The result may or may not share the first argument's storage, depending on its layout
    /// or dtype (`reshape`, `contiguous`, `to`).
    pub const MAYBE_VIEW: u16 = 1 << 1;
    /// Draws from the random generator: two calls differ, dropping one shifts later draws.
    pub const RANDOM: u16 = 1 << 2;
    /// Makes a tensor without a tensor argument.
    pub const FACTORY: u16 = 1 << 3;
    /// `x.op_(args)` is `x.op(args)` written back into `x` (same arguments, same values when the
    /// out-of-place result has `x`'s dtype): a pure out-of-place spelling exists.
    pub const FUNCTIONAL_TWIN: u16 = 1 << 4;
    /// A tuple of views of the first argument (`split`, `chunk`, `unbind`).
    pub const MULTI_VIEW: u16 = 1 << 5;
    /// The in-place form changes the tensor's sizes or strides, not only its values
    /// (`t_`, `unsqueeze_`, `resize_`): it cannot be written as a value update.
    pub const META_INPLACE: u16 = 1 << 6;
    /// A tensor method whose result is read from the tensor's data into Python (`item`,
    /// `tolist`, `__bool__`): the tracer cannot know it from metadata.
    pub const DATA_DEPENDENT: u16 = 1 << 7;
    /// The in-place form changes sizes or strides (`t_`, `unsqueeze_`, `resize_`, `set_`), a
    /// subset of [`META_INPLACE`] (which also holds autograd-metadata changes: `detach_`).
    pub const SHAPE_INPLACE: u16 = 1 << 8;
}

/// Spelling bits of an [`OpDef`]: where torch exports an op by its catalog name.
pub mod spell {
    /// `torch.add`.
    pub const T: u16 = 1;
    /// `torch.relu_`.
    pub const TI: u16 = 1 << 1;
    /// `Tensor.add` (a method).
    pub const M: u16 = 1 << 2;
    /// `Tensor.add_`.
    pub const MI: u16 = 1 << 3;
    /// `Tensor.T` (an attribute, not called).
    pub const A: u16 = 1 << 4;
    /// `torch.nn.functional.relu`.
    pub const F: u16 = 1 << 5;
    /// `torch._C._nn.linear`.
    pub const NN: u16 = 1 << 6;
    /// `torch.special.expit`.
    pub const S: u16 = 1 << 7;
}

/// Other names of one op (`torch.absolute` is `torch.abs`): alias → canonical. Parameters match
/// by position (`swapaxes(input, axis0, axis1)` is `transpose(input, dim0, dim1)`).
pub const ALIASES: &[(&str, &str)] = &[
    ("absolute", "abs"),
    ("arccos", "acos"),
    ("arcsin", "asin"),
    ("arctan", "atan"),
    ("arctan2", "atan2"),
    ("clip", "clamp"),
    ("fix", "trunc"),
    ("multiply", "mul"),
    ("divide", "div"),
    ("true_divide", "div"),
    ("subtract", "sub"),
    ("negative", "neg"),
    ("greater", "gt"),
    ("greater_equal", "ge"),
    ("less", "lt"),
    ("less_equal", "le"),
    ("not_equal", "ne"),
    ("swapaxes", "transpose"),
    ("swapdims", "transpose"),
    ("moveaxis", "movedim"),
    ("concat", "cat"),
    ("concatenate", "cat"),
    ("expit", "sigmoid"),
];

/// The canonical name of an alias (`absolute` → `abs`); other names are their own.
pub fn unalias(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(a, _)| *a == name)
        .map_or(name, |(_, c)| c)
}

/// The catalog row of an op name.
pub fn op(name: &str) -> Option<&'static OpDef> {
    table::lookup(name)
}

/// The primary signature of an op ([`OpDef::sig`]).
pub fn signature(name: &str) -> Option<&'static [&'static str]> {
    op(name).and_then(|o| o.sig)
}

/// Whether `x.name_()` changes the tensor's sizes or strides in place (`t_`, `unsqueeze_`,
/// `resize_`): a method name with its underscore, as the tracer sees it.
pub fn changes_shape_in_place(method: &str) -> bool {
    method
        .strip_suffix('_')
        .filter(|b| !b.ends_with('_'))
        .is_some_and(|b| has(b, flag::SHAPE_INPLACE))
}

fn has(name: &str, f: u16) -> bool {
    op(name).is_some_and(|o| o.flags & f != 0)
}

/// Which namespace a callable was reached through; it decides the parameter names and defaults
/// (`torch.softmax(x, dim)` and `torch.nn.functional.softmax(x, dim=None)` differ).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Spelling {
    /// `torch.add`, and `torch._C._VariableFunctions.add`.
    Torch,
    /// `x.add(...)` and `torch.Tensor.add(x, ...)`.
    Method,
    /// `torch.nn.functional.relu`, and `torch._C._nn.*`.
    Functional,
    /// `torch.special.*`.
    Special,
    /// `operator.add`: a Python operator applied to a tensor.
    Operator,
}

/// `F.cross_entropy`'s parameters in order (`F.nll_loss` takes them but the last): the shape
/// rule, the derivative rule and the decomposition bind calls with them.
pub const CROSS_ENTROPY_PARAMS: &[&str] = &[
    "input",
    "target",
    "weight",
    "size_average",
    "ignore_index",
    "reduce",
    "reduction",
    "label_smoothing",
];

/// The namespace and the bare name of a target (`torch.nn.functional.relu` → Functional,
/// `relu`); `None` for a path outside the known namespaces or nested below them.
pub fn split_target(target: &Target) -> Option<(Spelling, &str)> {
    let path = match target {
        Target::Method(m) => return Some((Spelling::Method, m)),
        Target::Function(p) => p.as_str(),
    };
    // `torch.split`, `torch.einsum`, `torch.norm`, ... are defined in `torch.functional` and
    // recorded under that module's path: they are the `torch.` functions themselves.
    const PREFIXES: [(&str, Spelling); 11] = [
        ("torch.nn.functional.", Spelling::Functional),
        ("torch.functional.", Spelling::Torch),
        ("torch._C._nn.", Spelling::Functional),
        ("torch.special.", Spelling::Special),
        ("torch.Tensor.", Spelling::Method),
        ("torch._C.TensorBase.", Spelling::Method),
        ("torch._C._TensorBase.", Spelling::Method),
        ("torch._C._VariableFunctions.", Spelling::Torch),
        ("torch.", Spelling::Torch),
        ("operator.", Spelling::Operator),
        ("_operator.", Spelling::Operator),
    ];
    for (prefix, spelling) in PREFIXES {
        if let Some(rest) = path.strip_prefix(prefix) {
            return (!rest.contains('.')).then_some((spelling, rest));
        }
    }
    None
}

/// Python `operator` module names → torch op names, and whether the name is the in-place form
/// (`iadd`). Shifts have no torch lowering; `setitem` is handled by [`mutated_arg`].
pub fn operator_name(op: &str) -> Option<(&'static str, bool)> {
    let (base, inplace) = match op.strip_prefix('i') {
        Some(rest) if !matches!(op, "invert" | "is_" | "is_not" | "index") => (rest, true),
        _ => (op, false),
    };
    let name = match base {
        "add" => "add",
        "sub" => "sub",
        "mul" => "mul",
        "truediv" => "div",
        "floordiv" => "floor_divide",
        "mod" => "remainder",
        "pow" => "pow",
        "matmul" => "matmul",
        "and_" | "and" => "bitwise_and",
        "or_" | "or" => "bitwise_or",
        "xor" => "bitwise_xor",
        "lshift" | "rshift" => return None,
        _ if inplace => return None,
        "neg" => "neg",
        "pos" => "pos",
        "abs" => "abs",
        "invert" | "inv" => "bitwise_not",
        "getitem" => "getitem",
        "lt" => "lt",
        "le" => "le",
        "eq" => "eq",
        "ne" => "ne",
        "gt" => "gt",
        "ge" => "ge",
        _ => return None,
    };
    Some((name, inplace))
}

/// The Python `operator` function of an in-place operator (`iadd` → `add`), for the
/// out-of-place spelling of `x += y`.
pub fn operator_out_of_place(op: &str) -> Option<&'static str> {
    Some(match op {
        "iadd" => "add",
        "isub" => "sub",
        "imul" => "mul",
        "itruediv" => "truediv",
        "ifloordiv" => "floordiv",
        "imod" => "mod",
        "ipow" => "pow",
        "imatmul" => "matmul",
        "iand" => "and_",
        "ior" => "or_",
        "ixor" => "xor",
        "ilshift" => "lshift",
        "irshift" => "rshift",
        _ => return None,
    })
}

/// Python operators that rebind in place (`x += y` on a tensor writes `x`).
const INPLACE_OPERATORS: &[&str] = &[
    "iadd",
    "isub",
    "imul",
    "imatmul",
    "itruediv",
    "ifloordiv",
    "imod",
    "ipow",
    "iand",
    "ior",
    "ixor",
    "ilshift",
    "irshift",
    "setitem",
    "delitem",
];

/// Where `inplace=` sits positionally in `torch.nn.functional` signatures.
pub fn functional_inplace_pos(name: &str) -> Option<usize> {
    Some(match name {
        "relu" | "relu6" | "silu" | "hardswish" | "hardsigmoid" | "mish" | "selu" | "celu"
        | "threshold" => match name {
            "celu" => 2,
            "threshold" => 3,
            _ => 1,
        },
        "leaky_relu" | "elu" => 2,
        "hardtanh"
        | "dropout"
        | "alpha_dropout"
        | "feature_alpha_dropout"
        | "dropout1d"
        | "dropout2d"
        | "dropout3d" => 3,
        "rrelu" => 4,
        _ => return None,
    })
}

fn last_component(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// The argument a call writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mutated {
    /// Positional argument `i` (0: `x.add_`, `operator.iadd(x, y)`, `F.relu(x, inplace=True)`).
    Arg(usize),
    /// The `out=` keyword argument.
    Out,
}

/// Which argument a call writes: in-place methods and functions (`add_`, `torch.relu_`,
/// `torch.nn.init.normal_`), Python's augmented and item assignments, `inplace=True` (by keyword
/// or position), and `out=`.
pub fn mutated_arg(target: &Target, args: &[Arg], kwargs: &[(String, Arg)]) -> Option<Mutated> {
    let name = last_component(target.name());
    let operator_module = matches!(target, Target::Function(p)
        if p.starts_with("operator.") || p.starts_with("_operator."));
    // `operator.and_` and `operator.is_` carry an underscore only to dodge keywords.
    let trailing_underscore = name.ends_with('_') && !name.ends_with("__") && !operator_module;
    let inplace_dunder = name
        .strip_prefix("__")
        .and_then(|n| n.strip_suffix("__"))
        .is_some_and(|n| INPLACE_OPERATORS.contains(&n));
    let inplace_operator = operator_module && INPLACE_OPERATORS.contains(&name);
    if trailing_underscore || inplace_dunder || inplace_operator {
        return Some(Mutated::Arg(0));
    }
    if kwargs.iter().any(|(k, v)| k == "out" && *v != Arg::None) {
        return Some(Mutated::Out);
    }
    let inplace_kw = kwargs.iter().find(|(k, _)| k == "inplace").map(|(_, v)| v);
    let positional = match split_target(target) {
        Some((Spelling::Functional, n)) => functional_inplace_pos(n).and_then(|p| args.get(p)),
        _ => None,
    };
    matches!(inplace_kw.or(positional), Some(Arg::Bool(true))).then_some(Mutated::Arg(0))
}

/// Whether a call writes to one of its arguments (see [`mutated_arg`]); without the positional
/// arguments only `inplace=` by keyword is seen.
pub fn is_mutating(target: &Target, kwargs: &[(String, Arg)]) -> bool {
    mutated_arg(target, &[], kwargs).is_some()
}

/// Whether a call draws random numbers.
pub fn is_random(target: &Target) -> bool {
    let name = last_component(target.name());
    // `x.bernoulli_(p)` draws as `torch.bernoulli` does.
    let bare = match name.strip_suffix('_') {
        Some(b) if !name.ends_with("__") => b,
        _ => name,
    };
    has(name, flag::RANDOM) || has(bare, flag::RANDOM)
}

/// Whether a call matters for what it does rather than what it returns (beyond mutation and
/// randomness): `backward`, `torch.manual_seed`, grad-mode switches, `print`.
pub fn is_effect(target: &Target) -> bool {
    match target {
        Target::Method(m) => EFFECT_METHODS.contains(&m.as_str()),
        Target::Function(f) => EFFECT_FUNCTIONS.contains(&f.as_str()),
    }
}

/// The parameter order a call of `sig` binds its positional arguments to: the signature's
/// own for every spelling but the method's, where the receiver is `input` wherever the schema
/// puts it (`x.where(cond, y)` is `torch.where(cond, x, y)`).
pub fn positional_order(sig: &[&'static str], spelling: Spelling) -> Vec<&'static str> {
    match sig.iter().position(|p| *p == "input") {
        Some(i) if i > 0 && spelling == Spelling::Method => std::iter::once("input")
            .chain(sig.iter().copied().filter(|p| *p != "input"))
            .collect(),
        _ => sig.to_vec(),
    }
}

/// A method call's positional arguments in the function's order ([`positional_order`]): the
/// receiver moved to where the schema puts `input`.
pub fn function_positionals<'a>(
    sig: &[&'static str],
    spelling: Spelling,
    args: &'a [Arg],
) -> std::borrow::Cow<'a, [Arg]> {
    match sig.iter().position(|p| *p == "input") {
        Some(i) if i > 0 && spelling == Spelling::Method && args.len() > i => {
            let mut v = args[1..].to_vec();
            v.insert(i, args[0].clone());
            std::borrow::Cow::Owned(v)
        }
        _ => std::borrow::Cow::Borrowed(args),
    }
}

/// Whether a torch function makes a tensor with no tensor argument (`torch.zeros`).
pub fn is_factory(name: &str) -> bool {
    has(name, flag::FACTORY)
}

/// Whether the result of the canonical op `name` may share storage with its first argument.
pub fn may_alias(name: &str) -> bool {
    has(name, flag::VIEW | flag::MAYBE_VIEW | flag::MULTI_VIEW)
}

/// A call normalized to its canonical op.
#[derive(Clone, Debug)]
pub struct Canon {
    pub spelling: Spelling,
    pub name: String,
    /// Mutates its first argument (`add_`, `operator.iadd`, `F.relu(x, inplace=True)`).
    pub inplace: bool,
    /// The result may share storage with an argument (views, `contiguous`, `to`, in-place ops).
    pub may_alias: bool,
    /// `__radd__` and friends: the operands arrive swapped.
    pub reflected: bool,
}

/// Every spelling of an op (`torch.add`, `x.add`, `x.add_`, `x.__radd__`, `operator.add`,
/// `operator.iadd`) normalized to its canonical name.
pub fn canonical(target: &Target, args: &[Arg], kwargs: &[(String, Arg)]) -> Option<Canon> {
    let (spelling, raw) = split_target(target)?;
    let (spelling, name, inplace, reflected) = match spelling {
        Spelling::Operator => {
            let (n, ip) = operator_name(raw)?;
            (Spelling::Operator, n.to_string(), ip, false)
        }
        Spelling::Method if raw.starts_with("__") && raw.ends_with("__") => {
            let inner = &raw[2..raw.len() - 2];
            let (inner, reflected) = match inner.strip_prefix('r') {
                Some(rest) if operator_name(rest).is_some() && !matches!(inner, "rshift") => {
                    (rest, true)
                }
                _ => (inner, false),
            };
            let (n, ip) = operator_name(inner)?;
            (Spelling::Operator, n.to_string(), ip, reflected)
        }
        Spelling::Method if raw.ends_with('_') && !raw.starts_with('_') => (
            Spelling::Method,
            raw[..raw.len() - 1].to_string(),
            true,
            false,
        ),
        sp => {
            let ip = sp == Spelling::Functional
                && mutated_arg(target, args, kwargs) == Some(Mutated::Arg(0));
            (sp, raw.to_string(), ip, false)
        }
    };
    let may_alias = inplace || may_alias(&name);
    Some(Canon {
        spelling,
        name,
        inplace,
        may_alias,
        reflected,
    })
}

#[cfg(test)]
mod tests;
