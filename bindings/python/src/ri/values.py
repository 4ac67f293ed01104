"""WebAssembly values: typed arguments for Sandbox.call and the conversions between Python
numbers and the C ri_val (floats travel as their bits, so NaN payloads survive)."""

import struct
from typing import NamedTuple

from . import _lib

TYPES = {"i32": _lib.RI_I32, "i64": _lib.RI_I64, "f32": _lib.RI_F32, "f64": _lib.RI_F64}
NAMES = {v: k for k, v in TYPES.items()}


class Value(NamedTuple):
    """A number with its WebAssembly type ("i32", "i64", "f32" or "f64")."""
    type: str
    value: object


def i32(v):
    """An i32 argument (an int in [-2**31, 2**32); above 2**31 - 1 read as unsigned)."""
    return Value("i32", v)


def i64(v):
    """An i64 argument (an int in [-2**63, 2**64))."""
    return Value("i64", v)


def f32(v):
    """An f32 argument (rounded to single precision)."""
    return Value("f32", v)


def f64(v):
    """An f64 argument."""
    return Value("f64", v)


def type_code(name):
    try:
        return TYPES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown value type {name!r}: use 'i32', 'i64', 'f32' or 'f64'") from None


def _int(v, bits, name):
    if isinstance(v, bool):
        v = int(v)
    elif not isinstance(v, int):
        raise TypeError(f"{name} wants an int, got {type(v).__name__} {v!r}")
    if not -(1 << (bits - 1)) <= v < (1 << bits):
        raise OverflowError(f"{v} does not fit {name} (range [-2**{bits - 1}, 2**{bits}))")
    return v - (1 << bits) if v >= (1 << (bits - 1)) else v


def _float(v, name):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    raise TypeError(f"{name} wants a float, got {type(v).__name__} {v!r}")


def store(val, type_name, v):
    """Writes Python number v into the C ri_val val as type_name (already val's type)."""
    code = type_code(type_name)
    val.type = code
    if code == _lib.RI_I32:
        val.of.i64 = 0
        val.of.i32 = _int(v, 32, "i32")
    elif code == _lib.RI_I64:
        val.of.i64 = _int(v, 64, "i64")
    elif code == _lib.RI_F32:
        x = _float(v, "f32")
        try:
            bits = struct.unpack("<I", struct.pack("<f", x))[0]
        except OverflowError:  # finite but beyond f32's range: rounds to infinity
            bits = 0x7F800000 if x > 0 else 0xFF800000
        val.of.i64 = 0
        val.of.f32_bits = bits
    else:
        val.of.f64_bits = struct.unpack("<Q", struct.pack("<d", _float(v, "f64")))[0]


def load(val):
    """The Python number in a C ri_val (int for i32/i64, float for f32/f64)."""
    code = val.type
    if code == _lib.RI_I32:
        return val.of.i32
    if code == _lib.RI_I64:
        return val.of.i64
    if code == _lib.RI_F32:
        return struct.unpack("<f", struct.pack("<I", val.of.f32_bits))[0]
    if code == _lib.RI_F64:
        return struct.unpack("<d", struct.pack("<Q", val.of.f64_bits))[0]
    raise TypeError(f"unsupported value type 0x{code:02x}")


def infer(v):
    """The typed argument for a plain Python value: Value as is, int and bool as i32, float as
    f64."""
    if isinstance(v, Value):
        return v
    if isinstance(v, (bool, int)):
        return Value("i32", v)
    if isinstance(v, float):
        return Value("f64", v)
    raise TypeError(f"cannot pass {type(v).__name__} {v!r} to WebAssembly: use an int, a float, or "
                    "ri.i32/ri.i64/ri.f32/ri.f64")
