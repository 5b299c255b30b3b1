//! Kernels with sizes as arguments (issue 18, session 12): one C library for every assignment of
//! a dynamic graph's size symbols whose generated C differs only in constants that are functions
//! of the symbols.
//!
//! The lowering, scheduler and C printer work on concrete sizes. A dynamic graph is specialized
//! to an assignment and lowered as a static graph would be (cheap, no C compiler); the C at a
//! grid of assignments ([`nodes_for`]: three values per symbol, of its hint's parity, from
//! [`GENERIC_SIZE`] up, inside the trace's relations) is split into tokens, and every integer
//! literal that differs between them is fitted as `floor(q(s) / den)` with `q` an integer
//! polynomial of degree at most 2 per symbol, every varying float constant as `p(s)` or
//! `1 / p(s)`. The result, a [`Template`], prints one C source whose kernels read the symbols'
//! values from one more argument (`args[n]` after the `n` buffers) and compute those constants
//! at run time. Templates fitted on each parity class of some symbols (a floor division of a
//! size inside a product is a polynomial on each class only) merge into one whose differing
//! literals choose by parity ([`Template::merge_classes`]; the caller decides which symbols).
//!
//! Soundness does not rest on the fit: at every assignment a call brings, the graph is lowered
//! at those sizes and its C must equal the template's token for token, each fitted constant
//! equal to its expression's value there as C computes it ([`Template::matches`]). Then the
//! template's library computes what the static C at those sizes would (same statements, same
//! values), and it runs with the assignment as its size arguments. Where a size-dependent
//! decision of the lowering differs (a huge-page hint past a size, a row kept in scratch up to a
//! size, an index that simplifies at a small size, loops fused because two sizes are equal), the
//! C differs and the assignment needs another template or its own compile; a wrong value is
//! never the outcome.

use std::fmt::Write;

/// A token of generated C: text compared exactly, a decimal integer literal, or a hexadecimal
/// floating literal (the printer's form of every finite float constant, `0x1.8000000000000p-3`).
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Text(String),
    Int(i64),
    /// The value and the literal as printed.
    Float(f64, String),
}

/// The value of a hexadecimal floating literal `0x1.<13 hex digits>p<exp>` (`None`: another
/// form).
fn parse_hex_float(lit: &str) -> Option<f64> {
    let rest = lit.strip_prefix("0x")?;
    let (mant, exp) = rest.split_once('p')?;
    let (int, frac) = mant.split_once('.')?;
    let exp: i32 = exp.parse().ok()?;
    let digits = format!("{int}{frac}");
    if digits.len() > 15 {
        return None;
    }
    let m = u64::from_str_radix(&digits, 16).ok()?;
    // Exact: at most 53 significant bits, scaled by a power of two.
    Some(m as f64 * 2f64.powi(exp - 4 * frac.len() as i32))
}

/// Splits C source into text runs and decimal integer literals (digits not part of an
/// identifier or of a floating literal such as `0x1.8p+3` or `1e-05`).
fn tokenize(code: &str) -> Vec<Tok> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            text.push_str(&code[s..i]);
        } else if c.is_ascii_digit() {
            let s = i;
            while i < b.len() {
                let d = b[i];
                let exp_sign = (d == b'+' || d == b'-')
                    && i > s
                    && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P')
                    && !code[s..i].bytes().all(|c| c.is_ascii_digit());
                if ident(d) || d == b'.' || exp_sign {
                    i += 1;
                } else {
                    break;
                }
            }
            let lit = &code[s..i];
            let tok = match lit.parse::<i64>() {
                Ok(v) if lit.bytes().all(|d| d.is_ascii_digit()) => Some(Tok::Int(v)),
                _ => parse_hex_float(lit).map(|v| Tok::Float(v, lit.to_string())),
            };
            match tok {
                Some(t) => {
                    if !text.is_empty() {
                        out.push(Tok::Text(std::mem::take(&mut text)));
                    }
                    out.push(t);
                }
                None => text.push_str(lit),
            }
        } else {
            let s = i;
            i += 1;
            while i < b.len() && !b[i].is_ascii_alphanumeric() && b[i] != b'_' {
                i += 1;
            }
            text.push_str(&code[s..i]);
        }
    }
    if !text.is_empty() {
        out.push(Tok::Text(text));
    }
    out
}

