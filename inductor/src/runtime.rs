//! What running a lowered graph needs besides kernels, shared by the compiled path and the
//! reference interpreter: checking inputs, host tensors per buffer, extern and fallback calls,
//! and assembling outputs. Sharing it means the interpreter checks exactly the kernels.

use crate::entity::EntityVec;
use crate::error::RunError;
use crate::host::{Host, HostArg, HostValue, TensorDesc};
use crate::ir::{BufId, BufKind, FallbackArg, IrGraph, IrNode, IrNodeId, OutputSpec, View};
use crate::size::{const_vec, expect_consts};
use crate::workspace::{CachedView, Workspace};

pub(crate) struct Runtime<'a, H: Host> {
    pub host: &'a mut H,
    pub ir: &'a IrGraph,
    /// The host tensor holding each buffer, once it exists. Written only through [`Self::set`]
    /// so that `ptrs` stays in step.
    tensors: EntityVec<BufId, Option<H::Tensor>>,
    /// Each live buffer's data pointer once asked for (null: not yet): a kernel step reads
    /// several buffers and later steps read them again, and each `data_ptr` is a host call.
    ptrs: EntityVec<BufId, *mut u8>,
    /// Where buffers marked in `kept` come from and go to (see [`crate::workspace`]).
    ws: Option<&'a mut Workspace<H::Tensor>>,
    kept: Option<&'a EntityVec<BufId, bool>>,
}

impl<'a, H: Host> Runtime<'a, H> {
    /// `check`: compare every input's dtype, sizes and strides with what the graph was compiled
    /// for (one `describe` per input; callers whose guards already did may skip it).
    pub fn new(
        host: &'a mut H,
        ir: &'a IrGraph,
        inputs: &[H::Tensor],
        check: bool,
    ) -> Result<Self, RunError<H::Error>> {
        if inputs.len() != ir.num_inputs {
            return Err(RunError::Arity {
                expected: ir.num_inputs,
                got: inputs.len(),
            });
        }
        let mut tensors = EntityVec::filled(None, ir.buffers.len());
        for (id, b) in ir.buffers.iter_enumerated() {
            if let BufKind::Input(i) = b.kind {
                if !check {
                    tensors[id] = Some(inputs[i].clone());
                    continue;
                }
                let d = host.describe(&inputs[i]);
                let want = TensorDesc {
                    dtype: b.dtype,
                    sizes: expect_consts(&b.sizes, "an input check"),
                    strides: expect_consts(&b.strides, "an input check"),
                };
                if !same_geometry(&d, &want) {
                    return Err(RunError::Input {
                        index: i,
                        msg: format!("compiled for {want:?}, got {d:?}"),
                    });
                }
                tensors[id] = Some(inputs[i].clone());
            }
        }
        let ptrs = EntityVec::filled(std::ptr::null_mut(), tensors.len());
        Ok(Runtime {
            host,
            ir,
            tensors,
            ptrs,
            ws: None,
            kept: None,
        })
    }

    /// Takes the buffers marked in `kept` from `ws` when it holds them, and records them there
    /// when this call allocates them.
    pub fn with_workspace(
        mut self,
        ws: &'a mut Workspace<H::Tensor>,
        kept: &'a EntityVec<BufId, bool>,
    ) -> Self {
        self.ws = Some(ws);
        self.kept = Some(kept);
        self
    }

    fn is_kept(&self, buf: BufId) -> bool {
        self.ws.is_some() && self.kept.and_then(|k| k.get(buf)).copied().unwrap_or(false)
    }

    /// Gives `buf` the tensor an earlier call left in the workspace; false if there is none.
    pub fn take_kept(&mut self, buf: BufId) -> bool {
        if !self.is_kept(buf) {
            return false;
        }
        let Some((t, p)) = self.ws.as_ref().and_then(|ws| ws.get(buf)) else {
            return false;
        };
        self.tensors[buf] = Some(t);
        self.ptrs[buf] = p as *mut u8;
        true
    }

    /// Records `buf`'s current tensor in the workspace, for the next call.
    pub fn remember(&mut self, buf: BufId) {
        if !self.is_kept(buf) {
            return;
        }
        if let (Some(ws), Some(t)) = (self.ws.as_deref_mut(), &self.tensors[buf]) {
            ws.keep(buf, t.clone());
        }
    }

