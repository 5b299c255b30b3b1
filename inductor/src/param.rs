//! Kernels with sizes as arguments (issue 18, phase 2b): one C library for every assignment of a
//! dynamic graph's size symbols whose generated C differs only in integer literals that are
//! polynomials of the symbols.
//!
//! The lowering, scheduler and C printer work on concrete sizes. A dynamic graph is specialized
//! to an assignment and lowered as a static graph would be (cheap, no C compiler); the C at a
//! few assignments near the first one (a grid, each symbol at `v`, `v+1`, `v+2`) is split into
//! tokens, and every integer literal that differs between them is fitted as a polynomial of the
//! symbols with integer coefficients (degree at most 2 per symbol). The result, a [`Template`],
//! prints one C source whose kernels read the symbols' values from one more argument
//! (`args[n]` after the `n` buffers) and compute those literals at run time.
//!
//! Soundness does not rest on the fit: at every assignment a call brings, the graph is lowered
//! at those sizes and its C must equal the template's token for token, each fitted literal
//! equal to its polynomial's value there ([`Template::matches`]). Then the template's library
//! computes what the static C at those sizes would (same statements, same integer values), and
//! it runs with the assignment as its size arguments. Where a size-dependent decision of the
//! lowering differs (a huge-page hint past a size, a row kept in scratch up to a size, an index
//! that simplifies at a small size), the C differs and the assignment needs another template or
//! its own compile; a wrong value is never the outcome.

use std::fmt::Write;

/// A token of generated C: text compared exactly, or a decimal integer literal.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Text(String),
    Int(i64),
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
            match lit.parse::<i64>() {
                Ok(v) if lit.bytes().all(|d| d.is_ascii_digit()) => {
                    if !text.is_empty() {
                        out.push(Tok::Text(std::mem::take(&mut text)));
                    }
                    out.push(Tok::Int(v));
                }
                _ => text.push_str(lit),
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

/// An integer polynomial of the symbols: `(exponents, coefficient)` terms, no zero coefficient.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Poly {
    terms: Vec<(Vec<u32>, i64)>,
}

impl Poly {
    /// The value at `s` (in `i128`, so a fitted value that overflows `i64` is never equal).
    fn eval(&self, s: &[i64]) -> i128 {
        self.terms
            .iter()
            .map(|(e, c)| {
                e.iter()
                    .zip(s)
                    .fold(*c as i128, |acc, (&k, &v)| acc * (v as i128).pow(k))
            })
            .sum()
    }

    /// C for the value, over `int64_t` variables named `names[k]`.
    fn c(&self, names: &[String]) -> String {
        if self.terms.is_empty() {
            return "0".into();
        }
        let mut s = String::from("(");
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
        s
    }
}

/// Fits `values[g]` (the literal at grid point `g`, points in [`grid`] order around `base`) as
/// an integer polynomial of degree at most 2 per symbol; `None` when no such polynomial gives
/// every value exactly.
fn fit(base: &[i64], values: &[i64]) -> Option<Poly> {
    let n = base.len();
    // Tensor-product interpolation: along each axis, values at v, v+1, v+2 become the
    // coefficients of 1, x, x^2 (computed in f64, then rounded and checked exactly).
    let mut a: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    for (axis, &v) in base.iter().enumerate() {
        let stride = 3usize.pow(axis as u32);
        let v = v as f64;
        for start in 0..a.len() {
            if (start / stride) % 3 != 0 {
                continue;
            }
            let (v0, v1, v2) = (a[start], a[start + stride], a[start + 2 * stride]);
            let (d1, d2) = (v1 - v0, v2 - 2.0 * v1 + v0);
            let c2 = d2 / 2.0;
            let c1 = d1 - c2;
            a[start] = v0 - c1 * v + c2 * v * v;
            a[start + stride] = c1 - 2.0 * v * c2;
            a[start + 2 * stride] = c2;
        }
    }
    let mut terms = Vec::new();
    for (g, c) in a.iter().enumerate() {
        let r = c.round();
        if (c - r).abs() > 1e-6 * c.abs().max(1.0) || r.abs() > 9.0e15 {
            return None;
        }
        if r != 0.0 {
            let e = (0..n)
                .map(|k| ((g / 3usize.pow(k as u32)) % 3) as u32)
                .collect();
            terms.push((e, r as i64));
        }
    }
    let p = Poly { terms };
    grid(base)
        .iter()
        .zip(values)
        .all(|(s, &v)| p.eval(s) == v as i128)
        .then_some(p)
}

/// The assignments a template is fitted at: every symbol at `v`, `v + 1` or `v + 2`, the first
/// symbol varying fastest; `base` itself comes first.
pub fn grid(base: &[i64]) -> Vec<Vec<i64>> {
    let n = base.len();
    (0..3usize.pow(n as u32))
        .map(|g| {
            (0..n)
                .map(|k| base[k] + ((g / 3usize.pow(k as u32)) % 3) as i64)
                .collect()
        })
        .collect()
}

