//! Comprehensions that CPython 3.12 inlines into their frame (PEP 709), as regions of the
//! frame's instructions.
//!
//! On 3.11 a comprehension is a function of its own, and a graph break inside it breaks only
//! that frame. On 3.12 its loop runs in the enclosing frame, so a break inside it would resume
//! inside the loop, one graph per piece of every iteration. torch.compile instead ends the graph
//! before the comprehension, runs the whole comprehension natively and resumes after it; these
//! regions let `compile.rs` move a break inside one to the region's start and
//! `resume::graph_break` run the region's own bytecode (copied, with its cleanup handlers) in
//! the transformed code.
//!
//! A region, as 3.12's compiler lays it out:
//!
//! ```text
//! start:  LOAD_FAST_AND_CLEAR v1 .. vn   save the comprehension's variables (NULL if unbound)
//!         SWAP n+1                       the iterator back on top
//!         BUILD_LIST|BUILD_SET|BUILD_MAP 0
//!         SWAP 2
//!         FOR_ITER -> END_FOR            the body, LIST_APPEND/SET_ADD/MAP_ADD, JUMP_BACKWARD
//!         END_FOR
//!         SWAP/STORE_FAST/POP_TOP ...    restore v1..vn; the result stays on the stack, or is
//! end:                                   stored into a local or dropped on the way
//! ```
//!
//! The body's exception-table entries lead to cleanup blocks (`SWAP`/`POP_TOP`/`STORE_FAST`
//! restores, then `RERAISE`) placed after the function's code. Only regions that can run
//! anywhere are accepted: no cell or free variable is touched, every local stored is one of the
//! saved variables (or the result's), every jump stays inside, and every exception-table entry
//! over the region or its cleanups leads to one of those cleanups or to the handler of the
//! `try`/`with` block around the whole comprehension.

use std::ops::Range;

use crate::code::CodeInfo;
use crate::decode::Ins;

/// Where a region's result goes once the saved variables are restored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Disposition {
    /// Left on the stack for the instructions after the region.
    Stack,
    /// Stored into this local (`ys = [...]`).
    Stored(u32),
    /// Dropped (a comprehension used as a statement).
    Dropped,
}

/// An inlined comprehension, by instruction index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The first `LOAD_FAST_AND_CLEAR`; the iterator is on top of the stack here.
    pub start: usize,
    /// The first instruction after the restores.
    pub end: usize,
    /// The cleanup blocks the body's exception-table entries lead to, each ending in `RERAISE`.
    pub cleanups: Vec<Range<usize>>,
    pub result: Disposition,
    /// Locals of the frame the body assigns (`last := x`): after the region each one is bound
    /// if the loop ran at least once (or if it was bound before).
    pub walrus: Vec<u32>,
}

