#!/usr/bin/env python3
"""Writes tests/wat/acc.wat, the fixture of tests/unit/test_acc.c, from the accumulator
variants of src/engine/code.h (RI_CODE_ACC_OPS): for each variant V of the generic kinds
(binary operations, loads, stores) two exports with the signature
(i32 i32 i64 i64 f32 f32 f64 f64) -> i64:
  acc_V  computes a value with an instruction whose result the next instruction reads at
         V's operand positions (so that the compiler picks V);
  ref_V  computes the same value with another instruction in between (so that V is not
         used).
Fused variants: those of FUSED below here too; the others (I32_ADD_LX_A2, ...) occur in
acc_fused.wat and the other fusion fixtures (test_acc.c checks that each occurs somewhere).
Usage: tests/wat/acc_gen.py > tests/wat/acc.wat"""
import os
import re
import sys

here = os.path.dirname(os.path.abspath(__file__))
code_h = open(os.path.join(here, "..", "..", "src", "engine", "code.h")).read()

# expand the RI_ACC_* helper macros of the RI_CODE_ACC_OPS list by hand
body = code_h[code_h.index("#define RI_CODE_ACC_OPS(X)"):]
body = body[:body.index("\n\n")]
variants = []
for kind, name, arg in re.findall(r"RI_ACC_(BINI|BIN|LOAD|STORE)\(X, (\w+)(?:, (\w+))?\)", body):
    if kind in ("BIN", "BINI"):
        variants += [(name + "_A2", name, 0x4), (name + "_A3", name, 0x8)]
        if kind == "BINI":
            variants.append((name + "_I_A2", name + "_I", 0x4))
    elif kind == "LOAD":
        variants.append((name + "_A2", name, 0x4))
    else:
        variants += [(name + "_A1", name, 0x2), (name + "_A2", name, 0x4)]
for v, base, mask in re.findall(r"X\((\w+), (\w+), \d+, (0x[0-9A-Fa-f]+), \w+\)", body):
    variants.append((v, base, int(mask, 16)))

# per type: the wat type, the producer (an instruction nothing fuses with) of parameter
# {}, the type's first parameter, the result as i64
TYPES = {
    "I32": ("i32", "(i32.div_u (local.get {}) (i32.const 3))", 0, "(i64.extend_i32_u {})"),
    "I64": ("i64", "(i64.div_u (local.get {}) (i64.const 3))", 2, "{}"),
    "F32": ("f32", "(f32.sqrt (local.get {}))", 4, "(i64.extend_i32_u (i32.reinterpret_f32 {}))"),
    "F64": ("f64", "(f64.sqrt (local.get {}))", 6, "(i64.reinterpret_f64 {})"),
}
# wat type, producer (of the type's first parameter), the other operand (its second), result
T = {ty: (wt, prod.format(p), f"(local.get {p + 1})", res) for ty, (wt, prod, p, res) in TYPES.items()}
ADDR = "(i32.and (i32.div_u (local.get 0) (i32.const 3)) (i32.const 0xff8))"
LOADS = {"I32_LOAD": ("I32", "i32.load"), "I32_LOAD8_U": ("I32", "i32.load8_u"),
         "I32_LOAD8_S": ("I32", "i32.load8_s"), "I32_LOAD16_U": ("I32", "i32.load16_u"),
         "I32_LOAD16_S": ("I32", "i32.load16_s"), "I64_LOAD": ("I64", "i64.load"),
         "F32_LOAD": ("F32", "f32.load"), "F64_LOAD": ("F64", "f64.load")}
STORES = {"I32_STORE": ("I32", "i32.store", "i32.load"), "I32_STORE8": ("I32", "i32.store8", "i32.load8_u"),
          "I32_STORE16": ("I32", "i32.store16", "i32.load16_u"), "I64_STORE": ("I64", "i64.store", "i64.load"),
          "F32_STORE": ("F32", "f32.store", "f32.load"), "F64_STORE": ("F64", "f64.store", "f64.load")}


def breaker(ty):
    """An instruction writing another slot, between a producer and its consumer in ref_: the
    producer of the type's second parameter."""
    wt, prod, p, res = TYPES[ty]
    return f"(local.set $u{ty} {prod.format(p + 1)})"


def binary(v, base, mask):
    m = re.match(r"(I32|I64|F32|F64)_(\w+?)(_I)?$", base)
    ty, op, imm = m.group(1), m.group(2), m.group(3)
    wt, prod, other, res = T[ty]
    wop = f"{wt}.{op.lower()}"
    k = f"({wt}.const 5)"
    if imm:
        acc = f"({wop} {prod} {k})"
        ref = f"(local.set $t{ty} {prod}) {breaker(ty)} ({wop} (local.get $t{ty}) {k})"
    elif mask == 0x4:
        acc = f"({wop} {prod} {other})"
        ref = f"(local.set $t{ty} {prod}) {breaker(ty)} ({wop} (local.get $t{ty}) {other})"
    elif mask == 0x8:
        acc = f"({wop} {other} {prod})"
        ref = f"(local.set $t{ty} {prod}) {breaker(ty)} ({wop} {other} (local.get $t{ty}))"
    else:  # both operands
        acc = f"({wop} (local.tee $t{ty} {prod}) (local.get $t{ty}))"
        ref = f"(local.set $t{ty} {prod}) {breaker(ty)} ({wop} (local.get $t{ty}) (local.get $t{ty}))"
    return res.format(acc), res.format(ref)