/// The most symbols a template is fitted for (the grid has `3^n` points, each a lowering).
pub const MAX_SYMBOLS: usize = 3;

/// A token of a template.
#[derive(Clone, Debug)]
enum TTok {
    Text(String),
    Int(i64),
    Hole(Poly),
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
    /// at `grid(base)[g]`. `None` when the sources differ in more than integer literals or a
    /// literal is no polynomial of the symbols; the reason is returned.
    pub fn fit(base: &[i64], codes: &[String], names: Vec<String>) -> Result<Template, String> {
        assert_eq!(codes.len(), 3usize.pow(base.len() as u32));
        let toks: Vec<Vec<Tok>> = codes.iter().map(|c| tokenize(c)).collect();
        let first = &toks[0];
        if toks.iter().any(|t| t.len() != first.len()) {
            return Err("the kernels' structure depends on the sizes".into());
        }
        let mut out = Vec::with_capacity(first.len());
        let mut holes = 0usize;
        for (i, t) in first.iter().enumerate() {
            match t {
                Tok::Text(s) => {
                    if toks.iter().any(|t| t[i] != toks[0][i]) {
                        return Err("the kernels' structure depends on the sizes".into());
                    }
                    out.push(TTok::Text(s.clone()));
                }
                Tok::Int(v) => {
                    let mut values = Vec::with_capacity(toks.len());
                    for t in &toks {
                        match t[i] {
                            Tok::Int(x) => values.push(x),
                            Tok::Text(_) => {
                                return Err("the kernels' structure depends on the sizes".into())
                            }
                        }
                    }
                    if values.iter().all(|x| x == v) {
                        out.push(TTok::Int(*v));
                    } else {
                        let p = fit(base, &values).ok_or_else(|| {
                            format!(
                                "a size in the kernels is no polynomial of the symbols \
                                 ({values:?} over the grid from {base:?})"
                            )
                        })?;
                        holes += 1;
                        out.push(TTok::Hole(p));
                    }
                }
            }
        }
        let _ = holes;
        Ok(Template { toks: out, names })
    }

    /// Whether `code` (generated at the assignment `s`) is this template at `s`.
    pub fn matches(&self, code: &str, s: &[i64]) -> bool {
        let toks = tokenize(code);
        toks.len() == self.toks.len()
            && toks.iter().zip(&self.toks).all(|(t, u)| match (t, u) {
                (Tok::Text(a), TTok::Text(b)) => a == b,
                (Tok::Int(a), TTok::Int(b)) => a == b,
                (Tok::Int(a), TTok::Hole(p)) => p.eval(s) == *a as i128,
                _ => false,
            })
    }

    /// Whether any literal depends on the symbols.
    pub fn is_parametric(&self) -> bool {
        self.toks.iter().any(|t| matches!(t, TTok::Hole(_)))
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
                TTok::Hole(p) => code.push_str(&p.c(&self.names)),
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
mod tests {
    use super::*;

    #[test]
    fn tokens_leave_identifiers_and_floats_alone() {
        let t = tokenize("b3[x0 + 12*x1] = ((float)0x1.8p+3) + 1e-05 * x12 - 7;");
        let ints: Vec<i64> = t
            .iter()
            .filter_map(|t| match t {
                Tok::Int(v) => Some(*v),
                _ => None,
            })
            .collect();
        assert_eq!(ints, vec![12, 7]);
    }

    #[test]
    fn fits_products_and_constants() {
        let base = [4, 7];
        let pts = grid(&base);
        let values: Vec<i64> = pts.iter().map(|s| 3 * s[0] * s[1] - s[0] + 5).collect();
        let p = fit(&base, &values).unwrap();
        assert_eq!(p.eval(&[100, 33]), 3 * 100 * 33 - 100 + 5);
        let sq: Vec<i64> = pts.iter().map(|s| s[0] * s[0] * s[1]).collect();
        assert_eq!(fit(&base, &sq).unwrap().eval(&[9, 2]), 162);
        // A floor division is no polynomial.
        let half: Vec<i64> = pts.iter().map(|s| s[0] / 2).collect();
        assert!(fit(&base, &half).is_none());
    }

    #[test]
    fn a_template_matches_only_its_own_sizes() {
        let code = |n: i64| {
            format!("void kernel0(void **restrict args) {{\n  for (int64_t x0 = 0; x0 < {}; x0++) b[x0] = 2;\n}}\n", n * 8)
        };
        let base = [5];
        let codes: Vec<String> = grid(&base).iter().map(|s| code(s[0])).collect();
        let t = Template::fit(&base, &codes, vec!["s0".into()]).unwrap();
        assert!(t.matches(&code(40), &[40]));
        assert!(!t.matches(&code(40), &[41]));
        let c = t.render(&|_| Some(1)).unwrap();
        assert!(c.contains("x0 < (INT64_C(8)*s0)"), "{c}");
        assert!(c.contains("const int64_t s0 = tf_sym[0];"), "{c}");
    }
}
