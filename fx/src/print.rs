//! Human-readable renderings of a graph: Python source in the style of torch.fx's
//! `print_readable` (one assignment per node, with its metadata in a trailing comment), and
//! Graphviz DOT for a picture of the dataflow.
//!
//! The Python is meant to be read (logs, `explain`, dumps) and to run: Python operators print
//! as operators (`add = x + y`, `getitem = x[0, 1:]`), every constant as a valid literal.

use std::fmt::Write;

use crate::graph::{Arg, Graph, Node, NodeKind, Target};
use crate::meta::{DType, Dim, NodeMeta, TensorMeta};

/// torch.fx's short dtype names (`f32`, `bf16`, `b8`).
pub fn dtype_abbr(d: DType) -> &'static str {
    match d {
        DType::Bool => "b8",
        DType::UInt8 => "u8",
        DType::Int8 => "i8",
        DType::Int16 => "i16",
        DType::Int32 => "i32",
        DType::Int64 => "i64",
        DType::Float16 => "f16",
        DType::BFloat16 => "bf16",
        DType::Float32 => "f32",
        DType::Float64 => "f64",
        DType::Complex64 => "c64",
        DType::Complex128 => "c128",
    }
}

fn dims(d: &[Dim]) -> String {
    d.iter().map(Dim::to_string).collect::<Vec<_>>().join(", ")
}

/// Row-major strides, where they can be told from the sizes alone.
fn is_row_major(t: &TensorMeta) -> bool {
    let (Some(sizes), Some(strides)) = (t.known_sizes(), t.known_strides()) else {
        return false;
    };
    crate::infer::layout::is_contiguous(&sizes, &strides)
}

/// `f32[2, 3]`, plus strides when not row-major, the device when not the CPU, and `grad`
/// when the tensor requires grad.
pub fn describe_meta(meta: &NodeMeta) -> Option<String> {
    Some(match meta {
        NodeMeta::Tensor(t) => {
            let mut s = format!("{}[{}]", dtype_abbr(t.dtype), dims(&t.sizes));
            if !is_row_major(t) {
                let _ = write!(s, " stride=({})", dims(&t.strides));
            }
            if t.device.kind != "cpu" {
                let _ = write!(s, " {}", t.device);
            }
            if t.requires_grad {
                s.push_str(" grad");
            }
            s
        }
        NodeMeta::Tuple(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|m| describe_meta(m).unwrap_or_else(|| "?".into()))
                .collect();
            format!("({})", parts.join(", "))
        }
        NodeMeta::Int(v) => format!("int {v}"),
        NodeMeta::SymInt(e) => format!("sym_int {e}"),
        NodeMeta::SymFloat(e) => format!("sym_float {e}"),
        NodeMeta::Float(v) => format!("float {}", float_literal(*v)),
        NodeMeta::Bool(v) => format!("bool {}", if *v { "True" } else { "False" }),
        NodeMeta::None => return None,
    })
}

/// A Python float literal that reads back as the same value.
fn float_literal(v: f64) -> String {
    if v.is_nan() {
        "float('nan')".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "float('inf')"
        } else {
            "float('-inf')"
        }
        .into()
    } else {
        let s = format!("{v:?}");
        if s.contains(['.', 'e', 'E']) {
            s
        } else {
            format!("{s}.0")
        }
    }
}

/// A Python string literal (single-quoted, like `repr`).
fn str_literal(s: &str) -> String {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

struct Printer<'a> {
    graph: &'a Graph,
}