/// `floor(q(s) / den)` for a polynomial `q` of the symbols with integer coefficients
/// (`(exponents, coefficient)` terms, no zero coefficient): a polynomial with rational
/// coefficients (`s1 * (s0 + 2) / 2` after a `view(B, -1, 2)`), or a floor division of one
/// (`B // 2 + 1` as a slice bound), which C computes as `q / den` over the `int64_t` sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Poly {
    terms: Vec<(Vec<u32>, i64)>,
    den: i64,
}

impl Poly {
    /// The value at `s` as C computes it (truncating division, `q >= 0` required); `None`
    /// where C's `int64_t` arithmetic could overflow or `q` is negative and not a multiple.
    fn eval(&self, s: &[i64]) -> Option<i128> {
        let mut q: i128 = 0;
        for (e, c) in &self.terms {
            let mut t = *c as i128;
            for (&k, &v) in e.iter().zip(s) {
                for _ in 0..k {
                    t = t.checked_mul(v as i128)?;
                    if t.unsigned_abs() >= 1u128 << 62 {
                        return None;
                    }
                }
            }
            q += t;
            if q.unsigned_abs() >= 1u128 << 62 {
                return None;
            }
        }
        if q < 0 && q % self.den as i128 != 0 {
            return None;
        }
        Some(q / self.den as i128)
    }

    /// C for the value, over `int64_t` variables named `names[k]`.
    fn c(&self, names: &[String]) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let mut s = String::from(if self.den != 1 { "((" } else { "(" });
        for (i, (e, c)) in self.terms.iter().enumerate() {
            if i > 0 {
                s.push_str(" + ");
            }
            let mut factors: Vec<String> = Vec::new();
            if *c != 1 || e.iter().all(|&k| k == 0) {
                factors.push(format!("INT64_C({c})"));
            }
            for (k, &p) in e.iter().enumerate() {
                for _ in 0..p {
                    factors.push(names[k].clone());
                }
            }
            s.push_str(&factors.join("*"));
        }
        s.push(')');
        if self.den != 1 {
            s.push_str(&format!(" / INT64_C({}))", self.den));
        }
        s
    }
}

/// Fits `values[g]` (the literal at `grid(nodes)[g]`) as an integer polynomial of degree at most
/// 2 per symbol; `None` when no such polynomial gives every value exactly.
fn fit(nodes: &[Vec<i64>], values: &[i64]) -> Option<Poly> {
    let n = nodes.len();
    let radix: Vec<usize> = nodes.iter().map(|x| x.len()).collect();
    let place = |k: usize| radix[..k].iter().product::<usize>();
    // Tensor-product interpolation: along each axis, the values at the axis's three nodes
    // become the coefficients of 1, x, x^2 (Newton's divided differences, in f64; the result
    // is rounded and checked exactly).
    let mut a: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    for (axis, xs) in nodes.iter().enumerate() {
        if xs.len() == 1 {
            continue;
        }
        let stride = place(axis);
        let (x0, x1, x2) = (xs[0] as f64, xs[1] as f64, xs[2] as f64);
        for start in 0..a.len() {
            if (start / stride) % 3 != 0 {
                continue;
            }
            let (f0, f1, f2) = (a[start], a[start + stride], a[start + 2 * stride]);
            let d01 = (f1 - f0) / (x1 - x0);
            let d12 = (f2 - f1) / (x2 - x1);
            let c2 = (d12 - d01) / (x2 - x0);
            a[start] = f0 - d01 * x0 + c2 * x0 * x1;
            a[start + stride] = d01 - c2 * (x0 + x1);
            a[start + 2 * stride] = c2;
        }
    }
    // Rational coefficients with a small common denominator: the polynomial's values are
    // integers on the grid, or it is a floor division of one.
    let mut den = 1i64;
    for c in &a {
        let d = (1..=64)
            .find(|d| {
                let x = c * *d as f64;
                (x - x.round()).abs() <= 1e-6 * x.abs().max(1.0)
            })
            .unwrap_or(0);
        if d == 0 {
            return None;
        }
        den = lcm(den, d);
        if den > 64 {
            return None;
        }
    }
    let mut terms = Vec::new();
    for (g, c) in a.iter().enumerate() {
        let r = (c * den as f64).round();
        if r.abs() > 9.0e15 {
            return None;
        }
        if r != 0.0 {
            let e = (0..n).map(|k| ((g / place(k)) % radix[k]) as u32).collect();
            terms.push((e, r as i64));
        }
    }
    let p = Poly { terms, den };
    grid(nodes)
        .iter()
        .zip(values)
        .all(|(s, &v)| p.eval(s) == Some(v as i128))
        .then_some(p)
}

