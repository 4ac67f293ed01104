"""Finding and loading libri.so, and the C declarations this binding uses.

Every ctypes structure here mirrors a struct of include/ri/sandbox.h or include/ri/engine.h
field for field (tests/test_layout.py compiles a C program that prints the C sizes and offsets
and compares them with these). CDLL releases the GIL during each foreign call, so another
Python thread can run (and call Sandbox.interrupt) while an execution runs; the host
function trampolines (CFUNCTYPE) take the GIL back while Python code runs.
"""

import ctypes
import ctypes.util
import os
import threading

from .errors import LibraryNotFoundError

#: The environment variable naming the shared library to load.
ENV_VAR = "RI_LIBRARY"

# The ABI this binding was written for: the library's major version must be this one
# (semantic versioning: a release with the same major keeps the ABI), its minor at least
# MIN_MINOR (ri_free appeared in 0.2).
ABI_MAJOR = 0
MIN_MINOR = 2

# ---- C types -------------------------------------------------------------------------------

c_bool = ctypes.c_bool
c_int = ctypes.c_int  # every C enum here: int-sized, values in int's range
c_u8p = ctypes.POINTER(ctypes.c_uint8)

RI_I32, RI_I64, RI_F32, RI_F64 = 0x7F, 0x7E, 0x7D, 0x7C


class RiValOf(ctypes.Union):
    _fields_ = [
        ("i32", ctypes.c_int32),
        ("i64", ctypes.c_int64),
        ("f32_bits", ctypes.c_uint32),
        ("f64_bits", ctypes.c_uint64),
        ("v128", ctypes.c_uint8 * 16),
        ("ref", ctypes.c_void_p),
    ]


class RiVal(ctypes.Structure):
    _fields_ = [("type", c_int), ("of", RiValOf)]


# int (*ri_host_fn)(ri_host_call *call, void *user, const ri_val *args, ri_val *results)
HOST_FN = ctypes.CFUNCTYPE(c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(RiVal), ctypes.POINTER(RiVal))


class RiHostFunction(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("nparams", ctypes.c_uint32),
        ("params", ctypes.POINTER(c_int)),
        ("nresults", ctypes.c_uint32),
        ("results", ctypes.POINTER(c_int)),
        ("fn", HOST_FN),
        ("user", ctypes.c_void_p),
    ]


class RiSandboxConfig(ctypes.Structure):
    _fields_ = [
        ("max_memory_bytes", ctypes.c_uint64),
        ("max_gas", ctypes.c_uint64),
        ("max_execution_ms", ctypes.c_uint32),
        ("deterministic_seed", ctypes.c_uint32),
        ("has_event_timestamp", c_bool),
        ("event_timestamp", ctypes.c_int64),
        ("host_functions", ctypes.POINTER(RiHostFunction)),
        ("nhost_functions", ctypes.c_uint32),
        ("gas_schedule", c_int),
        ("max_call_depth", ctypes.c_uint32),
        ("host_modules", ctypes.POINTER(ctypes.c_char_p)),
        ("enable_wasi", c_bool),
        ("wasi", ctypes.c_void_p),
        ("enable_emscripten", c_bool),
        ("fusions_off", ctypes.c_uint32),
        ("reserved32", ctypes.c_uint32),
        ("reserved", ctypes.c_uint64 * 6),
    ]


class RiSandboxError(ctypes.Structure):
    _fields_ = [
        ("code", c_int),
        ("gas_used", ctypes.c_uint64),
        ("gas_limit", ctypes.c_uint64),
        ("memory_used", ctypes.c_uint64),
        ("memory_limit", ctypes.c_uint64),
        ("elapsed_ms", ctypes.c_uint64),
        ("limit_ms", ctypes.c_uint64),
        ("trap_kind", ctypes.c_char * 40),
        ("function_name", ctypes.c_char * 128),
        ("instance_id", ctypes.c_char * 64),
        ("message", ctypes.c_char * 512),
        ("reserved", ctypes.c_uint64 * 4),
    ]


