//! The generators `nn.Module` offers over its tree (`modules`, `named_modules`, `children`,
//! `named_children`, `parameters`, `named_parameters`, `buffers`, `named_buffers`), walked at
//! trace time as torch.compile walks them: the tree is read from the modules' own dicts
//! (`_modules`, `_parameters`, `_buffers`) through sources, each dict's keys guarded, so the
//! trace yields the same items in the same order as the generator would, and code such as
//! `any(len(m._forward_hooks) for m in self.modules())` (nn.TransformerEncoderLayer's fast-path
//! check) or `sum(p.numel() for p in self.parameters())` stays in the graph. The inherited
//! generator itself is not inlined: a generator's body interleaves with its consumer, which the
//! inliner only does for generator expressions.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::error::TraceError;
use crate::guards::Check;
use crate::source::Source;

use crate::interp::pyobj::is_nn_module;
use crate::interp::vars::Var;
use crate::interp::Frame;

/// The `nn.Module` methods walked here (they are generators in torch).
const TREE_METHODS: [&str; 8] = [
    "modules",
    "named_modules",
    "children",
    "named_children",
    "parameters",
    "named_parameters",
    "buffers",
    "named_buffers",
];

/// What one call asks for, from its bound arguments.
struct TreeCall {
    prefix: String,
    recurse: bool,
    remove_duplicate: bool,
}

/// One module of the walk: its dotted name, the object and where it is read from.
struct Node<'py> {
    name: String,
    module: Bound<'py, PyAny>,
    source: Source,
}

impl Frame<'_, '_> {
    /// `Module.<name>(self, ...)` for one of `TREE_METHODS`, not overridden, called on a module
    /// read from the frame: the items it would yield, as an iterator. `None` for anything else.
    pub(super) fn module_tree_call(
        &mut self,
        f: &Bound<'_, PyAny>,
        module: &str,
        name: &str,
        args: &[Var],
        kwargs: &[(String, Var)],
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        if module != "torch.nn.modules.module" || !TREE_METHODS.contains(&name) {
            return Ok(None);
        }
        let base = py.import("torch.nn")?.getattr("Module")?;
        if !base.getattr(name)?.is(f) {
            return Ok(None);
        }
        if let Some(Var::Object(o)) = args.first() {
            let Some(call) = bind_tree_call(py, f, &py.None().into_bound(py), &args[1..], kwargs)?
            else {
                return Ok(None);
            };
            return self.tracked_module_tree(o, name, &call);
        }
        let Some(Var::Py(m, Some(src))) = args.first() else {
            return Ok(None);
        };
        let m = m.bind(py).clone();
        if !is_nn_module(py, &m)? {
            return Ok(None);
        }
        // The generator calls the other tree methods on the module (`parameters` ->
        // `named_parameters` -> `_named_members` -> `named_modules`): an override of any of them
        // is what runs, so the walk is torch's only where none is overridden.
        if !self.plain_tree_methods(&m, src)? {
            return Ok(None);
        }
        let Some(call) = bind_tree_call(py, f, &m, &args[1..], kwargs)? else {
            return Ok(None);
        };
        let items = match name {
            "modules" | "named_modules" => {
                let Some(nodes) = self.walk_modules(&m, src, &call)? else {
                    return Ok(None);
                };
                let named = name == "named_modules";
                let mut out = Vec::with_capacity(nodes.len());
                for n in nodes {
                    let v = self.tx.wrap(n.module, Some(n.source))?;
                    out.push(if named {
                        Var::Tuple(vec![Var::py_const(py, n.name), v].into())
                    } else {
                        v
                    });
                }
                out
            }
            "children" | "named_children" => {
                let named = name == "named_children";
                let mut seen = Seen::default();
                let mut out = Vec::new();
                for (k, child, s) in self.dict_members(&m, src, "_modules")? {
                    if seen.repeated(self, &child, &s) {
                        continue;
                    }
                    seen.push(&child, &s);
                    let v = self.tx.wrap(child, Some(s))?;
                    out.push(if named {
                        Var::Tuple(vec![Var::py_const(py, k), v].into())
                    } else {
                        v
                    });
                }
                seen.guard(self);
                out
            }
            _ => {
                let store = if name.ends_with("parameters") {
                    "_parameters"
                } else {
                    "_buffers"
                };
                let named = name.starts_with("named_");
                let modules = if call.recurse {
                    match self.walk_modules(&m, src, &call)? {
                        Some(nodes) => nodes,
                        None => return Ok(None),
                    }
                } else {
                    vec![Node {
                        name: call.prefix.clone(),
                        module: m.clone(),
                        source: src.clone(),
                    }]
                };
                let mut seen = Seen::default();
                let mut out = Vec::new();
                for n in modules {
                    for (k, v, s) in self.dict_members(&n.module, &n.source, store)? {
                        if seen.repeated(self, &v, &s) {
                            continue;
                        }
                        if call.remove_duplicate {
                            seen.push(&v, &s);
                        }
                        let full = dotted(&n.name, &k);
                        let t = self.tx.wrap(v, Some(s))?;
                        out.push(if named {
                            Var::Tuple(vec![Var::py_const(py, full), t].into())
                        } else {
                            t
                        });
                    }
                }
                seen.guard(self);
                out
            }
        };
        Ok(Some(Var::Iter(std::rc::Rc::new(std::cell::RefCell::new(
            (items, 0),
        )))))
    }