fn lcm(a: i64, b: i64) -> i64 {
    fn gcd(a: i64, b: i64) -> i64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    a / gcd(a, b) * b
}

/// Every combination of the symbols' nodes (symbol `k` at each of `nodes[k]`, one or three
/// values), the first symbol varying fastest.
pub fn grid(nodes: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let total: usize = nodes.iter().map(|x| x.len()).product();
    (0..total)
        .map(|mut g| {
            nodes
                .iter()
                .map(|xs| {
                    let v = xs[g % xs.len()];
                    g /= xs.len();
                    v
                })
                .collect()
        })
        .collect()
}

/// Where a template for a graph first called at `hints` is fitted: each symbol at three
/// values of its hint's parity, at least
/// [`GENERIC_SIZE`] (below it the lowering's choices for tiny sizes show: a reduction over 3
/// rows is not blocked, an index over 2 values simplifies), no two symbols at a common value
/// (equal sizes fuse loops that differ in general), and every point allowed by `ok` (the
/// trace's relations and bounds). A symbol that cannot move so (`s2 == 32` guarded) stays at
/// its hint: the template takes its value as a constant.
pub fn nodes_for(hints: &[i64], ok: &dyn Fn(&[i64]) -> bool) -> Vec<Vec<i64>> {
    let mut taken: Vec<i64> = hints.to_vec();
    let mut out = Vec::with_capacity(hints.len());
    for (k, &h) in hints.iter().enumerate() {
        let mut picked = Vec::with_capacity(3);
        // Same parity as the hint, from GENERIC_SIZE up: a floor division by 2 inside a
        // product (`(s0 // 2 + 1) * 8`) is a polynomial on one parity class.
        let mut v = h + 2 * (((GENERIC_SIZE - h).max(0) + 1) / 2);
        for _ in 0..48 {
            let mut point = hints.to_vec();
            point[k] = v;
            if (v == h || !taken.contains(&v)) && ok(&point) {
                picked.push(v);
                if picked.len() == 3 {
                    break;
                }
            }
            v += 2;
        }
        if picked.len() == 3 {
            taken.extend(&picked);
            out.push(picked);
        } else {
            out.push(vec![h]);
        }
    }
    out
}

/// The smallest size a template is fitted at (see [`nodes_for`]).
pub const GENERIC_SIZE: i64 = 8;

/// The most symbols a template is fitted for (the grid has `3^n` points, each a lowering).
pub const MAX_SYMBOLS: usize = 3;

/// A token of a template.
#[derive(Clone, Debug, PartialEq)]
enum TTok {
    Text(String),
    Int(i64),
    Hole(Poly),
    /// A float constant: as printed, or as a function of the sizes.
    Float(String),
    FloatHole(FloatHole),
    /// A literal with one form per parity class of some symbols (`(s0 & 1) ? a : b`): the
    /// symbols (indices into the assignment) and, per class, the parities (bit `i`: symbol
    /// `i` of the list is odd) and the form there. A floor division of a size inside a
    /// product (`(s0 / 2 + 1) * 8`) is a polynomial on each class.
    Parity(Vec<usize>, Vec<(u32, TTok)>),
}

impl TTok {
    /// This token's form at `s` (a parity class's; `None`: no class of `s`'s).
    fn at(&self, s: &[i64]) -> Option<&TTok> {
        match self {
            TTok::Parity(syms, pieces) => {
                let class = Template::class_of(syms, s);
                pieces
                    .iter()
                    .find(|(c, _)| *c == class)
                    .and_then(|(_, t)| t.at(s))
            }
            t => Some(t),
        }
    }
}

/// A float constant computed from the sizes: `p` (`recip`: `1 / p`, a mean's divisor) in
/// double, rounded to float when the literal is cast to `float` (as the printer rounds it).
#[derive(Clone, Debug, PartialEq)]
struct FloatHole {
    p: Poly,
    recip: bool,
    f32: bool,
}

impl FloatHole {
    fn value(&self, s: &[i64]) -> Option<f64> {
        let p = self.p.eval(s)?;
        if self.p.den != 1 || p.unsigned_abs() > (1u128 << 53) {
            return None;
        }
        let v = if self.recip { 1.0 / p as f64 } else { p as f64 };
        Some(if self.f32 { v as f32 as f64 } else { v })
    }

