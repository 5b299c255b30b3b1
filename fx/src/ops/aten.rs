//! `torch.ops.aten.*` calls written in the spelling the catalog knows.
//!
//! Libraries call aten operators directly (`torch.ops.aten.view(x, [4])`,
//! `torch.ops.aten.add_.Tensor(x, y)`). Recorded under their own names, such calls hide from
//! every pass what the catalog knows of the op: functionalization took `aten.alias(x)` for a
//! fresh tensor (a write through it missed `x`) and dead-code elimination dropped
//! `aten.add_.Tensor(x, y)` as a pure call whose result nobody read. The tracer reads what the
//! overload torch picks aliases and writes (its schema; a meta run where the schema is silent,
//! as for `aten._unsafe_view`), and an op that aliases or writes is written as the user would
//! write it ([`spelling`]), so every later pass sees the user spelling. One that has no spelling
//! here breaks the graph: it runs eagerly, never as a fresh tensor by mistake. Pure ops stay
//! as they are called.

use super::flag::{MAYBE_VIEW, MULTI_VIEW, VIEW};
use super::spell::{A, M, MI, T};
use super::OpDef;

/// What a call of an aten overload does besides computing its result, from its schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Writes its first argument and returns it (`add_.Tensor(Tensor(a!) self, ...)`).
    WritesSelf,
    /// Writes its one keyword-only `out` argument and returns it (`add.out`).
    WritesOut,
    /// Writes some other argument, or several (`max.dim_max`, a batch norm's running stats,
    /// a `_foreach_*_` list).
    WritesOther,
    /// Writes nothing; its result shares storage with an argument (`alias(Tensor(a) self) ->
    /// Tensor(a)`; `_unsafe_view`, whose schema is silent about it).
    Aliases,
}

/// How an aten call is written in a spelling the catalog knows. The arguments are the call's
/// own: aten's schemas and torch's Python bindings are generated from the same declarations,
/// so the positional order after `self` and the keyword names agree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UserSpelling {
    /// `x.name(rest...)`: the receiver is the call's first argument.
    Method(String),
    /// `torch.name(args...)`: the `out=` overloads.
    Function(String),
    /// `x.name`, an attribute read (`aten.data(x)` is `x.data`); no other argument.
    Attribute(String),
    /// `x[...]`: `aten.alias(x)`, a view with `x`'s own sizes, strides and offset.
    Ellipsis,
    /// `x[:, ..., start:end:step]` with the slice at `dim`: `aten.slice.Tensor(self, dim=0,
    /// start=None, end=None, step=1)`; Python's slicing calls the same op.
    Slice,
    /// `x.view(size)`, taken only where autograd is not involved: `aten._unsafe_view` is a view
    /// of the data that autograd does not track as a view (an in-place write to it is allowed
    /// where one to a view of a leaf raises).
    UntrackedView,
}

/// The spelling of a call of `op.overload` (`view`, `default`) that has `effect`, or `None`
/// where the catalog knows no spelling with the same meaning (the tracer then breaks the
/// graph). A row is the op only where its primary aten overload belongs to the same operator
/// (or it has none: `split` and `unflatten` exist only in Python, over the same operator).
pub fn spelling(op: &str, overload: &str, effect: Effect) -> Option<UserSpelling> {
    let row = |name: &str| -> Option<&'static OpDef> {
        super::op(name).filter(|r| r.aten.is_empty() || r.aten.split('.').next() == Some(name))
    };
    match effect {
        Effect::WritesSelf => {
            let base = op.strip_suffix('_').filter(|b| !b.ends_with('_'))?;
            let r = row(base)?;
            (r.spellings & MI != 0).then(|| UserSpelling::Method(op.to_string()))
        }
        Effect::WritesOut => {
            let r = row(op)?;
            (r.spellings & T != 0).then(|| UserSpelling::Function(op.to_string()))
        }
        Effect::WritesOther => None,
        Effect::Aliases => match (op, overload) {
            ("alias", "default") => Some(UserSpelling::Ellipsis),
            ("slice", "Tensor") => Some(UserSpelling::Slice),
            ("_unsafe_view", "default") => Some(UserSpelling::UntrackedView),
            _ => {
                let r = row(op)?;
                if r.flags & (VIEW | MAYBE_VIEW | MULTI_VIEW) == 0 {
                    // The catalog takes the op for one that never aliases: spelled so, the
                    // passes would make the same mistake.
                    return None;
                }
                let name = op.to_string();
                if r.spellings & M != 0 {
                    Some(UserSpelling::Method(name))
                } else if r.spellings & T != 0 {
                    Some(UserSpelling::Function(name))
                } else if r.spellings & A != 0 {
                    Some(UserSpelling::Attribute(name))
                } else {
                    None
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Option<UserSpelling> {
        Some(UserSpelling::Method(s.into()))
    }

    #[test]
    fn views_are_their_methods() {
        for (op, ov) in [
            ("view", "default"),
            ("view", "dtype"),
            ("detach", "default"),
            ("transpose", "int"),
            ("expand", "default"),
            ("select", "int"),
            ("permute", "default"),
            ("split", "Tensor"),
            ("unflatten", "int"),
            ("reshape", "default"),
            ("type_as", "default"),
        ] {
            assert_eq!(spelling(op, ov, Effect::Aliases), m(op), "{op}.{ov}");
        }
        assert_eq!(
            spelling("view_as_real", "default", Effect::Aliases),
            Some(UserSpelling::Function("view_as_real".into()))
        );
        assert_eq!(
            spelling("data", "default", Effect::Aliases),
            Some(UserSpelling::Attribute("data".into()))
        );
    }

    #[test]
    fn spellings_of_their_own() {
        assert_eq!(
            spelling("alias", "default", Effect::Aliases),
            Some(UserSpelling::Ellipsis)
        );
        assert_eq!(
            spelling("slice", "Tensor", Effect::Aliases),
            Some(UserSpelling::Slice)
        );
        assert_eq!(
            spelling("_unsafe_view", "default", Effect::Aliases),
            Some(UserSpelling::UntrackedView)
        );
    }

    #[test]
    fn writes_are_in_place_methods_or_out() {
        for op in [
            "add_",
            "copy_",
            "fill_",
            "zero_",
            "index_put_",
            "t_",
            "detach_",
        ] {
            assert_eq!(spelling(op, "default", Effect::WritesSelf), m(op), "{op}");
        }
        assert_eq!(
            spelling("add", "out", Effect::WritesOut),
            Some(UserSpelling::Function("add".into()))
        );
    }

    #[test]
    fn unknown_or_mismatched_ops_have_none() {
        // Not in the catalog: the tracer breaks the graph.
        assert_eq!(spelling("lift_fresh", "default", Effect::Aliases), None);
        assert_eq!(spelling("_reshape_alias", "default", Effect::Aliases), None);
        assert_eq!(spelling("unsafe_split", "Tensor", Effect::Aliases), None);
        assert_eq!(spelling("max", "dim_max", Effect::WritesOther), None);
        // A catalog row that never aliases is no spelling of an aliasing call.
        assert_eq!(spelling("add", "Tensor", Effect::Aliases), None);
        // `aten.copy` is out of place: no in-place spelling without the underscore.
        assert_eq!(spelling("copy", "default", Effect::WritesSelf), None);
        assert_eq!(spelling("add__", "default", Effect::WritesSelf), None);
    }
}
