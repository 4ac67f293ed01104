"""Snapshot diffs and delta images from Python (the C ri_snapshot_diff, ri_snap_diff_json
and ri_snap_delta_apply): the functions the C API has beside sandboxes."""

import ctypes
import json

from . import _lib, errors


def _options(max_ranges):
    if isinstance(max_ranges, bool) or not isinstance(max_ranges, int) or max_ranges < 0:
        raise ValueError(f"max_ranges must be an int >= 0, got {max_ranges!r}")
    return _lib.RiSnapDiffOptions(max_ranges, max_ranges)


def _diff_dict(lib, d):
    raw = lib.ri_snap_diff_json(ctypes.byref(d))
    try:
        if not raw:
            raise MemoryError("out of memory writing the diff")
        return json.loads(ctypes.string_at(raw).decode("utf-8"))
    finally:
        lib.ri_free(raw)
        lib.ri_snap_diff_free(ctypes.byref(d))


def diff(old, new, *, max_ranges=0):
    """What differs from snapshot ``old`` to ``new`` (bytes of v1 or v2 images), as the dict of
    the library's JSON document (docs/SNAPSHOT_FORMAT.md): identical, old, new, changed,
    memories (with their ranges, at most ``max_ranges``; 0: 10,000), globals, tables,
    segments. The files of WASI images: :func:`ri.diff_files`. Raises SnapshotError."""
    lib = _lib.lib()
    old, new = bytes(old), bytes(new)
    opts = _options(max_ranges)
    d = _lib.RiSnapDiff()
    err = _lib.RiSandboxError()
    if not lib.ri_snapshot_diff(old, len(old), new, len(new), ctypes.byref(opts), ctypes.byref(d), ctypes.byref(err)):
        raise errors.from_c(err)
    return _diff_dict(lib, d)


def is_delta(data):
    """Whether ``data`` is a well-formed WSNP v2 delta image (its parent's pages left out)."""
    data = bytes(data)
    return bool(_lib.lib().ri_snap_is_delta(data, len(data), None))


def delta_apply(parent, delta):
    """The full image a delta stands for, given its parent's bytes (byte for byte what a full
    snapshot of that state writes). Raises SnapshotError ("parent mismatch", ...)."""
    lib = _lib.lib()
    parent, delta = bytes(parent), bytes(delta)
    out = _lib.c_u8p()
    n = ctypes.c_size_t()
    err = _lib.RiSnapError()
    ok = lib.ri_snap_delta_apply(parent, len(parent), delta, len(delta), ctypes.byref(out), ctypes.byref(n),
                                 ctypes.byref(err))
    try:
        if not ok:
            raise errors.SnapshotError(err.message.decode("utf-8", "replace"))
        return ctypes.string_at(out, n.value)
    finally:
        if out:
            lib.ri_free(out)
