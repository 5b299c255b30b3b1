#!/usr/bin/env python3
"""Dump every code object of Python source files in the shared fixture format.

    python3 bytecode/gen/dump_corpus.py OUT.json FILE.py [FILE.py ...]

Each code object (functions, comprehensions, class bodies, module bodies, nested to any depth)
becomes one entry with its raw fields as hex and `dis.get_instructions(show_caches=True)` rows,
which is what bytecode/tests/fixtures.rs checks the Rust decoder, tables, stack depth and
assembler against. Run it with the interpreter whose bytecode you want (3.11 or 3.12).
`gen/extended_args.py` is the source of tests/data/extended_args-3.11.json: code big enough
to need EXTENDED_ARG for constants, locals and jumps.
"""
import dis
import json
import sys
import types


def walk(code):
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from walk(c)


def entry(code):
    rows = []
    for ins in dis.get_instructions(code, show_caches=True):
        rows.append({
            "offset": ins.offset, "opname": ins.opname, "opcode": ins.opcode, "arg": ins.arg,
            "argrepr": ins.argrepr, "is_jump_target": ins.is_jump_target,
            "line": ins.positions.lineno if ins.positions else None,
        })
    return {
        "qualname": code.co_qualname, "name": code.co_name, "firstlineno": code.co_firstlineno,
        "stacksize": code.co_stacksize, "code_hex": code.co_code.hex(),
        "exceptiontable_hex": code.co_exceptiontable.hex(),
        "linetable_hex": code.co_linetable.hex(), "instructions": rows,
    }


def main():
    out, files = sys.argv[1], sys.argv[2:]
    fixtures = []
    for path in files:
        with open(path) as f:
            src = f.read()
        fixtures += [entry(c) for c in walk(compile(src, path, "exec"))]
    with open(out, "w") as f:
        json.dump({"python": sys.version, "fixtures": fixtures}, f, separators=(",", ":"))
    print(f"{out}: {len(fixtures)} code objects")


if __name__ == "__main__":
    main()
