"""Memory pressure: pure functions of the sandboxes' live memory (the C ri_memory_pressure and
ri_advise)."""

import ctypes
from typing import NamedTuple, Tuple

from . import _lib

_LEVELS = ("NORMAL", "WARNING", "PRESSURE", "CRITICAL", "OOM")


class Advice(NamedTuple):
    """action: "none", "log", "suspend" or "emergency_save"; message (for "log");
    instance_ids: the sandboxes to act on (for "suspend" and "emergency_save")."""
    action: str
    message: str
    instance_ids: Tuple[str, ...]


def _handles(sandboxes):
    sandboxes = list(sandboxes)
    arr = (ctypes.c_void_p * max(1, len(sandboxes)))(*[sb._handle() for sb in sandboxes])
    return arr, len(sandboxes)


def memory_pressure(sandboxes, available_bytes):
    """"NORMAL", "WARNING" (>= 70 %), "PRESSURE" (>= 85 %), "CRITICAL" (>= 95 %) or "OOM" (>= 100 %,
    or nothing available): the sandboxes' memory against available_bytes."""
    arr, n = _handles(sandboxes)
    lib = _lib.lib()
    return _lib.text(lib.ri_pressure_level_name(lib.ri_memory_pressure(arr, n, int(available_bytes))))


def advise(level, sandboxes, foreground=None):
    """What to do at a pressure level (a name memory_pressure returns); foreground: the id of a
    sandbox to leave alone."""
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}, got {level!r}")
    arr, n = _handles(sandboxes)
    lib = _lib.lib()
    a = lib.ri_advise(_LEVELS.index(level), arr, n, foreground.encode() if foreground else None)
    try:
        ids = tuple(_lib.text(a.instance_ids[i]) for i in range(a.ninstance_ids))
        return Advice(_lib.text(lib.ri_pressure_action_name(a.action)), _lib.text(a.message), ids)
    finally:
        lib.ri_pressure_advice_free(ctypes.byref(a))