class RiSandboxMetrics(ctypes.Structure):
    _fields_ = [
        ("memory_used_bytes", ctypes.c_uint64),
        ("memory_limit_bytes", ctypes.c_uint64),
        ("gas_used", ctypes.c_uint64),
        ("gas_limit", ctypes.c_uint64),
        ("execution_ms", ctypes.c_double),
        ("execution_limit_ms", ctypes.c_uint64),
        ("reserved", ctypes.c_uint64 * 4),
    ]


class RiSandboxResult(ctypes.Structure):
    _fields_ = [
        ("ok", c_bool),
        # c_void_p, not c_char_p: the pointer itself is needed to free it.
        ("value_json", ctypes.c_void_p),
        ("nresults", ctypes.c_uint32),
        ("results", RiVal * 4),
        ("metrics", RiSandboxMetrics),
        ("gas_used", ctypes.c_uint64),
        ("duration_ms", ctypes.c_double),
        ("error", RiSandboxError),
        ("exited", c_bool),
        ("exit_code", ctypes.c_uint32),
        ("reserved", ctypes.c_uint64 * 8),
    ]


class RiSnapshotOptions(ctypes.Structure):
    _fields_ = [("format", c_int), ("include_module", c_bool), ("uncompressed", c_bool)]


class RiCheckpointOptions(ctypes.Structure):
    _fields_ = [("full", c_bool), ("no_pagemap", c_bool), ("no_memfd", c_bool)]


class RiCheckpointInfo(ctypes.Structure):
    _fields_ = [
        ("memory_pages", ctypes.c_uint32),
        ("stored_pages", ctypes.c_uint32),
        ("depth", ctypes.c_uint32),
        ("memfd", c_bool),
    ]


class RiExecuteOptions(ctypes.Structure):
    _fields_ = [("transactional", c_bool)]


class RiPressureAdvice(ctypes.Structure):
    _fields_ = [
        ("action", c_int),
        ("message", ctypes.c_char * 256),
        ("ninstance_ids", ctypes.c_size_t),
        ("instance_ids", ctypes.POINTER(ctypes.c_char_p)),
    ]


class RiFileStat(ctypes.Structure):
    _fields_ = [
        ("type", c_int),
        ("size", ctypes.c_uint64),
        ("ino", ctypes.c_uint64),
        ("nlink", ctypes.c_uint64),
        ("mtime_ns", ctypes.c_uint64),
        ("ctime_ns", ctypes.c_uint64),
        ("reserved", ctypes.c_uint64 * 4),
    ]


class RiFileEntry(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_void_p),  # char *, freed by ri_file_list_free
        ("type", c_int),
        ("size", ctypes.c_uint64),
        ("reserved", ctypes.c_uint64 * 2),
    ]


class RiSnapMeta(ctypes.Structure):
    _fields_ = [
        ("module_sha256", ctypes.c_uint8 * 32),
        ("module_size", ctypes.c_uint64),
        ("status", c_int),
        ("prng_state", ctypes.c_uint32),
        ("gas_used", ctypes.c_uint64),
        ("event_timestamp", ctypes.c_int64),
    ]


class RiSnapDiffOptions(ctypes.Structure):
    _fields_ = [("max_ranges", ctypes.c_size_t), ("max_entries", ctypes.c_size_t)]


class RiSnapDiff(ctypes.Structure):
    """Read through ri_snap_diff_json; mirrored whole so that the library can fill it."""
    _fields_ = [
        ("identical", c_bool),
        ("old_version", ctypes.c_uint8),
        ("new_version", ctypes.c_uint8),
        ("old_meta", RiSnapMeta),
        ("new_meta", RiSnapMeta),
        ("old_has_module_hash", c_bool),
        ("new_has_module_hash", c_bool),
        ("module_changed", c_bool),
        ("instance_state_compared", c_bool),
        ("nmemories", ctypes.c_uint32),
        ("memories", ctypes.c_void_p),
        ("nranges", ctypes.c_size_t),
        ("ranges", ctypes.c_void_p),
        ("ranges_truncated", c_bool),
        ("nglobals", ctypes.c_size_t),
        ("globals", ctypes.c_void_p),
        ("old_nglobals", ctypes.c_uint32),
        ("new_nglobals", ctypes.c_uint32),
        ("ntables", ctypes.c_uint32),
        ("tables", ctypes.c_void_p),
        ("nentries", ctypes.c_size_t),
        ("entries", ctypes.c_void_p),
        ("entries_truncated", c_bool),
        ("nsegments", ctypes.c_size_t),
        ("segments", ctypes.c_void_p),
    ]