/// The outermost inlined comprehension that contains instruction `index`, if it is one that can
/// run as a whole in the transformed code.
pub fn region_containing(info: &CodeInfo, index: usize) -> Option<Region> {
    // An inner comprehension lies inside its outer one, and the outer one starts earlier: the
    // first region found scanning forward that contains `index` is the outermost.
    let mut i = 0;
    while i <= index && i < info.ins.len() {
        if is_start(&info.ins, i) {
            match region_at(info, i) {
                Some(r) if r.start <= index && index < r.end => return Some(r),
                Some(r) => i = r.end.max(i + 1),
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    None
}

/// The region starting at instruction `start`, if one does and it can run as a whole.
pub fn region_at(info: &CodeInfo, start: usize) -> Option<Region> {
    let ins = &info.ins;
    if !is_start(ins, start) {
        return None;
    }
    let saved: Vec<u32> = ins[start..]
        .iter()
        .take_while(|i| i.name == "LOAD_FAST_AND_CLEAR")
        .map(|i| i.arg)
        .collect();
    let n = saved.len();
    let at = |k: usize| ins.get(start + k);
    let prefix_ok = at(n).is_some_and(|i| i.name == "SWAP" && i.arg as usize == n + 1)
        && at(n + 1).is_some_and(|i| {
            matches!(i.name.as_str(), "BUILD_LIST" | "BUILD_SET" | "BUILD_MAP") && i.arg == 0
        })
        && at(n + 2).is_some_and(|i| i.name == "SWAP" && i.arg == 2)
        && at(n + 3).is_some_and(|i| i.name == "FOR_ITER");
    if !prefix_ok {
        return None;
    }
    let end_for = ins[start + n + 3].target?;
    if ins.get(end_for)?.name != "END_FOR" || end_for <= start + n + 3 {
        return None;
    }
    // The stack over the iterator's slot once the loop is done, as the prefix arranged it:
    // `SWAP n+1` swapped the iterator with the last saved value: [vn, v1, .., vn-1].
    let order: Vec<usize> = (0..n).map(|k| (k + n - 1) % n).collect();
    let (end, result) = restores(ins, end_for + 1, &saved, &order)?;
    let body = start..end;
    // A store of another local in the body is an assignment expression (`last := x`).
    let stored_ok = |i: &Ins| i.name != "DELETE_FAST" || saved.contains(&i.arg);
    let mut walrus: Vec<u32> = Vec::new();
    for (k, i) in ins[body.clone()].iter().enumerate() {
        if !movable(i) {
            return None;
        }
        // The result's own store is the one store of another local.
        let result_store = matches!(result, Disposition::Stored(v) if v == i.arg)
            && i.name == "STORE_FAST"
            && start + k > end_for;
        if !stored_ok(i) && !result_store {
            return None;
        }
        if i.name == "STORE_FAST"
            && !saved.contains(&i.arg)
            && !result_store
            && !walrus.contains(&i.arg)
        {
            walrus.push(i.arg);
        }
        if i.target.is_some_and(|t| !body.contains(&t)) {
            return None;
        }
    }
    let cleanups = cleanups(info, &body, &saved)?;
    Some(Region {
        start,
        end,
        cleanups,
        result,
        walrus,
    })
}

fn is_start(ins: &[Ins], i: usize) -> bool {
    ins[i].name == "LOAD_FAST_AND_CLEAR" && (i == 0 || ins[i - 1].name != "LOAD_FAST_AND_CLEAR")
}

/// An instruction that means the same in other code: no cells, no frame exits.
fn movable(i: &Ins) -> bool {
    !matches!(
        i.name.as_str(),
        "LOAD_DEREF"
            | "STORE_DEREF"
            | "DELETE_DEREF"
            | "LOAD_CLOSURE"
            | "MAKE_CELL"
            | "COPY_FREE_VARS"
            | "LOAD_CLASSDEREF"
            | "LOAD_FROM_DICT_OR_DEREF"
            | "LOAD_LOCALS"
            | "LOAD_FROM_DICT_OR_GLOBALS"
            | "RETURN_VALUE"
            | "RETURN_CONST"
            | "RETURN_GENERATOR"
            | "YIELD_VALUE"
            | "SEND"
            | "GET_AWAITABLE"
            | "GET_ANEXT"
            | "END_ASYNC_FOR"
            | "RAISE_VARARGS"
            | "RERAISE"
            | "PUSH_EXC_INFO"
            | "POP_EXCEPT"
            | "BEFORE_WITH"
            | "SETUP_ANNOTATIONS"
            | "IMPORT_STAR"
    )
}

/// Follows the restores after the outermost `END_FOR` at `from`, where the stack holds the saved
/// values (in `order`, bottom first: indices into `saved`) and the result on top: where they
/// end and what became of the result.
fn restores(
    ins: &[Ins],
    from: usize,
    saved: &[u32],
    order: &[usize],
) -> Option<(usize, Disposition)> {
    #[derive(Clone, Copy, PartialEq)]
    enum Item {
        Saved(usize),
        Result,
    }
    let mut stack: Vec<Item> = order.iter().map(|&s| Item::Saved(s)).collect();
    stack.push(Item::Result);
    let mut result = None;
    let mut k = from;
    while stack.iter().any(|i| matches!(i, Item::Saved(_))) {
        let i = ins.get(k)?;
        match i.name.as_str() {
            "SWAP" => {
                let d = i.arg as usize;
                if d < 2 || d > stack.len() {
                    return None;
                }
                let top = stack.len() - 1;
                stack.swap(top, top + 1 - d);
            }
            "STORE_FAST" => match stack.pop()? {
                Item::Saved(s) if saved[s] == i.arg => {}
                Item::Saved(_) => return None,
                Item::Result => result = Some(Disposition::Stored(i.arg)),
            },
            "POP_TOP" => match stack.pop()? {
                Item::Result => result = Some(Disposition::Dropped),
                Item::Saved(_) => return None,
            },
            _ => return None,
        }
        k += 1;
    }
    match (result, stack.as_slice()) {
        (Some(r), []) => Some((k, r)),
        (None, [Item::Result]) => Some((k, Disposition::Stack)),
        _ => None,
    }
}

/// The cleanup blocks that the exception-table entries over `body` (and over the cleanups
/// themselves) lead to, or `None` when one leads anywhere else.
fn cleanups(info: &CodeInfo, body: &Range<usize>, saved: &[u32]) -> Option<Vec<Range<usize>>> {
    let entries = bytecode::exception_table::parse(&info.exception_table).ok()?;
    let index_of = |offset: u32| info.ins.iter().position(|i| i.offset == offset as usize);
    let end_of = |offset: u32| {
        if offset as usize >= info.co_code.len() {
            Some(info.ins.len())
        } else {
            index_of(offset)
        }
    };
    let mut covered: Vec<Range<usize>> = vec![body.clone()];
    let mut found: Vec<Range<usize>> = Vec::new();
    let mut k = 0;
    while k < covered.len() {
        let span = covered[k].clone();
        k += 1;
        for e in &entries {
            let (s, t) = (index_of(e.start)?, end_of(e.end)?);
            if s >= span.end || t <= span.start {
                continue;
            }
            let h = index_of(e.target)?;
            if body.contains(&h) || found.iter().any(|c| c.start == h) {
                continue;
            }
            // The enclosing block's handler: checked below.
            if !cleanup_like(&info.ins, h) {
                continue;
            }
            let block = cleanup_block(&info.ins, h, saved)?;
            found.push(block.clone());
            covered.push(block);
        }
    }
    // Every entry over the region leads to the region, one of its cleanups, or the handler of
    // the `try`/`with` block around the whole comprehension (the transformed code's own range
    // sends those to the frame's handler).
    let start_offset = info.ins[body.start].offset;
    let outer = entries
        .iter()
        .find(|e| (e.start as usize) <= start_offset && start_offset < e.end as usize)
        .map(|e| e.target);
    for e in &entries {
        let (s, t, h) = (index_of(e.start)?, end_of(e.end)?, index_of(e.target)?);
        let overlaps = covered.iter().any(|c| s < c.end && c.start < t);
        if overlaps && !covered.iter().any(|c| c.contains(&h)) && Some(e.target) != outer {
            return None;
        }
    }
    Some(found)
}

/// Whether the code at `h` looks like a comprehension's cleanup (its first instruction).
fn cleanup_like(ins: &[Ins], h: usize) -> bool {
    ins.get(h).is_some_and(|i| i.name == "SWAP")
}

/// The cleanup block at `h`: restores of saved variables and stack shuffles, then `RERAISE`.
fn cleanup_block(ins: &[Ins], h: usize, saved: &[u32]) -> Option<Range<usize>> {
    let mut k = h;
    loop {
        let i = ins.get(k)?;
        match i.name.as_str() {
            "SWAP" | "POP_TOP" => {}
            "STORE_FAST" if saved.contains(&i.arg) => {}
            "RERAISE" => return Some(h..k + 1),
            _ => return None,
        }
        k += 1;
    }
}