    /// One of `TREE_METHODS` on a module the trace built (`Var::Object`): its `_modules`,
    /// `_parameters` and `_buffers` dicts are trackers, so the walk reads them, and two modules
    /// are one exactly when they are one tracker (or one object: two read from the frame through
    /// two sources get an identity guard), two tensors when they are one graph value. The class
    /// may override none of the tree methods. A walk that would descend into a module read from
    /// the frame, or into a constant module with children or state of its own, is left to the
    /// generic path (`None`).
    fn tracked_module_tree(
        &mut self,
        o: &std::rc::Rc<crate::interp::vars::ObjectVar>,
        name: &str,
        call: &TreeCall,
    ) -> Result<Option<Var>, TraceError> {
        let py = self.tx.py;
        let base = py.import("torch.nn")?.getattr("Module")?;
        for m in TREE_METHODS.iter().chain(&["_named_members"]) {
            if !o.cls.bind(py).getattr(*m)?.is(base.getattr(*m)?) || o.has_attr(py, m) {
                return Ok(None);
            }
        }
        let output = &self.tx.output;
        // Two modules read from the frame through two sources: the answer holds while the
        // sources hold one object (or two) again, guarded once the walk is done.
        let identities: std::cell::RefCell<Vec<(Source, Source, bool)>> = Default::default();
        let same = |a: &Var, b: &Var| match (a, b) {
            (Var::Object(x), Var::Object(y)) => std::rc::Rc::ptr_eq(x, y),
            (Var::Py(x, sx), Var::Py(y, sy)) => {
                let is = x.bind(py).is(y.bind(py));
                if let (Some(sx), Some(sy)) = (sx, sy) {
                    if !sx.same_as(sy) {
                        identities.borrow_mut().push((sx.clone(), sy.clone(), is));
                    }
                }
                is
            }
            (Var::Tensor(x), Var::Tensor(y)) => {
                output.alias_root(x.node) == output.alias_root(y.node)
            }
            _ => false,
        };
        // The entries of one of a module's dicts, in order (`None` values skipped, as torch
        // skips them); `None` where one has no place in this walk.
        let members = |m: &Var, store: &str| -> Option<Vec<(String, Var)>> {
            let d = match m {
                Var::Object(o) => o.attr(py, store)?,
                Var::Py(c, None) => {
                    let n = c.bind(py).getattr(store).ok()?.len().ok()?;
                    return (n == 0).then(Vec::new);
                }
                _ => return None,
            };
            let Var::Dict(d) = d else { return None };
            let mut out = Vec::new();
            for (k, v) in d.borrow().iter() {
                let k: String = k.bind(py).extract().ok()?;
                match v {
                    Var::Py(c, _) if c.is_none(py) => continue,
                    Var::Object(_) | Var::Py(..) if store == "_modules" => out.push((k, v.clone())),
                    Var::Tensor(_) if store != "_modules" => out.push((k, v.clone())),
                    _ => return None,
                }
            }
            Some(out)
        };
        let this = Var::Object(o.clone());
        // `named_modules`' walk: a module, then its children's subtrees depth first.
        let walk = |prefix: &str, dedupe: bool| -> Option<Vec<(String, Var)>> {
            let mut nodes: Vec<(String, Var)> = Vec::new();
            let mut stack = vec![(prefix.to_string(), this.clone())];
            while let Some((p, m)) = stack.pop() {
                if dedupe && nodes.iter().any(|(_, seen)| same(seen, &m)) {
                    continue;
                }
                for (k, child) in members(&m, "_modules")?.into_iter().rev() {
                    stack.push((dotted(&p, &k), child));
                }
                nodes.push((p, m));
            }
            Some(nodes)
        };
        let mut items: Vec<(String, Var)> = Vec::new();
        match name {
            "children" | "named_children" => {
                let Some(kids) = members(&this, "_modules") else {
                    return Ok(None);
                };
                for (k, v) in kids {
                    if !items.iter().any(|(_, seen)| same(seen, &v)) {
                        items.push((k, v));
                    }
                }
            }
            "modules" | "named_modules" => {
                let Some(nodes) = walk(&call.prefix, call.remove_duplicate) else {
                    return Ok(None);
                };
                items = nodes;
            }
            _ => {
                let store = if name.ends_with("parameters") {
                    "_parameters"
                } else {
                    "_buffers"
                };
                let nodes = if call.recurse {
                    walk(&call.prefix, true)
                } else {
                    Some(vec![(call.prefix.clone(), this.clone())])
                };
                let Some(nodes) = nodes else {
                    return Ok(None);
                };
                for (p, m) in nodes {
                    let Some(entries) = members(&m, store) else {
                        return Ok(None);
                    };
                    for (k, v) in entries {
                        if call.remove_duplicate && items.iter().any(|(_, seen)| same(seen, &v)) {
                            continue;
                        }
                        items.push((dotted(&p, &k), v));
                    }
                }
            }
        }
        for (a, b, is) in identities.into_inner() {
            self.tx.guards.add_identity(&a, &b, is);
        }
        let named = name.starts_with("named_");
        let out = items
            .into_iter()
            .map(|(k, v)| {
                if named {
                    Var::Tuple(vec![Var::py_const(py, k), v].into())
                } else {
                    v
                }
            })
            .collect();
        Ok(Some(Var::Iter(std::rc::Rc::new(std::cell::RefCell::new(
            (out, 0),
        )))))
    }