class RiSnapError(ctypes.Structure):
    _fields_ = [("code", c_int), ("message", ctypes.c_char * 320)]


class RiFileDiff(ctypes.Structure):
    _fields_ = [
        ("old_has_workspace", c_bool),
        ("new_has_workspace", c_bool),
        ("nchanges", ctypes.c_size_t),
        ("changes", ctypes.c_void_p),  # read through ri_file_diff_json
        ("added", ctypes.c_uint64),
        ("removed", ctypes.c_uint64),
        ("changed", ctypes.c_uint64),
        ("moved", ctypes.c_uint64),
        ("reserved", ctypes.c_uint64 * 4),
    ]


#: The mirrored structures and the C names they mirror (the layout test walks this).
STRUCTS = {
    "ri_val": RiVal,
    "ri_host_function": RiHostFunction,
    "ri_sandbox_config": RiSandboxConfig,
    "ri_sandbox_error": RiSandboxError,
    "ri_sandbox_metrics": RiSandboxMetrics,
    "ri_sandbox_result": RiSandboxResult,
    "ri_snapshot_options": RiSnapshotOptions,
    "ri_checkpoint_options": RiCheckpointOptions,
    "ri_checkpoint_info": RiCheckpointInfo,
    "ri_execute_options": RiExecuteOptions,
    "ri_pressure_advice": RiPressureAdvice,
    "ri_file_stat": RiFileStat,
    "ri_file_entry": RiFileEntry,
    "ri_file_diff": RiFileDiff,
    "ri_snap_meta": RiSnapMeta,
    "ri_snap_diff_options": RiSnapDiffOptions,
    "ri_snap_diff": RiSnapDiff,
    "ri_snap_error": RiSnapError,
}

_P = ctypes.c_void_p  # opaque handles: ri_sandboxes *, ri_sandbox *, ri_checkpoint *, ...
_ERR = ctypes.POINTER(RiSandboxError)
_BYTES = ctypes.c_char_p  # const uint8_t * input buffers (bytes objects, passed without a copy)
_SIZE = ctypes.c_size_t