    pub fn has(&self, buf: BufId) -> bool {
        self.tensors[buf].is_some()
    }

    /// Replaces (or with `None`, drops) the tensor of `buf`.
    pub fn set(&mut self, buf: BufId, t: Option<H::Tensor>) {
        self.tensors[buf] = t;
        self.ptrs[buf] = std::ptr::null_mut();
    }

    /// Takes the tensor of `buf` out (its storage is handed to another buffer).
    pub fn take(&mut self, buf: BufId) -> Option<H::Tensor> {
        self.ptrs[buf] = std::ptr::null_mut();
        self.tensors[buf].take()
    }

    /// The buffer's tensor, allocating it with its declared layout if it does not exist yet.
    pub fn tensor(&mut self, buf: BufId) -> Result<H::Tensor, RunError<H::Error>> {
        if self.tensors[buf].is_none() && !self.take_kept(buf) {
            let b = &self.ir.buffers[buf];
            let t = self
                .host
                .empty_strided(
                    b.dtype,
                    &const_vec(&b.sizes, "an allocation"),
                    &const_vec(&b.strides, "an allocation"),
                )
                .map_err(RunError::Host)?;
            self.set(buf, Some(t));
            self.remember(buf);
        }
        Ok(self.tensors[buf].clone().expect("set above"))
    }

    pub fn ptr(&mut self, buf: BufId) -> Result<*mut u8, RunError<H::Error>> {
        if !self.ptrs[buf].is_null() {
            return Ok(self.ptrs[buf]);
        }
        let t = self.tensor(buf)?;
        let p = self.host.data_ptr(&t);
        self.ptrs[buf] = p;
        if self.is_kept(buf) {
            if let Some(ws) = self.ws.as_deref_mut() {
                ws.keep_ptr(buf, p as usize);
            }
        }
        Ok(p)
    }

    fn view(&mut self, v: &View) -> Result<H::Tensor, RunError<H::Error>> {
        let t = self.tensor(v.buf)?;
        let b = &self.ir.buffers[v.buf];
        if v.offset == 0 && v.sizes == b.sizes && v.strides == b.strides {
            return Ok(t);
        }
        self.host
            .as_strided(
                &t,
                &const_vec(&v.sizes, "a view"),
                &const_vec(&v.strides, "a view"),
                v.offset.expect_const("a view"),
            )
            .map_err(RunError::Host)
    }

    /// Operand `i` of extern node `site.0`: the buffer itself when the view covers it as laid
    /// out, else an alias of it ([`Host::alias`]), reused from the workspace when the buffer is
    /// kept there (see [`CachedView`]).
    fn operand(
        &mut self,
        site: Option<(IrNodeId, usize)>,
        v: &View,
    ) -> Result<H::Tensor, RunError<H::Error>> {
        let t = self.tensor(v.buf)?;
        let b = &self.ir.buffers[v.buf];
        if v.offset == 0 && v.sizes == b.sizes && v.strides == b.strides {
            return Ok(t);
        }
        let site = site.filter(|_| self.is_kept(v.buf));
        let id = site.and_then(|_| self.host.identity(&t));
        let (Some(site), Some(id)) = (site, id) else {
            return alias(&mut *self.host, &t, v);
        };
        let ptr = self.ptr(v.buf)? as usize;
        let ws = self
            .ws
            .as_deref_mut()
            .expect("a kept buffer has a workspace");
        if let Some(c) = ws.view(site) {
            if c.ptr == ptr && self.host.identity(&c.base) == Some(id) {
                return Ok(c.view.clone());
            }
        }
        let view = alias(&mut *self.host, &t, v)?;
        ws.keep_view(
            site,
            CachedView {
                base: t,
                ptr,
                view: view.clone(),
            },
        );
        Ok(view)
    }

    fn arg(&mut self, a: &FallbackArg) -> Result<HostArg<H::Tensor>, RunError<H::Error>> {
        Ok(match a {
            FallbackArg::Const(c) => HostArg::Const(c.clone()),
            FallbackArg::Tensor(v) => HostArg::Tensor(self.view(v)?),
            FallbackArg::Tuple(xs) => {
                HostArg::Tuple(xs.iter().map(|x| self.arg(x)).collect::<Result<_, _>>()?)
            }
            FallbackArg::List(xs) => {
                HostArg::List(xs.iter().map(|x| self.arg(x)).collect::<Result<_, _>>()?)
            }
        })
    }

