"""Which torch calls return their input itself in eager (`f(x) is x`), and whether ours agrees."""

import torch, torchferro

CALLS = {
    "torch.real": lambda x: torch.real(x),
    "torch.conj": lambda x: torch.conj(x),
    "x.conj()": lambda x: x.conj(),
    "torch.resolve_conj": lambda x: torch.resolve_conj(x),
    "x.resolve_conj()": lambda x: x.resolve_conj(),
    "torch.resolve_neg": lambda x: torch.resolve_neg(x),
    "x.resolve_neg()": lambda x: x.resolve_neg(),
    "torch.conj_physical": lambda x: torch.conj_physical(x),
    "torch.atleast_1d": lambda x: torch.atleast_1d(x),
    "torch.atleast_2d": lambda x: torch.atleast_2d(x),
    "torch.flatten": lambda x: torch.flatten(x),
    "x.flatten()": lambda x: x.flatten(),
    "x.flatten(0,0)": lambda x: x.flatten(0, 0),
    "x.type_as(x)": lambda x: x.type_as(x),
    "x.type(x.type())": lambda x: x.type(x.type()),
    "torch.Tensor.float": lambda x: torch.Tensor.float(x),
    "x.to(x)": lambda x: x.to(x),
    "x.t()": lambda x: x.t(),
    "x.T": lambda x: x.T,
    "x.mT?": lambda x: x.H if x.dim() <= 2 else x,
    "x.requires_grad_(False)": lambda x: x.requires_grad_(False),
    "x.cpu()": lambda x: x.cpu(),
    "x.contiguous()": lambda x: x.contiguous(),
    "torch.as_tensor": lambda x: torch.as_tensor(x),
    "torch.as_tensor(dtype)": lambda x: torch.as_tensor(x, dtype=x.dtype),
    "torch.asarray": lambda x: torch.asarray(x),
    "x.squeeze(-1)?": lambda x: x.squeeze(),
    "x.data": lambda x: x.data,
    "x.detach()": lambda x: x.detach(),
    "torch.broadcast_tensors[0]": lambda x: torch.broadcast_tensors(x)[0],
    "x.expand_as(x)": lambda x: x.expand_as(x),
    "x.abs_()": lambda x: x.abs_(),
    "torch.relu_": lambda x: torch.relu_(x),
    "x.align_to?": lambda x: x.rename(None),
    "x.sum_to_size(x.shape)": lambda x: x.sum_to_size(x.shape),
    "torch.nn.functional.dropout(eval)": lambda x: torch.nn.functional.dropout(
        x, 0.5, False
    ),
    "torch.nn.functional.dropout(p=0)": lambda x: torch.nn.functional.dropout(
        x, 0.0, True
    ),
    "nn.Identity": torch.nn.Identity(),
    "x.to(memory_format=preserve)": lambda x: x.to(memory_format=torch.preserve_format),
    "x.clone()": lambda x: x.clone(),
    "torch.Tensor.__pos__?": lambda x: +x,
}


def run(name, g, x):
    torchferro.compiler.reset()

    def f(x):
        r = g(x)
        return r is x, r

    e, _ = f(x)
    c, _ = torchferro.compile(f, backend="eager")(x)
    i, _ = torchferro.compile(f)(x)
    flag = "" if e == c == i else "   <-- DIFFERS"
    print(f"{name:35s} {x.dim()}d eager={e} ferro={c} ind={i}{flag}")


for name, g in CALLS.items() if "tc" not in __import__("sys").argv else ():
    for x in (torch.randn(4), torch.randn(2, 3)):
        try:
            run(name, g, x)
        except Exception as ex:
            print(f"{name:35s} {x.dim()}d ERROR {type(ex).__name__}: {str(ex)[:100]}")

if __name__ == "__main__":
    import sys

    if "tc" in sys.argv:
        import torch._dynamo as td

        print("--- torch.compile(backend='eager')")
        for name, g in CALLS.items():
            x = torch.randn(2, 3)

            def f(x, g=g):
                r = g(x)
                return r is x, r

            td.reset()
            try:
                print(
                    f"{name:35s} eager={f(x)[0]} tc={torch.compile(f, backend='eager')(x)[0]}"
                )
            except Exception as ex:
                print(name, "ERROR", str(ex)[:80])