# name: (restype, argtypes). ri_host_fail is variadic and has no argtypes (set below).
_PROTOTYPES = {
    "ri_version": (ctypes.c_char_p, []),
    "ri_version_number": (c_int, []),
    "ri_free": (None, [_P]),
    "ri_sandbox_config_default": (RiSandboxConfig, []),
    "ri_sandbox_errcode_name": (ctypes.c_char_p, [c_int]),
    "ri_sandbox_status_name": (ctypes.c_char_p, [c_int]),
    "ri_sandbox_result_free": (None, [ctypes.POINTER(RiSandboxResult)]),
    "ri_sandboxes_new": (_P, []),
    "ri_sandboxes_free": (None, [_P]),
    "ri_sandbox_create": (_P, [_P, ctypes.POINTER(RiSandboxConfig), _ERR]),
    "ri_sandbox_free": (None, [_P]),
    "ri_sandbox_id": (ctypes.c_char_p, [_P]),
    "ri_sandbox_status_of": (c_int, [_P]),
    "ri_sandbox_get_metrics": (RiSandboxMetrics, [_P]),
    "ri_sandbox_load": (c_bool, [_P, _BYTES, _SIZE, _ERR]),
    "ri_sandbox_execute_with": (RiSandboxResult, [_P, ctypes.c_char_p, ctypes.c_char_p,
                                                  ctypes.POINTER(RiExecuteOptions)]),
    "ri_sandbox_call": (RiSandboxResult, [_P, ctypes.c_char_p, ctypes.POINTER(RiVal), ctypes.c_uint32]),
    "ri_sandbox_interrupt": (None, [_P]),
    "ri_sandbox_suspend": (c_bool, [_P, _ERR]),
    "ri_sandbox_destroy": (None, [_P]),
    "ri_sandbox_snapshot_with": (c_bool, [_P, ctypes.POINTER(RiSnapshotOptions), ctypes.POINTER(c_u8p),
                                          ctypes.POINTER(_SIZE), _ERR]),
    "ri_sandbox_restore": (c_bool, [_P, _BYTES, _SIZE, _ERR]),
    "ri_snapshot_version": (c_int, [_BYTES, _SIZE, _ERR]),
    "ri_sandbox_check_determinism": (c_bool, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(c_bool),
                                              _ERR]),
    "ri_sandbox_checkpoint": (_P, [_P, ctypes.POINTER(RiCheckpointOptions), _ERR]),
    "ri_checkpoint_free": (None, [_P]),
    "ri_checkpoint_get_info": (RiCheckpointInfo, [_P]),
    "ri_sandbox_rollback": (c_bool, [_P, _P, _ERR]),
    "ri_sandbox_fork": (_P, [_P, _P, _P, _ERR]),
    "ri_sandbox_set_pause_on": (c_bool, [_P, ctypes.c_uint32, _ERR]),
    "ri_sandbox_pause_on": (ctypes.c_uint32, [_P]),
    "ri_sandbox_has_pending_call": (c_bool, [_P]),
    "ri_sandbox_pending_action": (ctypes.c_char_p, [_P]),
    "ri_sandbox_resume": (RiSandboxResult, [_P, ctypes.c_uint64]),
    "ri_sandbox_resume_carry": (RiSandboxResult, [_P]),
    "ri_sandbox_abandon": (c_bool, [_P, _ERR]),
    "ri_sandbox_memory_read": (c_bool, [_P, ctypes.c_uint64, ctypes.c_void_p, _SIZE, _ERR]),
    "ri_sandbox_memory_write": (c_bool, [_P, ctypes.c_uint64, ctypes.c_void_p, _SIZE, _ERR]),
    "ri_sandbox_memory_size": (ctypes.c_uint64, [_P]),
    "ri_memory_pressure": (c_int, [ctypes.POINTER(_P), _SIZE, ctypes.c_int64]),
    "ri_pressure_level_name": (ctypes.c_char_p, [c_int]),
    "ri_advise": (RiPressureAdvice, [c_int, ctypes.POINTER(_P), _SIZE, ctypes.c_char_p]),
    "ri_pressure_advice_free": (None, [ctypes.POINTER(RiPressureAdvice)]),
    "ri_pressure_action_name": (ctypes.c_char_p, [c_int]),
    "ri_host_fail": (c_int, None),
    "ri_host_yield": (c_int, [_P]),
    "ri_host_call_memory": (_P, [_P]),
    "ri_memory_data": (_P, [_P]),
    "ri_memory_size": (ctypes.c_uint64, [_P]),
    "ri_sandbox_file_put": (c_bool, [_P, ctypes.c_char_p, _BYTES, _SIZE, ctypes.c_uint32, _ERR]),
    "ri_sandbox_file_get": (c_bool, [_P, ctypes.c_char_p, ctypes.POINTER(c_u8p), ctypes.POINTER(_SIZE), _ERR]),
    "ri_sandbox_file_stat": (c_bool, [_P, ctypes.c_char_p, ctypes.POINTER(RiFileStat), _ERR]),
    "ri_sandbox_file_list": (c_bool, [_P, ctypes.c_char_p, ctypes.POINTER(ctypes.POINTER(RiFileEntry)),
                                      ctypes.POINTER(_SIZE), _ERR]),
    "ri_file_list_free": (None, [ctypes.POINTER(RiFileEntry), _SIZE]),
    "ri_sandbox_file_mkdir": (c_bool, [_P, ctypes.c_char_p, ctypes.c_uint32, _ERR]),
    "ri_sandbox_file_remove": (c_bool, [_P, ctypes.c_char_p, c_bool, _ERR]),
    "ri_sandbox_file_rename": (c_bool, [_P, ctypes.c_char_p, ctypes.c_char_p, _ERR]),
    "ri_snapshot_diff_files": (c_bool, [_BYTES, _SIZE, _BYTES, _SIZE, ctypes.POINTER(RiFileDiff), _ERR]),
    "ri_sandbox_diff_files": (c_bool, [_P, _BYTES, _SIZE, ctypes.POINTER(RiFileDiff), _ERR]),
    "ri_file_diff_json": (_P, [ctypes.POINTER(RiFileDiff)]),
    "ri_file_diff_free": (None, [ctypes.POINTER(RiFileDiff)]),
    "ri_snapshot_diff": (c_bool, [_BYTES, _SIZE, _BYTES, _SIZE, ctypes.POINTER(RiSnapDiffOptions),
                                  ctypes.POINTER(RiSnapDiff), _ERR]),
    "ri_sandbox_diff": (c_bool, [_P, _BYTES, _SIZE, ctypes.POINTER(RiSnapDiffOptions), ctypes.POINTER(RiSnapDiff),
                                 _ERR]),
    "ri_snap_diff_json": (_P, [ctypes.POINTER(RiSnapDiff)]),
    "ri_snap_diff_free": (None, [ctypes.POINTER(RiSnapDiff)]),
    "ri_sandbox_snapshot_delta": (c_bool, [_P, _BYTES, _SIZE, ctypes.POINTER(RiSnapshotOptions), ctypes.POINTER(c_u8p),
                                           ctypes.POINTER(_SIZE), _ERR]),
    "ri_sandbox_restore_delta": (c_bool, [_P, _BYTES, _SIZE, _BYTES, _SIZE, _ERR]),
    "ri_snap_delta_apply": (c_bool, [_BYTES, _SIZE, _BYTES, _SIZE, ctypes.POINTER(c_u8p), ctypes.POINTER(_SIZE),
                                     ctypes.POINTER(RiSnapError)]),
    "ri_snap_is_delta": (c_bool, [_BYTES, _SIZE, _P]),
}

