//! Walks into the values nested in tuples and lists. A tracked list can hold itself
//! (`a.append(a)`, or through a tuple: `a.append((a, t))`), and a walk that entered it again
//! would recurse until the stack overflows and the interpreter dies; so a walk remembers the
//! lists it is inside and does not enter one of them again (what it holds is being looked at).

use super::Var;

/// Whether `pred` holds for `v` or for a value nested in it through tuples and lists.
pub(crate) fn any_nested(v: &Var, pred: &dyn Fn(&Var) -> bool) -> bool {
    fn walk(v: &Var, pred: &dyn Fn(&Var) -> bool, inside: &mut Vec<*const ()>) -> bool {
        if pred(v) {
            return true;
        }
        match v {
            Var::Tuple(items) => items.iter().any(|i| walk(i, pred, inside)),
            Var::List(items) => {
                let at = std::rc::Rc::as_ptr(items) as *const ();
                if inside.contains(&at) {
                    return false;
                }
                inside.push(at);
                let found = items.borrow().iter().any(|i| walk(i, pred, inside));
                inside.pop();
                found
            }
            _ => false,
        }
    }
    walk(v, pred, &mut Vec::new())
}
