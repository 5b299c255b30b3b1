"""Session 35 (hunt35): what library code asks about the compiler inside a compiled call
answers as under torch.compile: ``torch.compiler.is_dynamo_compiling()`` is True there (it was
False, so code that takes a compile-friendly path on it took the eager one)."""

import torch
import torchferro


def flags(x):
    return (
        x + 1,
        torch.compiler.is_compiling(),
        torch.compiler.is_dynamo_compiling(),
        torch.jit.is_scripting(),
    )


def test_compiler_flags_match_torch_compile():
    x = torch.randn(3)
    torch._dynamo.reset()
    want = torch.compile(flags, backend="eager")(x)[1:]
    assert want == (True, True, False)
    for backend in ("eager", "inductor"):
        torchferro.compiler.reset()
        assert torchferro.compile(flags, backend=backend)(x)[1:] == want
    assert flags(x)[1:] == (False, False, False)