_lock = threading.Lock()
_lib = None


def _candidates():
    """The names to try, in order, when RI_LIBRARY is not set."""
    names = []
    found = ctypes.util.find_library("ri")
    if found:
        names.append(found)
    for name in ("libri.so.0", "libri.so", "libri.0.dylib", "libri.dylib"):
        if name not in names:
            names.append(name)
    return names


def _open():
    path = os.environ.get(ENV_VAR)
    if path:
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            raise LibraryNotFoundError(
                f"cannot load the ri library from {ENV_VAR}={path}: {exc}. "
                f"Set {ENV_VAR} to the path of libri.so.0 (e.g. build/libri.so.0 or "
                f"/usr/local/lib/libri.so.0)") from None
    tried = []
    for name in _candidates():
        try:
            return ctypes.CDLL(name)
        except OSError as exc:
            tried.append(f"{name} ({exc})")
    raise LibraryNotFoundError(
        "cannot find the ri library (libri.so.0). Either set the environment variable "
        f"{ENV_VAR} to its path (e.g. {ENV_VAR}=/usr/local/lib/libri.so.0), or install it where "
        "the dynamic linker finds it (cmake --install, then ldconfig; or LD_LIBRARY_PATH), "
        "so that ctypes.util.find_library('ri') finds it. Tried: " + "; ".join(tried))


def _declare(lib):
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise LibraryNotFoundError(
                f"the library {lib._name} has no function {name}: it is not libri, or older than "
                f"{ABI_MAJOR}.{MIN_MINOR} (set {ENV_VAR} to a newer libri.so.0)") from None
        fn.restype = restype
        if argtypes is not None:
            fn.argtypes = argtypes


def lib():
    """The loaded library (loaded, checked and declared on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            handle = _open()
            _declare(handle)
            number = handle.ri_version_number()
            major, minor = number // 10000, number // 100 % 100
            if major != ABI_MAJOR or minor < MIN_MINOR:
                raise LibraryNotFoundError(
                    f"the ri library {handle._name} is version {handle.ri_version().decode()}, but "
                    f"this binding needs {ABI_MAJOR}.{MIN_MINOR} or a later {ABI_MAJOR}.x "
                    f"(set {ENV_VAR} to another libri.so.0)")
            _lib = handle
    return _lib


def text(raw):
    """A C string (bytes) as str; NUL-terminated arrays come as bytes already cut."""
    return raw.decode("utf-8", "replace") if raw else ""
