//! Layering: no import circles between the modules of `tracer`, `inductor`, `fx` and `bytecode`.
//!
//! Why: a circle between modules means neither can be read, tested or moved without the other;
//! design review 2 (`../shared/design/review-2.md`, "Circles") found four, and issue 12 opened
//! them with mechanical moves. This test keeps them open: it reads every `src/**/*.rs` of each
//! crate, builds the graph "module A names an item of module B" and fails on any strongly
//! connected component of more than one module, printing the cycle and the items that tie it.
//!
//! What counts as a reference: every `use` declaration (nested trees expanded, `as` renames
//! followed; importing a module alone is not, the paths through it are) and every path in code
//! that starts with `crate::`, `super::`, `self::`, the name of a child module or a name bound
//! by a `use`. A path through a re-export (`crate::InductorError` where `lib.rs` says
//! `pub use error::InductorError`) is followed to the module that defines the item, so a crate
//! root or `mod.rs` that only re-exports is not a hub. Comments and string literals are skipped,
//! so doc links do not count. Method calls need no path and do not count: methods of one type
//! split over several files (`impl Tracer` in `interp/step.rs`, `interp/calls/*.rs`, ...) tie
//! those files to the file that defines the type only, never to each other.
//!
//! A module's edges into its own descendants are not counted: a parent declares its children,
//! dispatches to them and re-exports them, so `mod.rs` -> leaf is the expected direction, and a
//! leaf naming what its parent defines (an up-arrow: `use super::Tracer` in an `impl Tracer`
//! file, `use super::InferError` in an `infer/` rule) closes no circle by itself. A circle is
//! therefore always between siblings or cousins, possibly through an up-arrow: `vars -> ops`
//! and `ops -> vars`, or `lower -> target` and `target -> lower`.
//!
//! Run with `LAYERING_PRINT=1 cargo test -p tracer --test layering -- --nocapture` to print
//! the strict components (parent-to-child edges included, no allow-list) of each crate.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Edges that may close a circle, as `(crate, from, to, item, why)`; module paths are written
/// the way `use crate::...` spells them ("" is the crate root, `*m` is any descendant of `m`),
/// an item `*` is every item on that edge. Each entry must say why the circle cannot be opened.
/// An entry that no longer matches an edge fails the test, so the list only shrinks. Issue 12
/// opened every circle of tracer, inductor and fx; what is left is bytecode's generated tables.
#[rustfmt::skip]
const ALLOWED: &[(&str, &str, &str, &str, &str)] = &[
    // `opcode_tables.rs` is generated (bytecode/gen/gen_opcodes.py): data whose records are
    // `opcode.rs`'s types, which `opcode.rs` looks names and numbers up in. Opening it means a
    // third hand-written file for the record types; the generator keeps the pair in step.
    ("bytecode", "opcode", "opcode_tables", "*", "generated tables read by their schema"),
    // Decode errors name the version and jump direction they concern, and the opcode lookups
    // return those errors: one vocabulary in two files.
    ("bytecode", "error", "opcode", "Direction", "an error names the jump direction"),
    ("bytecode", "error", "opcode", "Version", "an error names the Python version"),
];

/// First segment of an import table entry that names an item of another crate.
const EXTERN: &str = "<extern>";
/// The "item" of a path that names a module itself.
const MODULE: &str = "(module)";

struct Module {
    /// Path from the crate root, e.g. `["interp", "calls"]`.
    path: Vec<String>,
    file: PathBuf,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Sep,
    Punct(char),
}