impl Printer<'_> {
    fn arg(&self, a: &Arg) -> String {
        match a {
            Arg::Node(n) => self.graph.node(*n).name.clone(),
            Arg::None => "None".into(),
            Arg::Bool(b) => if *b { "True" } else { "False" }.into(),
            Arg::Int(i) => i.to_string(),
            Arg::Float(f) => float_literal(*f),
            Arg::Str(s) => str_literal(s),
            Arg::DType(d) => format!("torch.{}", d.torch_name()),
            Arg::Device(d) => match d.index {
                Some(i) => format!("torch.device({}, {i})", str_literal(&d.kind)),
                None => format!("torch.device({})", str_literal(&d.kind)),
            },
            Arg::TorchAttr(name) => name.clone(),
            Arg::Tuple(items) => match items.as_slice() {
                [one] => format!("({},)", self.arg(one)),
                _ => format!("({})", self.args(items)),
            },
            Arg::List(items) => format!("[{}]", self.args(items)),
            Arg::Slice(a, b, c) => {
                format!("slice({}, {}, {})", self.arg(a), self.arg(b), self.arg(c))
            }
            Arg::Ellipsis => "...".into(),
        }
    }

    fn args(&self, items: &[Arg]) -> String {
        items
            .iter()
            .map(|a| self.arg(a))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// An index as written between brackets: slices as `a:b:c`, tuples without parentheses.
    fn subscript(&self, a: &Arg) -> String {
        match a {
            Arg::Slice(start, stop, step) => {
                let part = |x: &Arg| match x {
                    Arg::None => String::new(),
                    x => self.arg(x),
                };
                let mut s = format!("{}:{}", part(start), part(stop));
                if !matches!(**step, Arg::None) {
                    let _ = write!(s, ":{}", part(step));
                }
                s
            }
            Arg::Tuple(items) if items.is_empty() => "()".into(),
            Arg::Tuple(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.subscript_item(i)).collect();
                if parts.len() == 1 {
                    format!("{},", parts[0])
                } else {
                    parts.join(", ")
                }
            }
            a => self.arg(a),
        }
    }

    fn subscript_item(&self, a: &Arg) -> String {
        match a {
            Arg::Slice(..) => self.subscript(a),
            a => self.arg(a),
        }
    }

    /// The right-hand side of a call node.
    fn call(&self, target: &Target, args: &[Arg], kwargs: &[(String, Arg)]) -> String {
        let mut parts: Vec<String> = Vec::new();
        match target {
            Target::Function(path) => {
                if kwargs.is_empty() {
                    if let Some(expr) = self.operator(path, args) {
                        return expr;
                    }
                }
                parts.extend(args.iter().map(|a| self.arg(a)));
                parts.extend(kwargs.iter().map(|(k, v)| format!("{k}={}", self.arg(v))));
                format!("{path}({})", parts.join(", "))
            }
            Target::Method(name) => {
                let receiver = args.first().map_or_else(|| "None".into(), |a| self.arg(a));
                parts.extend(args.iter().skip(1).map(|a| self.arg(a)));
                parts.extend(kwargs.iter().map(|(k, v)| format!("{k}={}", self.arg(v))));
                format!("{receiver}.{name}({})", parts.join(", "))
            }
        }
    }

    /// `operator.add(x, y)` as `x + y`, `operator.getitem(x, i)` as `x[i]`.
    fn operator(&self, path: &str, args: &[Arg]) -> Option<String> {
        let name = path
            .strip_prefix("operator.")
            .or_else(|| path.strip_prefix("_operator."))?;
        let binary = match name {
            "add" => "+",
            "sub" => "-",
            "mul" => "*",
            "truediv" => "/",
            "floordiv" => "//",
            "mod" => "%",
            "pow" => "**",
            "matmul" => "@",
            "and_" => "&",
            "or_" => "|",
            "xor" => "^",
            "lshift" => "<<",
            "rshift" => ">>",
            "eq" => "==",
            "ne" => "!=",
            "lt" => "<",
            "le" => "<=",
            "gt" => ">",
            "ge" => ">=",
            _ => "",
        };
        match (name, args) {
            (_, [a, b]) if !binary.is_empty() => {
                Some(format!("{} {binary} {}", self.arg(a), self.arg(b)))
            }
            ("getitem", [a, i]) => Some(format!("{}[{}]", self.arg(a), self.subscript(i))),
            ("neg", [a]) => Some(format!("-{}", self.arg(a))),
            ("pos", [a]) => Some(format!("+{}", self.arg(a))),
            ("invert", [a]) => Some(format!("~{}", self.arg(a))),
            _ => None,
        }
    }
}

impl Graph {
    /// The graph as a Python function `def {fn_name}(self, inputs...)`, one line per call, with
    /// each value's metadata in a trailing comment.
    pub fn python_code(&self, fn_name: &str) -> String {
        let p = Printer { graph: self };
        let mut inputs: Vec<(usize, &Node)> = self
            .nodes()
            .filter_map(|(_, n)| match n.kind {
                NodeKind::Placeholder { index } => Some((index, n)),
                _ => None,
            })
            .collect();
        inputs.sort_by_key(|(i, _)| *i);
        let mut params = vec!["self".to_string()];
        params.extend(inputs.iter().map(|(_, n)| n.name.clone()));
        let mut out = format!("def {fn_name}({}):\n", params.join(", "));
        for (_, n) in &inputs {
            if let Some(m) = describe_meta(&n.meta) {
                let _ = writeln!(out, "    # {}: {m}", n.name);
            }
        }
        let mut returned = false;
        for (_, node) in self.nodes() {
            match &node.kind {
                NodeKind::Placeholder { .. } => {}
                NodeKind::Call {
                    target,
                    args,
                    kwargs,
                } => {
                    let _ = write!(out, "    {} = {}", node.name, p.call(target, args, kwargs));
                    if let Some(m) = describe_meta(&node.meta) {
                        let _ = write!(out, "  # {m}");
                    }
                    out.push('\n');
                }
                NodeKind::Output { values } => {
                    let _ = writeln!(out, "    return {}", p.arg(&Arg::Tuple(values.clone())));
                    returned = true;
                }
            }
        }
        if !returned {
            out.push_str("    return ()\n");
        }
        out
    }

    /// The graph in Graphviz DOT: a box per node labelled with its name, what it calls, and its
    /// metadata, and an edge per producer/consumer pair.
    pub fn to_dot(&self) -> String {
        let escape = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut out = String::from("digraph fx {\n    node [shape=box, fontname=\"monospace\"];\n");
        for (_, node) in self.nodes() {
            let what = match &node.kind {
                NodeKind::Placeholder { .. } => "placeholder".to_string(),
                NodeKind::Call { target, .. } => match target {
                    Target::Function(f) => f.clone(),
                    Target::Method(m) => format!(".{m}()"),
                },
                NodeKind::Output { .. } => "output".to_string(),
            };
            let mut label = format!("{}\\n{}", escape(&node.name), escape(&what));
            if let Some(m) = describe_meta(&node.meta) {
                let _ = write!(label, "\\n{}", escape(&m));
            }
            let _ = writeln!(out, "    \"{}\" [label=\"{label}\"];", escape(&node.name));
        }
        for (_, node) in self.nodes() {
            let mut seen = Vec::new();
            for input in node.inputs() {
                if !seen.contains(&input) {
                    seen.push(input);
                    let _ = writeln!(
                        out,
                        "    \"{}\" -> \"{}\";",
                        escape(&self.node(input).name),
                        escape(&node.name)
                    );
                }
            }
        }
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests;
