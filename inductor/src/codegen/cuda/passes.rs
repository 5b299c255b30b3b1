//! Text passes over a kernel's printed CUDA C: the body printer's loads (`b{N}[index]`) and
//! stores are plain statements, so finding the loads worth keeping in registers, staging a
//! pointwise chunk's stores, and pairing `sinf`/`cosf` of one value need no second printer.

use std::collections::HashSet;

use fx::DType;

use crate::ir::BufId;

/// `sinf(v)` and `cosf(v)` of one value in one block become one `sincosf`, which reduces the
/// argument once (the same results: CUDA's `sincosf` is the pair of its `sinf` and `cosf`).
/// A pointwise chain such as `sin(x) * 2 + cos(x)` is bound by this arithmetic, not memory.
pub(super) fn merge_sincos(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    // (indent, name, argument) of a `const float NAME = sinf(ARG);` / `cosf` line.
    let parse = |l: &str, f: &str| -> Option<(usize, String, String)> {
        let t = l.trim_start();
        let rest = t.strip_prefix("const float ")?;
        let (name, call) = rest.split_once(" = ")?;
        let arg = call
            .strip_prefix(f)?
            .strip_prefix('(')?
            .strip_suffix(");")?;
        let simple =
            |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
        (simple(name) && simple(arg))
            .then(|| (l.len() - t.len(), name.to_string(), arg.to_string()))
    };
    let mut out_lines: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let mut dropped = vec![false; lines.len()];
    for i in 0..lines.len() {
        let Some((ind, sin_name, arg)) = parse(lines[i], "sinf") else {
            continue;
        };
        // The partner in the same block: lines further in, or at the same depth, until the
        // block closes.
        for j in i + 1..lines.len() {
            let t = lines[j].trim_start();
            let depth = lines[j].len() - t.len();
            if depth < ind && !t.is_empty() {
                break;
            }
            if depth != ind || dropped[j] {
                continue;
            }
            if let Some((_, cos_name, a)) = parse(lines[j], "cosf") {
                if a == arg {
                    let pad = &lines[i][..ind];
                    out_lines[i] = format!(
                        "{pad}float {sin_name}, {cos_name}; sincosf({arg}, &{sin_name}, &{cos_name});"
                    );
                    dropped[j] = true;
                    break;
                }
            }
        }
    }
    let mut out = String::with_capacity(text.len());
    for (l, d) in out_lines.iter().zip(&dropped) {
        if !d {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

/// `body` with every load `b{buf}[{index}]` (the whole token: not a suffix of `b1{buf}[..`)
/// replaced by `with`.
pub(super) fn replace_load(body: &str, buf: BufId, index: &str, with: &str) -> String {
    let pat = format!("b{buf}[{index}]");
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find(&pat) {
        let whole = at == 0 || {
            let c = rest.as_bytes()[at - 1];
            !(c.is_ascii_alphanumeric() || c == b'_')
        };
        out.push_str(&rest[..at]);
        out.push_str(if whole { with } else { &pat });
        rest = &rest[at + pat.len()..];
    }
    out.push_str(rest);
    out
}

/// The stores of a pointwise body (`b{N}[index] = value;` lines, index over `vars`), as
/// (buffer, index, the statement without its indent); `None` when some store is of another
/// form (the stores then stay where they are).
pub(super) fn chunk_stores(body: &str, vars: &[String]) -> Option<Vec<(BufId, String, String)>> {
    let mut out = Vec::new();
    for line in body.lines() {
        let t = line.trim_start();
        let Some(rest) = t.strip_prefix('b') else {
            continue;
        };
        let digits = rest.bytes().take_while(|c| c.is_ascii_digit()).count();
        let Some(after) = rest[digits..].strip_prefix('[') else {
            continue;
        };
        if digits == 0 {
            continue;
        }
        let (idx, value) = after.split_once("] = ")?;
        if idx.contains('[') || !index_over_vars(idx, vars) || !value.ends_with(';') {
            return None;
        }
        let buf: usize = rest[..digits].parse().ok()?;
        out.push((BufId::new(buf), idx.to_string(), t.to_string()));
    }
    Some(out)
}

/// Register slots (of 4 bytes) a row kernel's thread may spend on cached row loads.
pub(super) const ROW_CACHE_REGS: i64 = 32;

/// The loads of a row kernel's stages (`b{N}[index]`, printed by the body printer) worth
/// keeping in registers: read at least `min_uses` times, from a buffer the kernel never stores to, at an
/// index over the loop variables alone that names a reduced (`inner`) variable. Such a load
/// reads the same element wherever it occurs in a thread's slot, so one load per slot, at the
/// row's start, serves every stage. At most as many as `budget` slots of 4 bytes allow (8-byte
/// elements take two), in order of first occurrence.
pub(super) fn cache_row_loads(
    body: &str,
    inner: &[String],
    min_uses: usize,
    budget: usize,
    dtype: impl Fn(BufId) -> Option<DType>,
) -> Vec<(BufId, String)> {
    let mut left = budget;
    let mut keep = Vec::new();
    for (id, expr, n) in load_candidates(body, inner) {
        if n < min_uses {
            continue;
        }
        let cost = match dtype(id) {
            Some(d) if d.itemsize() > 4 => 2,
            Some(_) => 1,
            None => continue,
        };
        if cost > left {
            break;
        }
        left -= cost;
        keep.push((id, expr));
    }
    keep
}

/// The loads a pointwise chunk of `lanes` consecutive elements reads ahead into registers
/// (each one array of `lanes` elements): those that stream (the index names a loop variable
/// other than the innermost, `vars`' last: each element is read once, and a chunk consecutive
/// in its buffer becomes one vector access) before those broadcast along the outer dims (a
/// per-channel vector, read from L1 by every chunk), each costing its array's registers, as
/// many as `budget` registers (`CudaPolicy::chunk_regs`) allow. In order of first occurrence the broadcast vectors of a
/// batch-norm backward took the budget and two or three of its activation-sized bf16 inputs
/// stayed scalar 2-byte loads: resnet50's three slowest backward kernels (0.4-0.8 ms, 2-3x
/// their bytes at the copy bandwidth; session 32's H100 trace).
pub(super) fn chunk_loads(
    body: &str,
    vars: &[String],
    lanes: u32,
    budget: u32,
    dtype: impl Fn(BufId) -> Option<DType>,
) -> Vec<(BufId, String)> {
    let Some(last) = vars.last() else {
        return Vec::new();
    };
    let streams = |expr: &str| {
        expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|t| t != last && vars.iter().any(|v| v == t))
    };
    let mut found = load_candidates(body, vars);
    // Stable: streamed loads first, each class in order of first occurrence.
    found.sort_by_key(|(_, expr, _)| !streams(expr));
    let mut left = budget as usize;
    let mut keep = Vec::new();
    for (id, expr, _) in found {
        let Some(d) = dtype(id) else {
            continue;
        };
        let cost = (lanes as usize * d.itemsize()).div_ceil(4);
        if cost <= left {
            left -= cost;
            keep.push((id, expr));
        }
    }
    keep
}

/// The loads of a body (`b{N}[index]`) from buffers it never stores to, at an index over the
/// loop variables alone that names one of `inner`: (buffer, index, uses), in order of first
/// occurrence.
fn load_candidates(body: &str, inner: &[String]) -> Vec<(BufId, String, usize)> {
    let bytes = body.as_bytes();
    let mut stored: HashSet<usize> = Default::default();
    let mut seen: Vec<((usize, String), usize)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let at_token = bytes[i] == b'b'
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        if !at_token {
            i += 1;
            continue;
        }
        let digits = bytes[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let open = i + 1 + digits;
        if digits == 0 || bytes.get(open) != Some(&b'[') {
            i += 1;
            continue;
        }
        let buf: usize = body[i + 1..open].parse().unwrap_or(usize::MAX);
        let Some(close) = body[open..].find(']').map(|c| open + c) else {
            break;
        };
        let expr = &body[open + 1..close];
        let after = body[close + 1..].trim_start();
        if after.starts_with('=') && !after.starts_with("==") {
            stored.insert(buf);
        } else if !expr.contains('[') && index_over_vars(expr, inner) {
            match seen.iter_mut().find(|(k, _)| k.0 == buf && k.1 == expr) {
                Some((_, n)) => *n += 1,
                None => seen.push(((buf, expr.to_string()), 1)),
            }
        }
        i = close + 1;
    }
    seen.into_iter()
        .filter(|((buf, _), _)| !stored.contains(buf))
        .map(|((buf, expr), n)| (BufId::new(buf), expr, n))
        .collect()
}

/// Whether `expr` is index arithmetic over loop variables (`x<k>`), integer literals and
/// `+ - * / % ( )`, naming at least one of `inner`.
fn index_over_vars(expr: &str, inner: &[String]) -> bool {
    let mut names_inner = false;
    for tok in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if tok.is_empty() || tok.bytes().all(|c| c.is_ascii_digit()) || tok == "ti" {
            continue;
        }
        if !(tok.starts_with('x') && tok[1..].bytes().all(|c| c.is_ascii_digit())) {
            return false;
        }
        names_inner |= inner.iter().any(|v| v == tok);
    }
    names_inner
        && expr
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_+-*/%() ".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch-norm backward's pointwise body: six per-channel float vectors read before two
    /// activation-sized bf16 inputs (session 32's slowest resnet50 backward kernels).
    #[test]
    fn a_chunk_reads_streamed_inputs_ahead_before_broadcast_vectors() {
        let mut body = String::new();
        for b in 10..16 {
            body.push_str(&format!("const float c{b} = b{b}[x2];\n"));
        }
        for b in [20, 21] {
            body.push_str(&format!(
                "const float p{b} = tf_bf2f(b{b}[802816*x0 + 256*x1 + x2]);\n"
            ));
        }
        body.push_str("b30[802816*x0 + 256*x1 + x2] = tf_f2bf(p20 + p21 + c10);\n");
        let vars: Vec<String> = ["x0", "x1", "x2"].iter().map(|s| s.to_string()).collect();
        let dtype = |b: BufId| {
            Some(if b.index() >= 20 {
                DType::BFloat16
            } else {
                DType::Float32
            })
        };
        let loads = chunk_loads(&body, &vars, 8, 64, dtype);
        let ids: Vec<usize> = loads.iter().map(|(b, _)| b.index()).collect();
        // Both streamed inputs (4 registers each) first, then as many 8-register vectors as
        // the other 56 registers hold; never the stored buffer.
        assert_eq!(ids, [20, 21, 10, 11, 12, 13, 14, 15]);
        let loads = chunk_loads(&body, &vars, 16, 64, dtype);
        let ids: Vec<usize> = loads.iter().map(|(b, _)| b.index()).collect();
        assert_eq!(ids, [20, 21, 10, 11, 12]);
    }
}
