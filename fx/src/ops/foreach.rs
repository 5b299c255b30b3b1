//! torch's `_foreach_*` list ops as the per-tensor op each applies to the items of its lists.
//!
//! `torch._foreach_mul_(xs, s)` is `x.mul_(s)` for each `x` of `xs`; a list argument gives
//! item `i` to call `i`, any other argument (a number, a 0-d tensor) goes to every call. The
//! tracer writes a call out per item (`tracer/src/interp/calls/foreach.rs`), so a graph never
//! holds a list op: functionalization, the derivative rules and the inductor see the plain
//! pointwise ops, and the inductor fuses each tensor's chain of updates into one kernel (what
//! torch's inductor gets from its own foreach lowering, per tensor). An op not listed here stays
//! one opaque graph node run by torch.

/// One `_foreach_<name>` op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForeachOp {
    /// The per-tensor op, a tensor method (`add`; `add_` for the in-place form).
    pub name: &'static str,
    /// How many leading positional arguments are lists of tensors (or, after the first, a list,
    /// a number or a 0-d tensor given to every item): 1 for `sqrt`, 2 for `add`, 3 for
    /// `addcmul` / `lerp`.
    pub operands: usize,
    /// The in-place form only exists (`_foreach_zero_`, `_foreach_copy_`).
    pub inplace_only: bool,
    /// The out-of-place form only exists.
    pub functional_only: bool,
    /// The positional index of a `scalars` operand that may be a 1-D tensor holding one value
    /// per item (`_foreach_addcdiv_(xs, t1, t2, scalars)`); its item `i` is `scalars[i]`.
    pub scalars_at: Option<usize>,
}

const fn op(name: &'static str, operands: usize) -> ForeachOp {
    ForeachOp {
        name,
        operands,
        inplace_only: false,
        functional_only: false,
        scalars_at: None,
    }
}

/// The list ops the optimizers of `torch.optim` (SGD, Adam, AdamW and their relatives), gradient
/// clipping and EMA updates call.
pub static FOREACH: &[ForeachOp] = &[
    op("add", 2),
    op("sub", 2),
    op("mul", 2),
    op("div", 2),
    op("maximum", 2),
    op("minimum", 2),
    op("clamp_min", 2),
    op("clamp_max", 2),
    op("pow", 2),
    op("lerp", 3),
    ForeachOp {
        scalars_at: Some(3),
        ..op("addcmul", 3)
    },
    ForeachOp {
        scalars_at: Some(3),
        ..op("addcdiv", 3)
    },
    op("sqrt", 1),
    op("rsqrt", 1),
    op("neg", 1),
    op("abs", 1),
    op("exp", 1),
    op("log", 1),
    op("sign", 1),
    op("sigmoid", 1),
    op("reciprocal", 1),
    ForeachOp {
        inplace_only: true,
        ..op("zero", 1)
    },
    ForeachOp {
        inplace_only: true,
        ..op("copy", 2)
    },
];

/// The op a torch function name `_foreach_<name>` / `_foreach_<name>_` stands for, and whether
/// it is the in-place form.
pub fn lookup(torch_name: &str) -> Option<(&'static ForeachOp, bool)> {
    let rest = torch_name.strip_prefix("_foreach_")?;
    let (base, inplace) = match rest.strip_suffix('_') {
        Some(b) => (b, true),
        None => (rest, false),
    };
    let op = FOREACH.iter().find(|o| o.name == base)?;
    if (inplace && op.functional_only) || (!inplace && op.inplace_only) {
        return None;
    }
    Some((op, inplace))
}

#[cfg(test)]
mod tests {
    use super::lookup;

    #[test]
    fn names_split_into_op_and_form() {
        assert_eq!(
            lookup("_foreach_add_").map(|(o, i)| (o.name, i)),
            Some(("add", true))
        );
        assert_eq!(
            lookup("_foreach_sqrt").map(|(o, i)| (o.name, i)),
            Some(("sqrt", false))
        );
        assert_eq!(
            lookup("_foreach_clamp_min_").map(|(o, i)| (o.name, i)),
            Some(("clamp_min", true))
        );
        assert!(lookup("_foreach_zero").is_none());
        assert!(lookup("_foreach_norm").is_none());
        assert!(lookup("add_").is_none());
    }
}