def load(v, base):
    ty, wop = LOADS[base]
    res = T[ty][3]
    acc = f"({wop} offset=4 {ADDR})"
    ref = f"(local.set $tI32 {ADDR}) {breaker('I32')} ({wop} offset=4 (local.get $tI32))"
    return res.format(acc), res.format(ref)


def store(v, base, mask):
    ty, wop, back = STORES[base]
    res = T[ty][3]
    wt, prod, other, _ = T[ty]
    readback = res.format(f"({back} offset=8 {ADDR})")
    if mask == 0x2:  # the address from the accumulator
        acc = f"({wop} offset=8 {ADDR} {other}) {readback}"
        ref = f"(local.set $tI32 {ADDR}) {breaker('I32')} ({wop} offset=8 (local.get $tI32) {other}) {readback}"
    else:  # the value
        acc = f"({wop} offset=8 (local.get $a) {prod}) {readback}"
        ref = f"(local.set $t{ty} {prod}) {breaker(ty)} ({wop} offset=8 (local.get $a) (local.get $t{ty})) {readback}"
    return acc, ref


# Fused variants whose shape wat can pin down: the expression with P where the producer
# goes (an i32 below 256, so that addresses stay in the memory); ref_ sets P aside first.
SMALL = "(i32.rem_u (local.get 0) (i32.const 251))"
FUSED = {
    "I32_ADD_SHL_I_A2": "(i32.add P (i32.shl (local.get 1) (i32.const 2)))",
    "I32_ADD_SHL_I_A3": "(i32.add (local.get 1) (i32.shl P (i32.const 2)))",
    "I32_XOR_SHR_U_I_A2": "(i32.xor P (i32.shr_u (local.get 1) (i32.const 8)))",
    "I32_XOR_SHR_U_I_A3": "(i32.xor (local.get 1) (i32.shr_u P (i32.const 8)))",
    "I32_LOAD_SX_A2": "(i32.load (i32.add P (i32.shl (local.get $b) (i32.const 2))))",
    "I32_LOAD_SX_A3": "(i32.load (i32.add (local.get $a) (i32.shl P (i32.const 2))))",
    "I32_LOAD_SXI_A2": "(i32.load (i32.add (i32.shl P (i32.const 2)) (i32.const 1024)))",
    "I32_ADD_LX8U_A2": "(i32.add P (i32.load8_u offset=3 (i32.add (local.get $a) (local.get $b))))",
}


def fused(v):
    shape = FUSED[v]
    acc = shape.replace("P", SMALL, 1)
    rest = shape.replace("(local.tee $tI32 P)", "(local.get $tI32)").replace("P", "(local.get $tI32)", 1)
    ref = f"(local.set $tI32 {SMALL}) {breaker('I32')} {rest}"
    return f"(i64.extend_i32_u {acc})", f"(i64.extend_i32_u {ref})"


out = [";; Generated by tests/wat/acc_gen.py from src/engine/code.h; do not edit.", "(module", "  (memory (export \"memory\") 1)"]
locals_ = " ".join(f"(local $t{t} {T[t][0]}) (local $u{t} {T[t][0]})" for t in T) + " (local $a i32) (local $b i32)"
prologue = "(local.set $a (i32.and (local.get 0) (i32.const 0xff8))) (local.set $b (i32.and (local.get 1) (i32.const 0xff)))"
count = 0
for v, base, mask in variants:
    if re.match(r"(I32|I64|F32|F64)_[A-Z_]+?(_I)?$", base) and not re.search(r"LOAD|STORE|_M\d|_LX|SQRT|_MUL_B|_LB|_SX|_SHL_I|_SHR_U_I", base) \
            or base in ("I32_SHL_I", "I32_SHR_S_I", "I32_SHR_U_I", "I64_SHL_I", "I64_SHR_U_I"):
        acc, ref = binary(v, base, mask)
    elif base in LOADS:
        acc, ref = load(v, base)
    elif base in STORES:
        acc, ref = store(v, base, mask)
    elif v in FUSED:
        acc, ref = fused(v)
    else:
        continue
    for prefix, expr in (("acc", acc), ("ref", ref)):
        out.append(f"  (func (export \"{prefix}_{v}\") (param i32 i32 i64 i64 f32 f32 f64 f64) (result i64) {locals_}")
        out.append(f"    {prologue} {expr})")
    count += 1
out.append(")")
print("\n".join(out))
print(f"acc_gen.py: {count} variants", file=sys.stderr)