    /// Runs an extern or fallback node (kernels are the caller's business).
    pub fn run_host_node(&mut self, node: &IrNode) -> Result<(), RunError<H::Error>> {
        self.run_host(None, node)
    }

    /// [`Self::run_host_node`] for node `id` of the graph: its extern operands' views are
    /// reused from call to call where the workspace allows.
    pub fn run_host_node_at(&mut self, id: IrNodeId) -> Result<(), RunError<H::Error>> {
        let ir = self.ir;
        self.run_host(Some(id), &ir.nodes[id])
    }

    fn run_host(&mut self, id: Option<IrNodeId>, node: &IrNode) -> Result<(), RunError<H::Error>> {
        match node {
            IrNode::Extern { out, call, inputs } => {
                let ins = inputs
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.operand(id.map(|n| (n, i)), v))
                    .collect::<Result<Vec<_>, _>>()?;
                if self.tensors[*out].is_none() {
                    if let Some(t) = self
                        .host
                        .run_extern_new(call, &ins)
                        .map_err(RunError::Host)?
                    {
                        return self.adopt(*out, t, "extern call");
                    }
                }
                let o = self.tensor(*out)?;
                self.host.run_extern(call, &ins, &o).map_err(RunError::Host)
            }
            IrNode::Fallback {
                target,
                args,
                kwargs,
                outs,
                node,
                ..
            } => {
                let a = args
                    .iter()
                    .map(|x| self.arg(x))
                    .collect::<Result<Vec<_>, _>>()?;
                let k = kwargs
                    .iter()
                    .map(|(n, x)| Ok((n.clone(), self.arg(x)?)))
                    .collect::<Result<Vec<_>, RunError<H::Error>>>()?;
                let r = self
                    .host
                    .run_fallback(target, &a, &k)
                    .map_err(|source| RunError::Op {
                        node: *node,
                        source,
                    })?;
                let results = match r {
                    HostValue::Tensor(t) => vec![t],
                    HostValue::Seq(ts) => ts,
                };
                if results.len() != outs.len() {
                    return Err(RunError::FallbackResult {
                        target: target.name().to_string(),
                        msg: format!("{} results, expected {}", results.len(), outs.len()),
                    });
                }
                // A fallback may hand back (a view of) one of its arguments (`type_as` to the
                // same dtype returns `self`): adopting it would make two buffers share memory
                // that the schedule plans as distinct (an argument's buffer is reused once
                // its last reader ran), so such a result is copied into its own buffer.
                let mut arg_spans = Vec::new();
                for x in a.iter().chain(k.iter().map(|(_, x)| x)) {
                    self.tensor_spans(x, &mut arg_spans);
                }
                for (t, &buf) in results.into_iter().zip(outs) {
                    // Nothing reads a discarded result (it may be `None`): dropped unseen.
                    if self.ir.buffers[buf].kind == BufKind::Discarded {
                        continue;
                    }
                    let span = self.span_of(&t);
                    // A buffer whose layout repeats elements (a stride 0 from `expand`)
                    // cannot be written: such a result is adopted as before.
                    let b = &self.ir.buffers[buf];
                    let writable = b
                        .sizes
                        .iter()
                        .zip(&b.strides)
                        .all(|(n, s)| n.as_const().is_some_and(|n| n <= 1) || *s != 0);
                    if writable && arg_spans.iter().any(|s| overlaps(*s, span)) {
                        let dst = self.tensor(buf)?;
                        self.host.copy_into(&dst, &t).map_err(RunError::Host)?;
                    } else {
                        self.adopt(buf, t, target.name())?;
                    }
                }
                Ok(())
            }
            _ => unreachable!("kernels are run by the caller"),
        }
    }

    /// The byte range `[start, end)` a tensor's elements span (empty for no elements).
    fn span_of(&mut self, t: &H::Tensor) -> (usize, usize) {
        let d = self.host.describe(t);
        let start = self.host.data_ptr(t) as usize;
        if d.sizes.contains(&0) {
            return (start, start);
        }
        let last: i64 = d
            .sizes
            .iter()
            .zip(&d.strides)
            .map(|(n, s)| (n - 1) * s.abs())
            .sum();
        let item = d.dtype.itemsize();
        (start, start + (last as usize + 1) * item)
    }

    /// The byte spans of every tensor in a fallback argument.
    fn tensor_spans(&mut self, a: &HostArg<H::Tensor>, out: &mut Vec<(usize, usize)>) {
        match a {
            HostArg::Tensor(t) => {
                let s = self.span_of(t);
                out.push(s);
            }
            HostArg::Const(_) => {}
            HostArg::Tuple(xs) | HostArg::List(xs) => {
                for x in xs {
                    self.tensor_spans(x, out);
                }
            }
        }
    }

    /// Makes the host-made tensor `t` the storage of `buf`, after checking it is what the
    /// graph's metadata promised; other strides are copied into the promised layout, which
    /// the kernels bake in.
    fn adopt(&mut self, buf: BufId, t: H::Tensor, what: &str) -> Result<(), RunError<H::Error>> {
        let b = &self.ir.buffers[buf];
        if b.kind == BufKind::Discarded {
            return Ok(());
        }
        let d = self.host.describe(&t);
        let sizes = expect_consts(&b.sizes, "a fallback's result");
        if d.dtype != b.dtype || d.sizes != sizes {
            return Err(RunError::FallbackResult {
                target: what.to_string(),
                msg: format!("{d:?}, expected {:?} {:?}", b.dtype, b.sizes),
            });
        }
        let promised = expect_consts(&b.strides, "a fallback's result");
        // Strides of size-1 dims are free for the kernels, not for the caller: a returned
        // buffer keeps the promised (eager's) strides exactly (oneDNN's channels-last weight
        // gradient of a 1x1 filter, `(16, 1, 16, 16)` where eager's is `(16, 1, 1, 1)`).
        let returned = d.strides != promised
            && self
                .ir
                .outputs
                .iter()
                .any(|o| matches!(o, OutputSpec::Buffer(x) if *x == buf));
        if (!returned
            && same_geometry(
                &d,
                &TensorDesc {
                    dtype: b.dtype,
                    sizes: sizes.clone(),
                    strides: promised,
                },
            ))
            || sizes.contains(&0)
        {
            self.set(buf, Some(t));
        } else {
            let dst = self.tensor(buf)?;
            self.host.copy_into(&dst, &t).map_err(RunError::Host)?;
        }
        Ok(())
    }

    pub fn outputs(&mut self) -> Result<Vec<H::Tensor>, RunError<H::Error>> {
        let specs = self.ir.outputs.clone();
        specs
            .iter()
            .map(|s| match s {
                OutputSpec::Buffer(b) => self.tensor(*b),
                // Always a view object, even of a whole buffer (`lower` hands out a whole
                // buffer as `Buffer`; a `View` of all of it is eager's view of a tensor of its
                // own, as `linear` with a bias returns).
                OutputSpec::View(v) => {
                    let t = self.tensor(v.buf)?;
                    self.host
                        .as_strided(
                            &t,
                            &const_vec(&v.sizes, "an output"),
                            &const_vec(&v.strides, "an output"),
                            v.offset.expect_const("an output"),
                        )
                        .map_err(RunError::Host)
                }
                OutputSpec::Own(v) => {
                    let t = self.tensor(v.buf)?;
                    self.host
                        .reshape_own(
                            &t,
                            &const_vec(&v.sizes, "an output"),
                            &const_vec(&v.strides, "an output"),
                        )
                        .map_err(RunError::Host)
                }
            })
            .collect()
    }
}

/// [`Host::alias`] of `t` as `v` lays it out.
fn alias<H: Host>(host: &mut H, t: &H::Tensor, v: &View) -> Result<H::Tensor, RunError<H::Error>> {
    host.alias(
        t,
        &const_vec(&v.sizes, "a view"),
        &const_vec(&v.strides, "a view"),
        v.offset.expect_const("a view"),
    )
    .map_err(RunError::Host)
}

/// Geometry equality, ignoring strides of size-1 dims (they never affect addressing).
pub fn same_geometry(a: &TensorDesc, b: &TensorDesc) -> bool {
    a.dtype == b.dtype
        && a.sizes == b.sizes
        && a.sizes
            .iter()
            .zip(a.strides.iter().zip(&b.strides))
            .all(|(s, (x, y))| *s <= 1 || x == y)
}

/// Whether two byte spans share a byte (empty spans share none).
fn overlaps(a: (usize, usize), b: (usize, usize)) -> bool {
    a.0 < a.1 && b.0 < b.1 && a.0 < b.1 && b.0 < a.1
}
