#!/usr/bin/env python3
"""Generate bytecode/src/opcode_tables.rs from the opcode dumps in shared/fixtures/bytecode.

The dumps (opcodes-3.11.json, opcodes-3.12.json) were taken from the real interpreters: opmap,
HAVE_ARGUMENT, the has* lists, inline cache counts and `dis.stack_effect` sampled for opargs 0..15.
The generated Rust file is checked in so the crate builds without the shared folder.

Stack effects are stored as a formula in oparg rather than as samples. Each formula is fitted to
the 16 samples and rejected unless it reproduces every one of them; the few formulas that the
samples cannot pin down (UNPACK_EX packs two counts into one oparg) are stated explicitly below and
still checked against the samples.

Usage: python3 bytecode/gen/gen_opcodes.py [FIXTURE_DIR]   (default: ../shared/fixtures/bytecode
relative to the repository root), run from anywhere.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE = os.path.dirname(HERE)
REPO = os.path.dirname(CRATE)
DEFAULT_DIR = os.path.join(os.path.dirname(REPO), "shared", "fixtures", "bytecode")
OUT = os.path.join(CRATE, "src", "opcode_tables.rs")

VERSIONS = [("3.11", "V3_11"), ("3.12", "V3_12")]

# Opcodes after which execution never continues with the next instruction.
TERMINAL = {
    "RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE", "INTERPRETER_EXIT",
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT",
    "INSTRUMENTED_RETURN_VALUE", "INSTRUMENTED_RETURN_CONST",
    "INSTRUMENTED_JUMP_FORWARD", "INSTRUMENTED_JUMP_BACKWARD",
}
UNCONDITIONAL_JUMPS = {
    "JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT",
}

# term name -> function of oparg. Order matters: the first term that fits is used.
TERMS = [
    ("Oparg", lambda a: a),
    ("LowBit", lambda a: a & 1),
    ("Bit2", lambda a: (a >> 2) & 1),
    ("FlagCount", lambda a: bin(a & 0xF).count("1")),
    ("IsThree", lambda a: 1 if a == 3 else 0),
]
TERM_FN = dict(TERMS)
TERM_FN["UnpackEx"] = lambda a: (a & 0xFF) + (a >> 8)

# Formulas the samples (opargs 0..15) cannot distinguish from a simpler fit.
EXPLICIT_TERM = {"UNPACK_EX": "UnpackEx"}

# Where the effect that matters for co_stacksize differs from dis.stack_effect.
# RETURN_GENERATOR: dis says 0, but the frame resumes after it with the value sent by the first
# send() on the stack, and the POP_TOP the compiler always puts next pops it.
FALLTHROUGH_CORRECTION = {"RETURN_GENERATOR": 1}


def fit(name, samples):
    """Return (base, scale, term) with samples[i] == base + scale * term(i) for all i."""
    if len(set(samples)) == 1:
        return samples[0], 0, "Oparg"
    candidates = [(EXPLICIT_TERM[name], TERM_FN[EXPLICIT_TERM[name]])] if name in EXPLICIT_TERM else TERMS
    for term, fn in candidates:
        ts = [fn(i) for i in range(len(samples))]
        pivot = next((i for i in range(len(ts)) if ts[i] != ts[0]), None)
        if pivot is None:
            continue
        dt = ts[pivot] - ts[0]
        ds = samples[pivot] - samples[0]
        if ds % dt:
            continue
        scale = ds // dt
        base = samples[0] - scale * ts[0]
        if all(base + scale * t == s for t, s in zip(ts, samples)):
            return base, scale, term
    raise SystemExit(f"no stack-effect formula fits {name}: {samples}")


def stack_effect(name, table):
    """Rust expression for the opcode's StackEffect, or None when the dump has no samples."""
    if not table:
        return "None"
    if "None/False" in table:
        nj = [table["None/False"]] * 16
        j = [table["None/True"]] * 16
    else:
        nj = [table[f"{i}/False"] for i in range(16)]
        j = [table[f"{i}/True"] for i in range(16)]
    deltas = {b - a for a, b in zip(nj, j)}
    if len(deltas) != 1:
        raise SystemExit(f"jump effect of {name} is not a constant offset: {nj} / {j}")
    base, scale, term = fit(name, nj)
    base += FALLTHROUGH_CORRECTION.get(name, 0)
    return (f"Some(StackEffect {{ base: {base}, scale: {scale}, term: ArgTerm::{term}, "
            f"jump_delta: {deltas.pop()} }})")