    /// `named_modules(prefix=, remove_duplicate=)`'s order: a module, then its children's
    /// subtrees depth first; a module already met is skipped (with `remove_duplicate`).
    fn walk_modules<'py>(
        &mut self,
        m: &Bound<'py, PyAny>,
        src: &Source,
        call: &TreeCall,
    ) -> Result<Option<Vec<Node<'py>>>, TraceError> {
        let mut out: Vec<Node<'py>> = Vec::new();
        let mut seen = Seen::default();
        let mut stack = vec![(call.prefix.clone(), m.clone(), src.clone())];
        while let Some((name, module, source)) = stack.pop() {
            if call.remove_duplicate {
                if seen.repeated(self, &module, &source) {
                    continue;
                }
                seen.push(&module, &source);
            }
            // `named_modules` recurses through each child's own `named_modules`.
            if !self.plain_tree_methods(&module, &source)? {
                return Ok(None);
            }
            let children = self.dict_members(&module, &source, "_modules")?;
            // Pushed in reverse so the first child is walked first.
            for (k, child, s) in children.into_iter().rev() {
                stack.push((dotted(&name, &k), child, s));
            }
            out.push(Node {
                name,
                module,
                source,
            });
        }
        seen.guard(self);
        Ok(Some(out))
    }

    /// Whether `module` runs `nn.Module`'s own tree methods (`TREE_METHODS` and the helpers
    /// they call), none overridden by its class or set on the instance; its type is guarded
    /// (another object there may override them).
    fn plain_tree_methods(
        &mut self,
        module: &Bound<'_, PyAny>,
        source: &Source,
    ) -> Result<bool, TraceError> {
        let py = module.py();
        let base = py.import("torch.nn")?.getattr("Module")?;
        let ty = module.get_type();
        let own = module.getattr("__dict__")?;
        for name in TREE_METHODS.iter().chain(&["_named_members"]) {
            if !ty.getattr(*name)?.is(base.getattr(*name)?) || own.contains(*name)? {
                return Ok(false);
            }
        }
        self.tx
            .guards
            .add(py, source, Check::Type(ty.clone().unbind()));
        Ok(true)
    }

    /// The non-`None` items of `module.<store>` (`_modules`, `_parameters`, `_buffers`) in
    /// order, each with its source; the dict's keys are guarded, and each `None` item too (another
    /// instance may hold a module or tensor there).
    #[allow(clippy::type_complexity)]
    fn dict_members<'py>(
        &mut self,
        module: &Bound<'py, PyAny>,
        source: &Source,
        store: &str,
    ) -> Result<Vec<(String, Bound<'py, PyAny>, Source)>, TraceError> {
        let py = module.py();
        let d = module.getattr("__dict__")?.get_item(store)?;
        let d = d.cast::<PyDict>().map_err(PyErr::from)?.clone();
        let store_src = source.attr(py, store);
        let keys = crate::guards::dict_keys_in_order(py, &d)?;
        self.tx.guards.add(
            py,
            &store_src,
            Check::DictKeys(keys.iter().map(|k| k.clone().unbind()).collect()),
        );
        let mut out = Vec::new();
        for k in keys {
            let Ok(key) = k.extract::<String>() else {
                return Err(TraceError::unsupported(format!(
                    "a module {store} key that is not a str"
                )));
            };
            let v = d
                .get_item(&k)?
                .ok_or_else(|| TraceError::internal("a dict key without its item"))?;
            let s = store_src.item(PyString::new(py, &key).into_any());
            if v.is_none() {
                self.tx.guards.add(py, &s, Check::IsNone);
                continue;
            }
            out.push((key, v, s));
        }
        Ok(out)
    }
}

