import torch, torchferro

ops = {
    "aten.alias": lambda x: torch.ops.aten.alias(x),
    "aten.alias.default": lambda x: torch.ops.aten.alias.default(x),
    "detach": lambda x: x.detach(),
    "torch.detach": lambda x: torch.detach(x),
    "view_as": lambda x: x.view_as(x),
    "ellipsis": lambda x: x[...],
    "as_strided": lambda x: x.as_strided((4,), (1,)),
    "data": lambda x: x.data,
    "reshape": lambda x: x.reshape(4),
    "flatten": lambda x: x.flatten(),
    "contiguous": lambda x: x.contiguous(),
    "view_dtype": lambda x: x.view(torch.float32),
    "expand_as": lambda x: x.expand_as(x),
    "unflatten": lambda x: x.unflatten(0, (2, 2)),
    "movedim": lambda x: x.movedim(0, 0),
    "squeeze": lambda x: x.squeeze(),
    "narrow": lambda x: x.narrow(0, 0, 4),
    "aten.view": lambda x: torch.ops.aten.view(x, [4]),
    "aten._unsafe_view": lambda x: torch.ops.aten._unsafe_view(x, [4]),
    "aten.detach": lambda x: torch.ops.aten.detach(x),
    "aten.slice": lambda x: torch.ops.aten.slice(x, 0, 0, 4),
    "to_self": lambda x: x.to(torch.float32),
    "type_as": lambda x: x.type_as(x),
    "float": lambda x: x.float(),
    "real": lambda x: x.real,
    "view_as_real_roundtrip": lambda x: torch.view_as_real(
        torch.view_as_complex(x.view(2, 2))
    ).view(4),
    "T": lambda x: x.T,
    "mT": lambda x: x.view(2, 2).mT.reshape(4),
    "resolve_conj": lambda x: x.resolve_conj(),
    "resolve_neg": lambda x: x.resolve_neg(),
    "requires_grad_false_detach_": lambda x: x.detach_() if False else x.detach(),
    "positive": lambda x: torch.positive(x),
    "chunk0": lambda x: x.chunk(1)[0],
    "split0": lambda x: x.split(4)[0],
    "unbind_stack": lambda x: x.view(1, 4).unbind(0)[0],
    "select": lambda x: x.view(1, 4).select(0, 0),
    "diagonal": lambda x: x.view(2, 2).diagonal(),
    "unfold": lambda x: x.unfold(0, 4, 1)[0],
}
bad = []
for backend in ("inductor", "eager"):
    for name, op in ops.items():

        def f(x):
            y = op(x)
            y.add_(1)
            return y

        x = torch.zeros(4)
        x2 = torch.zeros(4)
        try:
            e = f(x2)
        except Exception as ex:
            continue
        try:
            c = torchferro.compile(f, backend=backend)
            r = c(x)
        except Exception as ex:
            bad.append((backend, name, "raised " + str(ex)[:80]))
            continue
        if not torch.equal(x, x2) or not torch.equal(r, e):
            bad.append((backend, name, x.tolist(), x2.tolist()))
        torchferro.compiler.reset()
for b in bad:
    print(b)
print("done", len(ops))
