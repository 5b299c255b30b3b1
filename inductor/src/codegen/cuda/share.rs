//! Kernels printed twice are compiled once. A transformer's layers, a resnet's repeated blocks
//! and their backward passes give many kernels whose text differs only in the ids woven into
//! local names (`b17` for buffer 17, `r8_3` for a value of node 8, `kernel12`): GPT-2's six
//! training layers print 68 forward kernels of 19 distinct bodies and 89 backward kernels of
//! 22. NVRTC's time grows with the kernels in a source, so a kernel whose text equals an earlier
//! one's up to a renaming of those local names is left out of the source, and its launch uses
//! the earlier kernel's symbol with its own arguments.
//!
//! The comparison renames only names the printer makes up (a fixed list of stems, digits
//! stripped), each by its first appearance, so equal canonical texts mean the same kernel up
//! to a consistent renaming of its locals and parameters: the parameters keep their positions
//! (the launch passes each kernel's own buffers in its own order), and anything else (prelude
//! helpers, CUDA builtins such as `expm1f`/`log1pf`/`int64_t`, symbol parameters `s0`,
//! constants) must match verbatim. A stem the printer starts using without a line here is
//! kept verbatim: kernels then stop sharing, never share wrongly.
//!
//! Module globals a kernel declares for itself (a split reduction's workspace and tickets) are
//! in its text, so sharing kernels also share them; kernels of one graph run in order on one
//! stream, and a split kernel leaves its tickets at zero when it ends.

use std::collections::HashMap;

/// Stems (identifier with every run of digits replaced by `#`) of the names the CUDA printer
/// makes up from entity ids.
const LOCAL_STEMS: &[&str] = &[
    "a#",
    "acc#",
    "b#",
    "cr#",
    "cs#",
    "i#",
    "kernel#",
    "kernel#_body",
    "p#_#",
    "p#_#_c",
    "p#_#_i",
    "r#_#",
    "r#_#_c",
    "r#_#_i",
    "rem#",
    "sh#",
    "tf_cnt_kernel#",
    "tf_col#",
    "tf_last#",
    "tf_ws_kernel#",
    "x#",
    "xc#",
];

fn stem(ident: &str) -> String {
    let mut s = String::with_capacity(ident.len());
    let mut in_digits = false;
    for c in ident.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                s.push('#');
            }
            in_digits = true;
        } else {
            s.push(c);
            in_digits = false;
        }
    }
    s
}

/// `text` with every made-up local name replaced by `@n`, n counting names by first
/// appearance. Numbers (`0x1.4f8b58p-17`, `64*x1`) are copied as they are.
pub(super) fn canonical(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut names: HashMap<&str, usize> = HashMap::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_digit() {
            // A number: digits, letters, `.`, `_` and a sign after an exponent letter.
            let start = i;
            i += 1;
            while i < bytes.len() {
                let d = bytes[i];
                let signed =
                    (d == b'+' || d == b'-') && matches!(bytes[i - 1], b'e' | b'E' | b'p' | b'P');
                if d.is_ascii_alphanumeric() || d == b'.' || d == b'_' || signed {
                    i += 1;
                } else {
                    break;
                }
            }
            out.push_str(&text[start..i]);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let ident = &text[start..i];
            if ident.bytes().any(|b| b.is_ascii_digit())
                && LOCAL_STEMS.contains(&stem(ident).as_str())
            {
                let n = names.len();
                let n = *names.entry(ident).or_insert(n);
                out.push('@');
                out.push_str(&n.to_string());
            } else {
                out.push_str(ident);
            }
        } else {
            // Text is ASCII here but copy whole characters all the same.
            let ch = text[i..].chars().next().unwrap_or(' ');
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// Which earlier kernel each printed kernel's text repeats.
#[derive(Default)]
pub(super) struct Shared {
    first: HashMap<String, String>,
}

impl Shared {
    /// The symbol of an earlier kernel whose text equals `text` up to local names, or `None`
    /// (then `text`, the kernel `name`, is remembered).
    pub(super) fn earlier(&mut self, text: &str, name: &str) -> Option<String> {
        let key = canonical(text);
        if let Some(n) = self.first.get(&key) {
            return Some(n.clone());
        }
        self.first.insert(key, name.to_string());
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_differing_in_local_ids_only_are_equal() {
        let a = "extern \"C\" __global__ void kernel3(float *__restrict__ b4, float *b7) {\n  const float r8_0 = b4[64*x1 + 0x1.8p-3];\n  b7[x1] = r8_0;\n}\n";
        let b = "extern \"C\" __global__ void kernel9(float *__restrict__ b20, float *b21) {\n  const float r30_0 = b20[64*x1 + 0x1.8p-3];\n  b21[x1] = r30_0;\n}\n";
        assert_eq!(canonical(a), canonical(b));
        let mut s = Shared::default();
        assert_eq!(s.earlier(a, "kernel3"), None);
        assert_eq!(s.earlier(b, "kernel9").as_deref(), Some("kernel3"));
    }

    #[test]
    fn builtins_constants_and_parameter_order_keep_kernels_apart() {
        let base = "void kernel1(float *b1, float *b2) { b2[x0] = expm1f(b1[x0]) * 2.5f; }";
        for other in [
            // Another math function (a renaming of builtins would make these equal).
            "void kernel2(float *b5, float *b6) { b6[x0] = log1pf(b5[x0]) * 2.5f; }",
            // Another constant.
            "void kernel2(float *b5, float *b6) { b6[x0] = expm1f(b5[x0]) * 3.5f; }",
            // Parameters swapped: the first parameter is written.
            "void kernel2(float *b5, float *b6) { b5[x0] = expm1f(b6[x0]) * 2.5f; }",
            // A symbol parameter is not a local.
            "void kernel2(float *b5, float *b6) { b6[s0] = expm1f(b5[s0]) * 2.5f; }",
        ] {
            let mut s = Shared::default();
            assert_eq!(s.earlier(base, "kernel1"), None);
            assert_eq!(s.earlier(other, "kernel2"), None, "{other}");
        }
    }

    #[test]
    fn numbers_are_not_names() {
        // `0x1p-17` holds `x1`, and `2e-5f` an exponent sign: neither is renamed or split.
        assert_eq!(canonical("x1 + 0x1p-17 + 2e-5f"), "@0 + 0x1p-17 + 2e-5f");
        assert_eq!(canonical("x1 * x1 + x2"), "@0 * @0 + @1");
    }
}
