"""`_precompile._runtime.code_key`, the structural fingerprint a `CODE_MATCH` guard compares in
a loaded artifact (the code of a function made inside a frame): codes that behave differently
must not share a key, and codes that differ only in line numbers must."""

from __future__ import annotations

from torchferro._precompile._runtime import code_key


def _guarded(x):
    try:
        y = x[0]
    except IndexError:
        y = None
    return y


def test_the_exception_table_is_part_of_the_key():
    # Same bytecode, no handler: an IndexError now escapes instead of giving None.
    code = _guarded.__code__
    bare = code.replace(co_exceptiontable=b"")
    assert bare.co_code == code.co_code
    assert code_key(bare) != code_key(code)


def test_line_numbers_are_not():
    code = _guarded.__code__
    moved = code.replace(co_firstlineno=code.co_firstlineno + 100)
    assert code_key(moved) == code_key(code)


def test_a_nested_constant_code_counts():
    def outer(flag):
        return (lambda: 1) if flag else (lambda: 2)

    other = outer.__code__.co_consts
    changed = tuple(
        c.replace(co_consts=tuple(3 if k == 1 else k for k in c.co_consts))
        if hasattr(c, "co_code")
        else c
        for c in other
    )
    assert code_key(outer.__code__.replace(co_consts=changed)) != code_key(
        outer.__code__
    )