/// The objects a walk yielded so far, for the generators' skipping of an object met before
/// (a module reached twice, tied weights). Which objects are one decides what the walk yields,
/// and the dicts' keys do not show it: an object skipped is guarded to be the one it repeats,
/// and the objects yielded to be pairwise distinct ([`Seen::guard`]).
#[derive(Default)]
struct Seen<'py> {
    items: Vec<(Bound<'py, PyAny>, Source)>,
}

impl<'py> Seen<'py> {
    /// Whether `v` was yielded before (then guarded to stay that object).
    fn repeated(&self, frame: &mut Frame<'_, '_>, v: &Bound<'py, PyAny>, s: &Source) -> bool {
        match self.items.iter().find(|(o, _)| o.is(v)) {
            Some((_, first)) => {
                frame.tx.guards.add_identity(first, s, true);
                true
            }
            None => false,
        }
    }

    fn push(&mut self, v: &Bound<'py, PyAny>, s: &Source) {
        self.items.push((v.clone(), s.clone()));
    }

    /// Guards the objects yielded to stay pairwise distinct.
    fn guard(self, frame: &mut Frame<'_, '_>) {
        let sources = self.items.into_iter().map(|(_, s)| s).collect();
        frame.tx.guards.add_distinct(sources);
    }
}

/// `prefix.name`, or `name` at the root (as torch joins module names).
fn dotted(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Binds the call's arguments to the method's signature (Python's own `inspect` binding, with
/// defaults applied); `None` where an argument is not a constant or `memo` is passed (a set the
/// caller shares between walks).
fn bind_tree_call(
    py: Python<'_>,
    f: &Bound<'_, PyAny>,
    m: &Bound<'_, PyAny>,
    args: &[Var],
    kwargs: &[(String, Var)],
) -> Result<Option<TreeCall>, TraceError> {
    let mut pos = vec![m.clone()];
    for a in args {
        match a {
            Var::Py(o, _) => pos.push(o.bind(py).clone()),
            _ => return Ok(None),
        }
    }
    let kw = PyDict::new(py);
    for (k, v) in kwargs {
        match v {
            Var::Py(o, _) => kw.set_item(k, o.bind(py))?,
            _ => return Ok(None),
        }
    }
    let sig = py.import("inspect")?.getattr("signature")?.call1((f,))?;
    let Ok(bound) = sig.call_method("bind", PyTuple::new(py, pos)?, Some(&kw)) else {
        // A call Python rejects raises when it runs natively.
        return Ok(None);
    };
    bound.call_method0("apply_defaults")?;
    let a = bound.getattr("arguments")?;
    let get = |k: &str| a.get_item(k).ok();
    if let Some(memo) = get("memo") {
        if !memo.is_none() {
            return Ok(None);
        }
    }
    let prefix = match get("prefix") {
        Some(p) => match p.extract::<String>() {
            Ok(p) => p,
            Err(_) => return Ok(None),
        },
        None => String::new(),
    };
    let flag = |k: &str| -> Option<bool> {
        match get(k) {
            Some(v) => v.extract::<bool>().ok(),
            None => Some(true),
        }
    };
    let (Some(recurse), Some(remove_duplicate)) = (flag("recurse"), flag("remove_duplicate"))
    else {
        return Ok(None);
    };
    Ok(Some(TreeCall {
        prefix,
        recurse,
        remove_duplicate,
    }))
}