def arg_kind(num, d):
    for key, kind in [("hasjrel", "Jump"), ("hasjabs", "Jump"), ("hasconst", "Const"),
                      ("hasname", "Name"), ("haslocal", "Local"), ("hasfree", "Free"),
                      ("hascompare", "Compare"), ("hasexc", "ExceptionHandler")]:
        if num in d[key]:
            return kind
    return "Other" if num >= d["HAVE_ARGUMENT"] else "Unused"


def jump(name, num, d):
    if num not in d["hasjrel"] and num not in d["hasjabs"]:
        return "None"
    direction = "Backward" if "BACKWARD" in name else "Forward"
    conditional = "false" if name in UNCONDITIONAL_JUMPS else "true"
    return f"Some(Jump {{ direction: Direction::{direction}, conditional: {conditional} }})"


def generate(d, const):
    opmap = d["opmap"]
    caches = d["inline_cache_entries"]
    rows = []
    for name, num in sorted(opmap.items(), key=lambda kv: kv[1]):
        pseudo = num >= 256
        has_arg = num >= d["HAVE_ARGUMENT"] or pseudo
        flip = None
        for a, b in (("FORWARD", "BACKWARD"), ("BACKWARD", "FORWARD")):
            if a in name and name.replace(a, b) in opmap:
                flip = opmap[name.replace(a, b)]
        rows.append(
            f"    OpcodeInfo {{ version: Version::{const}, name: {json.dumps(name)}, number: {num}, "
            f"caches: {0 if pseudo else caches[num]}, has_arg: {str(has_arg).lower()}, "
            f"pseudo: {str(pseudo).lower()}, arg_kind: ArgKind::{arg_kind(num, d)}, "
            f"jump: {jump(name, num, d)}, terminal: {str(name in TERMINAL).lower()}, "
            f"flipped: {'None' if flip is None else f'Some({flip})'}, "
            f"stack_effect: {stack_effect(name, d['stack_effect'][name])} }},")
    by_number = ["NONE"] * 256
    for i, (name, num) in enumerate(sorted(opmap.items(), key=lambda kv: kv[1])):
        if num < 256:
            by_number[num] = str(i)
    by_name = sorted(range(len(rows)), key=lambda i: sorted(opmap.items(), key=lambda kv: kv[1])[i][0])
    out = [f"pub(crate) static {const}: [OpcodeInfo; {len(rows)}] = ["]
    out += rows
    out.append("];")
    out.append(f"pub(crate) static {const}_BY_NUMBER: [u8; 256] = [")
    out += [f"    {', '.join(by_number[i:i + 16])}," for i in range(0, 256, 16)]
    out.append("];")
    out.append(f"pub(crate) static {const}_BY_NAME: [u8; {len(rows)}] = [")
    out += [f"    {', '.join(map(str, by_name[i:i + 16]))}," for i in range(0, len(by_name), 16)]
    out.append("];")
    ops = ", ".join(json.dumps(sym) for _, sym in d["nb_ops"])
    out.append(f"pub(crate) static {const}_BINARY_OPS: [&str; {len(d['nb_ops'])}] = [{ops}];")
    cmp = ", ".join(json.dumps(sym) for sym in d["cmp_op"])
    out.append(f"pub(crate) static {const}_COMPARE_OPS: [&str; {len(d['cmp_op'])}] = [{cmp}];")
    return out, len(rows)


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_DIR
    lines = [
        "// @generated by bytecode/gen/gen_opcodes.py from opcodes-3.11.json and opcodes-3.12.json.",
        "// Do not edit by hand: rerun the script.",
        "",
        "use crate::opcode::{ArgKind, ArgTerm, Direction, Jump, OpcodeInfo, StackEffect, Version};",
        "",
        "/// Marks a byte that is not an opcode in `*_BY_NUMBER`.",
        "const NONE: u8 = u8::MAX;",
        "",
    ]
    for ver, const in VERSIONS:
        with open(os.path.join(src, f"opcodes-{ver}.json")) as f:
            d = json.load(f)
        assert d["python"].startswith(ver), d["python"]
        body, n = generate(d, const)
        assert n < 255, "opcode indices must fit a u8 below NONE"
        lines.append(f"// CPython {d['python'].split()[0]}")
        lines += body
        lines.append("")
    with open(OUT, "w") as f:
        f.write("\n".join(lines))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