/// Tokens of a Rust file with comments, strings, char literals and lifetimes removed.
fn lex(src: &str) -> Vec<Tok> {
    let c: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let n = c.len();
    while i < n {
        let ch = c[i];
        if ch == '/' && i + 1 < n && c[i + 1] == '/' {
            while i < n && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && i + 1 < n && c[i + 1] == '*' {
            let mut depth = 0;
            while i < n {
                if c[i] == '/' && i + 1 < n && c[i + 1] == '*' {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && i + 1 < n && c[i + 1] == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if ch == '"' {
            i = skip_string(&c, i + 1);
        } else if (ch == 'r' || ch == 'b')
            && raw_string_start(&c, i).is_some()
            && (i == 0 || !is_ident_char(c[i - 1]))
        {
            let (hashes, body) = raw_string_start(&c, i).unwrap();
            i = body;
            if hashes == usize::MAX {
                i = skip_string(&c, i);
            } else {
                // Raw: ends at `"` followed by `hashes` `#`.
                while i < n {
                    if c[i] == '"' && (0..hashes).all(|k| i + 1 + k < n && c[i + 1 + k] == '#') {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
            }
        } else if ch == '\'' {
            if i + 1 < n && c[i + 1] == '\\' {
                i += 2;
                while i < n && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if i + 2 < n && c[i + 2] == '\'' {
                i += 3;
            } else {
                i += 1; // a lifetime: the ident that follows is harmless
            }
        } else if is_ident_start(ch) {
            let s = i;
            while i < n && is_ident_char(c[i]) {
                i += 1;
            }
            let word: String = c[s..i].iter().collect();
            let word = word.strip_prefix("r#").map(str::to_string).unwrap_or(word);
            out.push(Tok::Ident(word));
        } else if ch == ':' && i + 1 < n && c[i + 1] == ':' {
            out.push(Tok::Sep);
            i += 2;
        } else if ch.is_whitespace() {
            i += 1;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

fn is_ident_start(ch: char) -> bool {
    ch.is_alphabetic() || ch == '_'
}

fn is_ident_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// Index just past a normal string's closing quote; `i` is just past the opening quote.
fn skip_string(c: &[char], mut i: usize) -> usize {
    while i < c.len() {
        match c[i] {
            '\\' => i += 2,
            '"' => return i + 1,
            _ => i += 1,
        }
    }
    i
}

/// For `r"`, `r#"`, `br"`, `b"`: (number of `#`, or `usize::MAX` for a non-raw `b"`, index
/// just past the opening quote).
fn raw_string_start(c: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if c[j] == 'b' {
        j += 1;
        if j < c.len() && c[j] == '"' {
            return Some((usize::MAX, j + 1));
        }
    }
    if j < c.len() && c[j] == 'r' {
        j += 1;
        let mut hashes = 0;
        while j < c.len() && c[j] == '#' {
            hashes += 1;
            j += 1;
        }
        if j < c.len() && c[j] == '"' {
            return Some((hashes, j + 1));
        }
    }
    None
}

/// One flattened `use` leaf: the path as written, and the name it binds (None for a glob).
struct UseLeaf {
    path: Vec<String>,
    binds: Option<String>,
}

/// Parses a use tree starting at `toks[*i]` (just past `use`), up to the closing `;`.
fn parse_use_tree(toks: &[Tok], i: &mut usize, prefix: &[String], out: &mut Vec<UseLeaf>) {
    let mut path = prefix.to_vec();
    loop {
        match toks.get(*i) {
            Some(Tok::Sep) => *i += 1,
            Some(Tok::Ident(w)) if w == "as" => {
                *i += 1;
                let alias = match toks.get(*i) {
                    Some(Tok::Ident(a)) => a.clone(),
                    _ => String::from("_"),
                };
                *i += 1;
                out.push(UseLeaf {
                    path: path.clone(),
                    binds: Some(alias),
                });
                return;
            }
            Some(Tok::Ident(w)) => {
                path.push(w.clone());
                *i += 1;
            }
            Some(Tok::Punct('*')) => {
                *i += 1;
                out.push(UseLeaf {
                    path: path.clone(),
                    binds: None,
                });
                return;
            }
            Some(Tok::Punct('{')) => {
                *i += 1;
                loop {
                    match toks.get(*i) {
                        Some(Tok::Punct('}')) => {
                            *i += 1;
                            return;
                        }
                        Some(Tok::Punct(',')) => *i += 1,
                        None => return,
                        _ => parse_use_tree(toks, i, &path, out),
                    }
                }
            }
            _ => {
                // `,`, `}` or `;`: the leaf ends here.
                if let Some(last) = path.last() {
                    if path.len() > prefix.len() || last == "self" {
                        let mut p = path.clone();
                        if p.last().map(String::as_str) == Some("self") {
                            p.pop();
                        }
                        let binds = p.last().cloned();
                        out.push(UseLeaf { path: p, binds });
                    }
                }
                return;
            }
        }
    }
}

/// A reference found in a file: the module path it was written in (file module plus inline
/// `mod x { }` blocks) and the path as written.
struct RawRef {
    scope: Vec<String>,
    path: Vec<String>,
    glob: bool,
    /// `Some(name)` when this is a `use` leaf that binds `name` in `scope`.
    binds: Option<String>,
}

fn scan(toks: &[Tok], file_mod: &[String]) -> Vec<RawRef> {
    let mut refs = Vec::new();
    let mut depth = 0usize;
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    let scope_of = |inline: &[(String, usize)]| {
        let mut s = file_mod.to_vec();
        s.extend(inline.iter().map(|(m, _)| m.clone()));
        s
    };
    while i < toks.len() {
        match &toks[i] {
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if inline.last().map(|(_, d)| *d) == Some(depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Ident(w) if w == "mod" => {
                if let (Some(Tok::Ident(name)), Some(Tok::Punct('{'))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    inline.push((name.clone(), depth + 1));
                }
                i += 1;
            }
            Tok::Ident(w) if w == "use" => {
                i += 1;
                let mut leaves = Vec::new();
                parse_use_tree(toks, &mut i, &[], &mut leaves);
                let scope = scope_of(&inline);
                for leaf in leaves {
                    let glob = leaf.binds.is_none();
                    refs.push(RawRef {
                        scope: scope.clone(),
                        path: leaf.path,
                        glob,
                        binds: leaf.binds,
                    });
                }
            }
            Tok::Ident(first) => {
                // A path in code: `a::b::c`. Skip paths that continue an earlier one, such as
                // `<T as Trait>::x` or `Self::x`.
                let prev_sep = i > 0 && toks[i - 1] == Tok::Sep;
                // Any `a::b` may go through a name bound by `use` (`use super::table;` then
                // `table::canonical`); pass 1 resolves those once all imports are known.
                if !prev_sep && toks.get(i + 1) == Some(&Tok::Sep) {
                    let mut path = vec![first.clone()];
                    let mut j = i + 1;
                    while toks.get(j) == Some(&Tok::Sep) {
                        match toks.get(j + 1) {
                            Some(Tok::Ident(w)) => {
                                path.push(w.clone());
                                j += 2;
                            }
                            _ => break,
                        }
                    }
                    refs.push(RawRef {
                        scope: scope_of(&inline),
                        path,
                        glob: false,
                        binds: None,
                    });
                    i = j;
                } else {
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
    refs
}

/// Turns a path as written in `scope` into a path from the crate root; None for a path into
/// another crate.
fn absolute(
    scope: &[String],
    path: &[String],
    children_of_scope: &BTreeSet<String>,
) -> Option<Vec<String>> {
    let mut base: Vec<String> = scope.to_vec();
    let mut k = 0;
    match path.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            k = 1;
        }
        Some("self") => k = 1,
        Some("super") => {
            while path.get(k).map(String::as_str) == Some("super") {
                base.pop();
                k += 1;
            }
        }
        Some(first) if children_of_scope.contains(first) => {}
        _ => return None,
    }
    base.extend(path[k..].iter().cloned());
    Some(base)
}

struct Graph {
    modules: Vec<Module>,
    /// (from, to) -> items named.
    edges: BTreeMap<(usize, usize), BTreeSet<String>>,
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().and_then(|x| x.to_str()) == Some("rs") {
            out.push(p);
        }
    }
}

fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_string());
    }
    parts
}

fn build(src: &Path) -> Graph {
    let mut files = Vec::new();
    collect(src, &mut files);
    files.sort();
    let modules: Vec<Module> = files
        .iter()
        // build.rs-style binaries under src/bin are separate crates.
        .filter(|f| !f.strip_prefix(src).unwrap().starts_with("bin"))
        .map(|f| Module {
            path: module_path(src, f),
            file: f.clone(),
        })
        .collect();
    let index: BTreeMap<Vec<String>, usize> = modules
        .iter()
        .enumerate()
        .map(|(k, m)| (m.path.clone(), k))
        .collect();
    let children_of = |p: &[String]| -> BTreeSet<String> {
        modules
            .iter()
            .filter(|m| m.path.len() == p.len() + 1 && m.path[..p.len()] == *p)
            .map(|m| m.path.last().unwrap().clone())
            .collect()
    };
    // Pass 1: every reference, made absolute.
    let mut refs: Vec<(usize, Vec<String>, bool)> = Vec::new();
    let mut bare: Vec<(usize, Vec<String>, Vec<String>)> = Vec::new();
    // Names bound by `use` in each (inline-)module scope: scope -> name -> absolute path.
    let mut imports: BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (k, m) in modules.iter().enumerate() {
        let text = fs::read_to_string(&m.file).unwrap();
        let children = children_of(&m.path);
        for r in scan(&lex(&text), &m.path) {
            let scope_children = if r.scope == m.path {
                children.clone()
            } else {
                BTreeSet::new()
            };
            let is_use = r.binds.is_some() || r.glob;
            match absolute(&r.scope, &r.path, &scope_children) {
                Some(abs) => {
                    if let Some(name) = &r.binds {
                        imports
                            .entry(r.scope.clone())
                            .or_default()
                            .insert(name.clone(), abs.clone());
                    }
                    refs.push((k, abs, r.glob));
                }
                None if is_use => {
                    // A name from another crate (`pub use fx::ops::canonical`): a path through
                    // it leaves this crate.
                    if let Some(name) = &r.binds {
                        let mut ext = vec![String::from(EXTERN)];
                        ext.extend(r.path.iter().cloned());
                        imports
                            .entry(r.scope.clone())
                            .or_default()
                            .insert(name.clone(), ext);
                    }
                }
                None => bare.push((k, r.scope.clone(), r.path)),
            }
        }
    }
    // Bare paths `name::rest` whose first segment was bound by a `use` in their scope.
    for (k, scope, path) in bare {
        if let Some(target) = imports.get(&scope).and_then(|t| t.get(&path[0])) {
            let mut abs = target.clone();
            abs.extend(path[1..].iter().cloned());
            refs.push((k, abs, false));
        }
    }
    // Pass 2: resolve each absolute path to the module that defines the item, following
    // imports (re-exports) of the module it lands in.
    let resolve = |abs: &[String]| -> Option<(usize, String)> {
        let mut path = abs.to_vec();
        for _ in 0..16 {
            if path.first().map(String::as_str) == Some(EXTERN) {
                return None;
            }
            let mut cut = path.len();
            while cut > 0 && !index.contains_key(&path[..cut]) {
                cut -= 1;
            }
            let target = index.get(&path[..cut]).copied()?;
            let item = path.get(cut).cloned();
            if let Some(item_name) = &item {
                if let Some(next) = imports.get(&path[..cut]).and_then(|t| t.get(item_name)) {
                    if next.as_slice() != &path[..=cut] {
                        let mut np = next.clone();
                        np.extend(path[cut + 1..].iter().cloned());
                        path = np;
                        continue;
                    }
                }
            }
            return Some((target, item.unwrap_or_else(|| String::from(MODULE))));
        }
        None
    };
    let mut edges: BTreeMap<(usize, usize), BTreeSet<String>> = BTreeMap::new();
    for (from, abs, glob) in refs {
        let Some((to, item)) = resolve(&abs) else {
            continue;
        };
        // `use super::table;` alone is no dependency: the paths through it are.
        if to != from && (glob || item != MODULE) {
            let item = if glob && item == MODULE {
                String::from("*")
            } else {
                item
            };
            edges.entry((from, to)).or_default().insert(item);
        }
    }
    Graph { modules, edges }
}

/// Strongly connected components with more than one module (Tarjan).
fn cycles(n: usize, edges: &BTreeSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let mut adj = vec![Vec::new(); n];
    for &(a, b) in edges {
        adj[a].push(b);
    }
    struct St {
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn go(v: usize, adj: &[Vec<usize>], s: &mut St) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on[v] = true;
        for &w in &adj[v] {
            if s.index[w].is_none() {
                go(w, adj, s);
                s.low[v] = s.low[v].min(s.low[w]);
            } else if s.on[w] {
                s.low[v] = s.low[v].min(s.index[w].unwrap());
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on[w] = false;
                comp.push(w);
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = St {
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if s.index[v].is_none() {
            go(v, &adj, &mut s);
        }
    }
    s.out
}

fn name(m: &Module) -> String {
    if m.path.is_empty() {
        String::from("(root)")
    } else {
        m.path.join("::")
    }
}

/// Whether `b` is a descendant of `a` (declared under it).
fn owns(a: &Module, b: &Module) -> bool {
    b.path.len() > a.path.len() && b.path[..a.path.len()] == a.path[..]
}

/// `*interp` matches `interp`'s descendants; anything else matches one module exactly.
fn matches(pattern: &str, m: &Module) -> bool {
    match pattern.strip_prefix('*') {
        Some(anc) => {
            let anc: Vec<&str> = anc.split("::").collect();
            m.path.len() > anc.len() && m.path.iter().zip(&anc).all(|(a, b)| a == b)
        }
        None => name(m) == pattern || (pattern.is_empty() && m.path.is_empty()),
    }
}

/// The cycles of one crate after the allow-list, as printable text (empty when none). Marks
/// the allow-list entries it used in `used`.
fn check_crate(krate: &str, src: &Path, used: &mut [bool], print: bool) -> String {
    let g = build(src);
    let all: BTreeSet<(usize, usize)> = g.edges.keys().copied().collect();
    if print {
        println!(
            "== {krate}: {} modules, {} edges",
            g.modules.len(),
            all.len()
        );
        for comp in cycles(g.modules.len(), &all) {
            let names: Vec<String> = comp.iter().map(|&k| name(&g.modules[k])).collect();
            println!("  cycle (no allow-list): {}", names.join(", "));
        }
    }
    let mut kept = BTreeSet::new();
    for (&(a, b), items) in &g.edges {
        if owns(&g.modules[a], &g.modules[b]) {
            continue;
        }
        let mut rest: BTreeSet<&String> = items.iter().collect();
        for (k, entry) in ALLOWED.iter().enumerate() {
            let (c, from, to, item, _) = *entry;
            if c == krate
                && matches(from, &g.modules[a])
                && matches(to, &g.modules[b])
                && (if item == "*" {
                    let any = !rest.is_empty();
                    rest.clear();
                    any
                } else {
                    rest.remove(&item.to_string())
                })
            {
                used[k] = true;
            }
        }
        if !rest.is_empty() {
            kept.insert((a, b));
        }
    }
    let mut report = String::new();
    for comp in cycles(g.modules.len(), &kept) {
        let set: BTreeSet<usize> = comp.iter().copied().collect();
        report.push_str(&format!(
            "{krate}: import circle between {} modules:\n",
            comp.len()
        ));
        for (&(a, b), items) in &g.edges {
            if set.contains(&a) && set.contains(&b) && kept.contains(&(a, b)) {
                let items: Vec<&str> = items.iter().map(String::as_str).collect();
                report.push_str(&format!(
                    "  {} -> {}: {}\n",
                    name(&g.modules[a]),
                    name(&g.modules[b]),
                    items.join(", ")
                ));
            }
        }
    }
    report
}

#[test]
fn no_import_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let print = std::env::var_os("LAYERING_PRINT").is_some();
    let mut used = vec![false; ALLOWED.len()];
    let mut report = String::new();
    for krate in ["tracer", "inductor", "fx", "bytecode"] {
        report.push_str(&check_crate(
            krate,
            &root.join(krate).join("src"),
            &mut used,
            print,
        ));
    }
    for (k, entry) in ALLOWED.iter().enumerate() {
        if !used[k] {
            report.push_str(&format!(
                "allow-list entry no longer needed, remove it: {entry:?}\n"
            ));
        }
    }
    assert!(report.is_empty(), "\n{report}");
}

/// The scanner itself: a circle written into a scratch crate is found, a doc comment or string
/// naming a module is not, and a re-export is followed to the defining module.
#[test]
fn scanner_finds_a_planted_circle() {
    let dir = std::env::temp_dir().join(format!("layering-{}", std::process::id()));
    let src = dir.join("src");
    fs::create_dir_all(src.join("a")).unwrap();
    fs::write(src.join("lib.rs"), "mod a; mod b; mod c; pub use c::Err;\n").unwrap();
    fs::write(
        src.join("a/mod.rs"),
        "mod inner;\nuse crate::b::{self, B as Bee};\n",
    )
    .unwrap();
    fs::write(src.join("a/inner.rs"), "fn f() -> crate::Err { todo!() }\n").unwrap();
    // b names a only in a comment and a string: no edge.
    fs::write(
        src.join("b.rs"),
        "/// see [`crate::a::A`]\nconst S: &str = \"super::a::A\";\npub struct B;\n",
    )
    .unwrap();
    fs::write(
        src.join("c.rs"),
        "pub struct Err; fn g() { let _ = r#\"crate::a\"#; }\n",
    )
    .unwrap();
    let mut used = vec![false; ALLOWED.len()];
    assert_eq!(check_crate("scratch", &src, &mut used, false), "");
    let g = build(&src);
    let names: BTreeSet<(String, String)> = g
        .edges
        .keys()
        .map(|&(a, b)| (name(&g.modules[a]), name(&g.modules[b])))
        .collect();
    assert!(
        names.contains(&("a::inner".into(), "c".into())),
        "{names:?}"
    );
    assert!(names.contains(&("a".into(), "b".into())), "{names:?}");
    // Now close a circle b -> a -> b through a path in code.
    fs::write(
        src.join("b.rs"),
        "pub struct B; fn h() { super::a::g(); }\n",
    )
    .unwrap();
    let report = check_crate("scratch", &src, &mut used, false);
    fs::remove_dir_all(&dir).unwrap();
    assert!(
        report.contains("a -> b: B\n") && report.contains("b -> a: g"),
        "{report}"
    );
}
