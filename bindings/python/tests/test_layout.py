"""The ctypes structures match the C headers: sizes, alignments and every field's offset,
printed by a C program compiled now against include/ri, and the enum values the binding
hard-codes."""

import ctypes
import shutil
import subprocess

import pytest

from conftest import ROOT
from ri import _lib, errors, sandbox

CONSTANTS = {
    "RI_I32": _lib.RI_I32, "RI_I64": _lib.RI_I64, "RI_F32": _lib.RI_F32, "RI_F64": _lib.RI_F64,
    "RI_GAS_HOST_CALLS": sandbox._GAS_SCHEDULES["host_calls"],
    "RI_GAS_INSTRUCTIONS": sandbox._GAS_SCHEDULES["instructions"],
    "RI_SUSPEND_ON_GAS": sandbox._PAUSE_FLAGS["gas"],
    "RI_SUSPEND_ON_INTERRUPT": sandbox._PAUSE_FLAGS["interrupt"],
    "RI_SUSPEND_ON_YIELD": sandbox._PAUSE_FLAGS["yield"],
    "RI_SNAPSHOT_V1": sandbox._SNAPSHOT_FORMATS["v1"],
    "RI_SNAPSHOT_V2": sandbox._SNAPSHOT_FORMATS["v2"],
    "RI_SANDBOX_DEFAULT_MAX_MEMORY_BYTES": sandbox.Config.max_memory_bytes,
    "RI_SANDBOX_DEFAULT_MAX_GAS": sandbox.Config.max_gas,
    "RI_SANDBOX_DEFAULT_MAX_EXECUTION_MS": sandbox.Config.max_execution_ms,
    "RI_SANDBOX_DEFAULT_SEED": sandbox.Config.seed,
}
ERRCODES = {
    "RI_SANDBOX_GAS_EXHAUSTED": errors.GasExhausted, "RI_SANDBOX_MEMORY_EXCEEDED": errors.MemoryExceeded,
    "RI_SANDBOX_TIMEOUT": errors.Timeout, "RI_SANDBOX_WASM_TRAP": errors.Trap,
    "RI_SANDBOX_INVALID_MODULE": errors.InvalidModule,
    "RI_SANDBOX_HOST_FUNCTION_ERROR": errors.HostFunctionError,
    "RI_SANDBOX_INSTANCE_DESTROYED": errors.InstanceDestroyed,
    "RI_SANDBOX_SNAPSHOT_ERROR": errors.SnapshotError, "RI_SANDBOX_INVALID_CONFIG": errors.InvalidConfig,
    "RI_SANDBOX_SUSPENDED_CALL": errors.Suspended, "RI_SANDBOX_EXIT": errors.Exited,
    "RI_SANDBOX_FILE_ERROR": errors.FileError,
}


def _c_program():
    lines = ["#include <stdalign.h>", "#include <stddef.h>", "#include <stdio.h>", '#include "ri/sandbox.h"', '#include "ri/files.h"',
             "int main(void) {"]
    for cname, cls in _lib.STRUCTS.items():
        lines.append(f'printf("{cname} size %zu align %zu\\n", sizeof({cname}), alignof({cname}));')
        for field, _ in cls._fields_:
            lines.append(f'printf("{cname}.{field} %zu\\n", offsetof({cname}, {field}));')
    for name in list(CONSTANTS) + list(ERRCODES):
        lines.append(f'printf("{name} %lld\\n", (long long){name});')
    lines.append("return 0; }")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def c_layout(tmp_path_factory):
    cc = shutil.which("gcc") or shutil.which("cc")
    if not cc:
        pytest.skip("no C compiler")
    d = tmp_path_factory.mktemp("layout")
    (d / "layout.c").write_text(_c_program())
    subprocess.run([cc, "-std=c11", "-I", str(ROOT / "include"), str(d / "layout.c"), "-o", str(d / "layout")],
                   check=True)
    out = subprocess.run([str(d / "layout")], check=True, capture_output=True, text=True).stdout
    return dict(line.split(" ", 1) for line in out.splitlines())


@pytest.mark.parametrize("cname", list(_lib.STRUCTS))
def test_struct_matches_c(c_layout, cname):
    cls = _lib.STRUCTS[cname]
    assert c_layout[cname] == f"size {ctypes.sizeof(cls)} align {ctypes.alignment(cls)}"
    for field, _ in cls._fields_:
        assert int(c_layout[f"{cname}.{field}"]) == getattr(cls, field).offset, f"{cname}.{field}"


def test_constants_match_c(c_layout):
    for name, value in CONSTANTS.items():
        assert int(c_layout[name]) == value, name
    for name, cls in ERRCODES.items():
        assert errors._BY_NUMBER[int(c_layout[name])] is cls, name