    /// Fits the float values over the grid as `p` or `1 / p`.
    fn fit(nodes: &[Vec<i64>], values: &[f64], f32: bool) -> Option<FloatHole> {
        for recip in [true, false] {
            let ints: Option<Vec<i64>> = values
                .iter()
                .map(|&v| {
                    let x = if recip { 1.0 / v } else { v };
                    let r = x.round();
                    (x.is_finite() && r.abs() < 9.0e15).then_some(r as i64)
                })
                .collect();
            let Some(ints) = ints else { continue };
            if let Some(p) = fit(nodes, &ints) {
                let h = FloatHole { p, recip, f32 };
                let pts = grid(nodes);
                if pts.iter().zip(values).all(|(s, &v)| h.value(s) == Some(v)) {
                    return Some(h);
                }
            }
        }
        None
    }

    fn c(&self, names: &[String]) -> String {
        let p = self.p.c(names);
        if self.recip {
            format!("(1.0 / (double){p})")
        } else {
            format!("((double){p})")
        }
    }
}

/// Where tokens of sources that should agree first differ, for the log.
fn differs(a: &[Tok], b: &[Tok]) -> String {
    let show = |t: &[Tok], i: usize| {
        t[i.saturating_sub(3)..(i + 3).min(t.len())]
            .iter()
            .map(|t| match t {
                Tok::Text(s) => s.clone(),
                Tok::Int(v) => v.to_string(),
                Tok::Float(_, s) => s.clone(),
            })
            .collect::<String>()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let i = a
        .iter()
        .zip(b)
        .position(|(x, y)| {
            std::mem::discriminant(x) != std::mem::discriminant(y)
                || matches!((x, y), (Tok::Text(p), Tok::Text(q)) if p != q)
        })
        .unwrap_or(a.len().min(b.len()));
    if i >= a.len().min(b.len()) {
        return "one has more kernels".into();
    }
    format!("`{}` / `{}`", show(a, i), show(b, i))
}

/// C source whose size-dependent integer literals are polynomials of the size symbols (see the
/// module doc).
#[derive(Clone, Debug)]
pub struct Template {
    toks: Vec<TTok>,
    /// The C names of the symbols, in assignment order.
    names: Vec<String>,
}

impl Template {
    /// Fits a template to `codes[g]`, the generated C (before [`crate::cache::finish_source`])
    /// at `grid(nodes)[g]`. An error when the sources differ in more than constants or a
    /// constant is no polynomial of the symbols (or, for a float, its reciprocal).
    ///
    /// `check`: the C at one more assignment, off the grid, which the template must match (three
    /// nodes fit any values with degree 2; a size that is no polynomial shows there).
    pub fn fit(
        nodes: &[Vec<i64>],
        codes: &[String],
        names: Vec<String>,
        check: Option<(&[i64], &str)>,
    ) -> Result<Template, String> {
        let pts = grid(nodes);
        assert_eq!(codes.len(), pts.len());
        let toks: Vec<Vec<Tok>> = codes.iter().map(|c| tokenize(c)).collect();
        let first = &toks[0];
        let structure = |g: usize| {
            format!(
                "the kernels' structure depends on the sizes ({} at {:?} / {:?})",
                differs(first, &toks[g]),
                pts[0],
                pts[g]
            )
        };
        if let Some(g) = toks.iter().position(|t| t.len() != first.len()) {
            return Err(structure(g));
        }
        let mut out = Vec::with_capacity(first.len());
        for (i, t) in first.iter().enumerate() {
            match t {
                Tok::Text(s) => {
                    if let Some(g) = toks.iter().position(|t| t[i] != first[i]) {
                        return Err(structure(g));
                    }
                    out.push(TTok::Text(s.clone()));
                }
                Tok::Int(v) => {
                    let mut values = Vec::with_capacity(toks.len());
                    for (g, t) in toks.iter().enumerate() {
                        match t[i] {
                            Tok::Int(x) => values.push(x),
                            _ => return Err(structure(g)),
                        }
                    }
                    if values.iter().all(|x| x == v) {
                        out.push(TTok::Int(*v));
                    } else {
                        let p = fit(nodes, &values).ok_or_else(|| {
                            format!(
                                "a size in the kernels is no polynomial of the symbols \
                                 ({values:?} at {pts:?})"
                            )
                        })?;
                        out.push(TTok::Hole(p));
                    }
                }
                Tok::Float(_, lit) => {
                    let mut values = Vec::with_capacity(toks.len());
                    for (g, t) in toks.iter().enumerate() {
                        match &t[i] {
                            Tok::Float(x, _) => values.push(*x),
                            _ => return Err(structure(g)),
                        }
                    }
                    if toks.iter().all(|t| t[i] == first[i]) {
                        out.push(TTok::Float(lit.clone()));
                    } else {
                        let f32 =
                            matches!(out.last(), Some(TTok::Text(s)) if s.ends_with("(float)"));
                        let h = FloatHole::fit(nodes, &values, f32).ok_or_else(|| {
                            format!(
                                "a constant in the kernels is no function of the sizes \
                                 ({values:?} at {pts:?})"
                            )
                        })?;
                        out.push(TTok::FloatHole(h));
                    }
                }
            }
        }
        let t = Template { toks: out, names };
        if let Some((s, code)) = check {
            if let Some(m) = t.mismatch(code, s) {
                return Err(format!(
                    "the kernels at {s:?} are not the ones fitted at {pts:?}: {m}"
                ));
            }
        }
        Ok(t)
    }

    /// Whether `code` (generated at the assignment `s`) is this template at `s`.
    pub fn matches(&self, code: &str, s: &[i64]) -> bool {
        let toks = tokenize(code);
        toks.len() == self.toks.len()
            && toks
                .iter()
                .zip(&self.toks)
                .all(|(t, u)| Template::tok_matches(t, u, s))
    }

    /// Where `code` (generated at `s`) first differs from this template, for the log.
    pub fn mismatch(&self, code: &str, s: &[i64]) -> Option<String> {
        let toks = tokenize(code);
        let as_tok = |t: &TTok| match t.at(s).unwrap_or(t) {
            TTok::Text(x) => Tok::Text(x.clone()),
            TTok::Int(v) => Tok::Int(*v),
            TTok::Hole(p) => p
                .eval(s)
                .map_or(Tok::Text("?".into()), |v| Tok::Int(v as i64)),
            TTok::Float(x) => Tok::Float(0.0, x.clone()),
            TTok::FloatHole(h) => Tok::Float(h.value(s).unwrap_or(f64::NAN), String::new()),
            TTok::Parity(..) => Tok::Text("?".into()),
        };
        let mine: Vec<Tok> = self.toks.iter().map(as_tok).collect();
        let i = toks
            .iter()
            .zip(&self.toks)
            .position(|(t, u)| !Template::tok_matches(t, u, s))
            .unwrap_or(toks.len().min(mine.len()));
        if i >= toks.len().min(mine.len()) && toks.len() == mine.len() {
            return None;
        }
        let show = |t: &[Tok]| {
            t[i.saturating_sub(4)..(i + 3).min(t.len())]
                .iter()
                .map(|t| match t {
                    Tok::Text(s) => s.clone(),
                    Tok::Int(v) => v.to_string(),
                    Tok::Float(v, s) if s.is_empty() => format!("{v:e}"),
                    Tok::Float(_, s) => s.clone(),
                })
                .collect::<String>()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        Some(format!(
            "`{}` where they have `{}`",
            show(&toks),
            show(&mine)
        ))
    }

    fn tok_matches(t: &Tok, u: &TTok, s: &[i64]) -> bool {
        let Some(u) = u.at(s) else {
            return false;
        };
        match (t, u) {
            (Tok::Text(a), TTok::Text(b)) => a == b,
            (Tok::Int(a), TTok::Int(b)) => a == b,
            (Tok::Int(a), TTok::Hole(p)) => p.eval(s) == Some(*a as i128),
            (Tok::Float(_, a), TTok::Float(b)) => a == b,
            (Tok::Float(a, _), TTok::FloatHole(h)) => h.value(s) == Some(*a),
            _ => false,
        }
    }

    /// Whether any literal depends on the symbols.
    pub fn is_parametric(&self) -> bool {
        self.toks
            .iter()
            .any(|t| matches!(t, TTok::Hole(_) | TTok::FloatHole(_) | TTok::Parity(..)))
    }

    /// The parity class of `s` over the symbols `syms` (bit `i`: `s[syms[i]]` is odd).
    fn class_of(syms: &[usize], s: &[i64]) -> u32 {
        syms.iter()
            .enumerate()
            .map(|(i, &k)| ((s[k] & 1) as u32) << i)
            .sum()
    }

    /// One template from templates fitted on each parity class of the symbols `syms`
    /// (`classes[c]` for class `c`, as [`Template::class_of`] numbers them): the sources
    /// must agree but for literals; a literal that differs between classes takes one form per
    /// class. An error where the kernels' structure differs between classes.
    pub fn merge_classes(syms: Vec<usize>, classes: Vec<Template>) -> Result<Template, String> {
        let first = &classes[0];
        if classes.iter().any(|t| t.toks.len() != first.toks.len()) {
            return Err("the kernels' structure depends on the sizes' parity".into());
        }
        let mut toks = Vec::with_capacity(first.toks.len());
        for (i, t) in first.toks.iter().enumerate() {
            if classes.iter().all(|c| c.toks[i] == *t) {
                toks.push(t.clone());
                continue;
            }
            let literal = |t: &TTok| !matches!(t, TTok::Text(_) | TTok::Parity(..));
            if !classes.iter().all(|c| literal(&c.toks[i])) {
                return Err("the kernels' structure depends on the sizes' parity".into());
            }
            let pieces = classes
                .iter()
                .enumerate()
                .map(|(c, t)| (c as u32, t.toks[i].clone()))
                .collect();
            toks.push(TTok::Parity(syms.clone(), pieces));
        }
        Ok(Template {
            toks,
            names: first.names.clone(),
        })
    }

    /// C for a literal token (see [`Template::render`]).
    fn literal_c(&self, t: &TTok) -> String {
        match t {
            TTok::Text(s) | TTok::Float(s) => s.clone(),
            TTok::Int(v) => v.to_string(),
            TTok::Hole(p) => p.c(&self.names),
            TTok::FloatHole(h) => h.c(&self.names),
            TTok::Parity(syms, pieces) => {
                let mut out = String::from("(");
                let last = pieces.len() - 1;
                for (n, (class, t)) in pieces.iter().enumerate() {
                    if n < last {
                        let test: Vec<String> = syms
                            .iter()
                            .enumerate()
                            .map(|(i, &k)| {
                                format!("({} & 1) == {}", self.names[k], (class >> i) & 1)
                            })
                            .collect();
                        let _ = write!(out, "{} ? {} : ", test.join(" && "), self.literal_c(t));
                    } else {
                        let _ = write!(out, "{})", self.literal_c(t));
                    }
                }
                out
            }
        }
    }

    /// The template as C: each kernel `void NAME(void **restrict args) {` whose buffers are
    /// `nbufs[NAME]` reads the symbols from `args[nbufs]` (a `const int64_t *`) first.
    pub fn render(&self, nbufs: &dyn Fn(&str) -> Option<usize>) -> Result<String, String> {
        let mut code = String::new();
        for t in &self.toks {
            match t {
                TTok::Text(s) => code.push_str(s),
                TTok::Int(v) => {
                    let _ = write!(code, "{v}");
                }
                TTok::Hole(_) | TTok::Parity(..) => {
                    // `INT64_C(16)` pastes a suffix onto its argument: an expression there
                    // becomes a parenthesized one.
                    if code.ends_with("INT64_C(") {
                        code.truncate(code.len() - "INT64_C(".len());
                        code.push('(');
                    }
                    code.push_str(&self.literal_c(t))
                }
                TTok::Float(lit) => code.push_str(lit),
                TTok::FloatHole(h) => code.push_str(&h.c(&self.names)),
            }
        }
        // Insert the symbols' reads at the top of every kernel.
        const SIG: &str = "(void **restrict args) {\n";
        let mut out = String::with_capacity(code.len() + 1024);
        let mut rest = code.as_str();
        while let Some(at) = rest.find(SIG) {
            let head = &rest[..at];
            let name_start = head
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .map_or(0, |p| p + 1);
            let name = &head[name_start..];
            let n = nbufs(name).ok_or_else(|| format!("no kernel named {name}"))?;
            out.push_str(&rest[..at + SIG.len()]);
            let _ = writeln!(
                out,
                "  const int64_t *const tf_sym = (const int64_t *)args[{n}];"
            );
            for (k, nm) in self.names.iter().enumerate() {
                let _ = writeln!(out, "  const int64_t {nm} = tf_sym[{k}]; (void){nm};");
            }
            rest = &rest[at + SIG.len()..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
