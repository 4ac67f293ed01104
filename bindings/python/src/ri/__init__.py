"""ri-sandbox for Python: deterministic, metered WebAssembly sandboxes.

    import ri
    with ri.Sandbox(max_gas=10_000) as sb:
        sb.load(wasm_bytes)
        print(sb.execute("add", [17, 25]), sb.last_result.gas_used)

The shared library libri.so.0 is loaded on first use: from the path in the environment
variable RI_LIBRARY if set, else where ctypes.util.find_library("ri") and the dynamic linker
find it (libri.so.0). The guide: docs/PYTHON.md.
"""

from . import _lib
from .errors import (BadPath, DirectoryNotEmpty, Exited, FileError, FileExists, FileNotFound, GasExhausted,
                     HostFunctionError, InstanceDestroyed, Interrupted, InvalidConfig, InvalidModule, IsADirectory,
                     LibraryNotFoundError, MemoryExceeded, NoWorkspace, NotADirectory, OutOfBounds, QuotaExceeded, RiError,
                     SnapshotError, Suspended, Timeout, Trap)
from .files import FileEntry, Files, FileStat, diff_files
from .snapdiff import delta_apply, diff, is_delta
from .host import Caller, HostFunction, Memory, host_function
from .pressure import Advice, advise, memory_pressure
from .sandbox import Checkpoint, CheckpointInfo, Config, Metrics, Result, Sandbox
from .values import Value, f32, f64, i32, i64

__version__ = "0.2.0"


def version():
    """The version of the loaded C library ("MAJOR.MINOR.PATCH")."""
    return _lib.text(_lib.lib().ri_version())


__all__ = [
    "Advice", "BadPath", "Caller", "DirectoryNotEmpty", "Exited", "FileEntry", "FileError", "FileExists",
    "FileNotFound", "FileStat", "Files", "IsADirectory", "NoWorkspace", "NotADirectory", "OutOfBounds", "QuotaExceeded",
    "delta_apply", "diff", "diff_files", "is_delta", "Checkpoint", "CheckpointInfo", "Config", "GasExhausted", "HostFunction",
    "HostFunctionError", "InstanceDestroyed", "Interrupted", "InvalidConfig", "InvalidModule",
    "LibraryNotFoundError", "Memory", "MemoryExceeded", "Metrics", "Result", "RiError", "Sandbox",
    "SnapshotError", "Suspended", "Timeout", "Trap", "Value", "advise", "f32", "f64", "host_function",
    "i32", "i64", "memory_pressure", "version",
]
