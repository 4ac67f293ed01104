"""Sandbox: one deterministic, metered WebAssembly instance (the C ri_sandbox)."""

import contextlib
import ctypes
import dataclasses
import json
import threading
from dataclasses import dataclass
from typing import Optional, Tuple

from . import _lib, errors, files, host, snapdiff, values

_GAS_SCHEDULES = {"host_calls": 0, "instructions": 1}
_PAUSE_FLAGS = {"gas": 1, "interrupt": 2, "yield": 4}
_SNAPSHOT_FORMATS = {"v2": 2, "v1": 1}
_NO_TIME_LIMIT = 2**32 - 1  # RI_SANDBOX_NO_TIME_LIMIT


@dataclass(frozen=True)
class Config:
    """A sandbox's configuration (the C ri_sandbox_config; the defaults are the library's).

    - ``max_memory_bytes``: the memory limit (16 MiB).
    - ``max_gas``: the gas budget of each execution (1,000,000; 0 is a valid budget).
    - ``max_execution_ms``: the wall-clock limit of each execution (50 ms); ``None``: no limit
      (gas alone stops a run, and no watchdog thread is started).
    - ``seed``: the seed of the deterministic random numbers ``env.__get_random`` returns (0).
    - ``event_timestamp``: what ``env.__get_time`` returns, in ms since the epoch (truncated to
      i32). The C library has no default and requires one; for Python users it defaults to 0,
      so a module that reads the time sees 0 unless you set it.
    - ``gas_schedule``: ``"host_calls"`` (each import call costs 1, instructions nothing) or
      ``"instructions"`` (every instruction costs 1, import calls 1 more; stops loops
      deterministically).
    - ``host_functions``: the :class:`ri.HostFunction` objects the module may import.
    - ``max_call_depth``: frames before ``call_stack_exhausted`` (0: the engine's default).
    - ``wasi``: admit WASI preview1 imports and give the sandbox a workspace file system
      (:attr:`Sandbox.files`); no arguments, no environment, stdio in buffers.
    """
    max_memory_bytes: int = 16 * 1024 * 1024
    max_gas: int = 1_000_000
    max_execution_ms: Optional[int] = 50
    seed: int = 0
    event_timestamp: int = 0
    gas_schedule: str = "host_calls"
    host_functions: Tuple[host.HostFunction, ...] = ()
    max_call_depth: int = 0
    wasi: bool = False

    def __post_init__(self):
        object.__setattr__(self, "host_functions", tuple(self.host_functions))


@dataclass(frozen=True)
class Metrics:
    """A sandbox's memory, and the gas and time of its last (or current) execution."""
    memory_used_bytes: int
    memory_limit_bytes: int
    gas_used: int
    gas_limit: int
    execution_ms: float
    execution_limit_ms: int

    @classmethod
    def _from_c(cls, m):
        return cls(m.memory_used_bytes, m.memory_limit_bytes, m.gas_used, m.gas_limit, m.execution_ms,
                   m.execution_limit_ms)


@dataclass
class Result:
    """One execution: ``ok``, ``value`` (the JSON-decoded value, None for none), ``value_json``
    (the library's JSON text, or None), ``results`` (the typed results of the direct
    convention, the first four), ``gas_used``, ``duration_ms``, ``metrics``, and ``error`` (the
    RiError when not ok)."""
    ok: bool
    value: object
    value_json: Optional[str]
    results: tuple
    gas_used: int
    duration_ms: float
    metrics: Metrics
    error: Optional[errors.RiError] = None


@dataclass(frozen=True)
class CheckpointInfo:
    """memory_pages: memory 0's size; stored_pages: the pages this checkpoint holds itself;
    depth: deltas down to the full image; memfd: copy-on-write images (else heap copies)."""
    memory_pages: int
    stored_pages: int
    depth: int
    memfd: bool


class Checkpoint:
    """An in-memory snapshot of a sandbox's complete state (Sandbox.checkpoint()), for
    Sandbox.rollback and Sandbox.fork. Independent of the sandbox; close() (or the garbage
    collector) frees it."""

    def __init__(self, handle):
        self._h = handle

    def _handle(self):
        if self._h is None:
            raise errors.SnapshotError("the checkpoint is closed")
        return self._h

    @property
    def info(self):
        i = _lib.lib().ri_checkpoint_get_info(self._handle())
        return CheckpointInfo(i.memory_pages, i.stored_pages, i.depth, bool(i.memfd))

    def close(self):
        h, self._h = self._h, None
        if h:
            _lib.lib().ri_checkpoint_free(h)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        with contextlib.suppress(Exception):
            self.close()


# ---- the factory -------------------------------------------------------------------------------
# One C factory (ids "sandbox-0", "sandbox-1", ... and the watchdog thread) for the process's
# sandboxes, made on first use and kept for the process's life: sandboxes may outlive it in C,
# but there is no point in a second watchdog.
_factory_lock = threading.Lock()
_factory = None


def _default_factory():
    global _factory
    with _factory_lock:
        if _factory is None:
            f = _lib.lib().ri_sandboxes_new()
            if not f:
                raise MemoryError("ri_sandboxes_new failed")
            _factory = f
    return _factory


# ---- conversions ---------------------------------------------------------------------------


def _bad_config(message):
    return errors.InvalidConfig(message)


def _uint(v, name, bits, error=_bad_config):
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < (1 << bits):
        raise error(f"{name} must be an int in [0, 2**{bits}), got {v!r}")
    return v


def _config_to_c(config):
    """The C config, and what must stay alive: the C arrays until create has copied them, the
    trampolines as long as any sandbox (or fork) created with them exists."""
    c = _lib.RiSandboxConfig()
    c.max_memory_bytes = _uint(config.max_memory_bytes, "max_memory_bytes", 64)
    c.max_gas = _uint(config.max_gas, "max_gas", 64)
    if config.max_execution_ms is None:
        c.max_execution_ms = _NO_TIME_LIMIT
    elif _uint(config.max_execution_ms, "max_execution_ms", 32) == _NO_TIME_LIMIT:
        raise _bad_config(f"max_execution_ms {_NO_TIME_LIMIT} means no limit: write None")
    else:
        c.max_execution_ms = config.max_execution_ms
    c.deterministic_seed = _uint(config.seed, "seed", 32)
    c.max_call_depth = _uint(config.max_call_depth, "max_call_depth", 32)
    ts = config.event_timestamp
    if isinstance(ts, bool) or not isinstance(ts, int) or not -(1 << 63) <= ts < (1 << 63):
        raise _bad_config(f"event_timestamp must be an int in int64's range, got {ts!r}")
    c.has_event_timestamp = True
    c.event_timestamp = ts
    if config.gas_schedule not in _GAS_SCHEDULES:
        raise _bad_config(f"gas_schedule must be 'host_calls' or 'instructions', got {config.gas_schedule!r}")
    c.gas_schedule = _GAS_SCHEDULES[config.gas_schedule]
    if not isinstance(config.wasi, bool):
        raise _bad_config(f"wasi must be True or False, got {config.wasi!r}")
    c.enable_wasi = config.wasi
    hfs = config.host_functions
    trampolines = []
    arrays = []
    if hfs:
        table = (_lib.RiHostFunction * len(hfs))()
        modules = (ctypes.c_char_p * len(hfs))()
        for i, hf in enumerate(hfs):
            if not isinstance(hf, host.HostFunction):
                raise _bad_config(f"host_functions[{i}] is {hf!r}, not an ri.HostFunction")
            if "\0" in hf.name or "\0" in hf.module:
                raise _bad_config(f"host function name {hf.name!r} (module {hf.module!r}) contains a NUL")
            params = (ctypes.c_int * max(1, len(hf.params)))(*[values.type_code(t) for t in hf.params])
            results = (ctypes.c_int * max(1, len(hf.results)))(*[values.type_code(t) for t in hf.results])
            tramp = hf.trampoline()
            arrays += [params, results]
            trampolines.append(tramp)
            e = table[i]
            e.name = hf.name.encode()
            e.nparams, e.params = len(hf.params), params
            e.nresults, e.results = len(hf.results), results
            e.fn = tramp
            modules[i] = hf.module.encode()
        c.host_functions = table
        c.nhost_functions = len(hfs)
        c.host_modules = modules
        arrays += [table, modules]
    return c, arrays, tuple(trampolines)


def _payload(payload):
    if payload is None:
        return None
    try:
        return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the payload is not JSON-serialisable: {exc}") from None


def _raise_for(error, parked):
    """Raises error (None: none), or what a host function raised (parked) during the call:
    KeyboardInterrupt or SystemExit as they were, an Exception as the HostFunctionError's
    cause."""
    if parked is not None and not isinstance(parked, Exception):
        raise parked
    if error is None:
        return
    if parked is not None and isinstance(error, errors.HostFunctionError):
        raise error from parked
    raise error


class Sandbox:
    """A WebAssembly sandbox: ``Sandbox(max_gas=10_000, ...)`` or ``Sandbox(Config(...))``
    (keywords then replace the Config's fields). See :class:`ri.Config` for the options.

    Use it from one thread at a time: another thread's call waits for a running execution to
    end; ``interrupt()`` is the exception (any thread, at once). A context
    manager: ``with Sandbox() as sb:`` closes it at the end.

    ``execute`` and ``call`` return the value and keep the whole :class:`ri.Result` (gas,
    time, metrics) in ``last_result``; a failure raises an :class:`ri.RiError` subclass whose
    ``result`` is that Result.
    """

    def __init__(self, config=None, /, **options):
        if config is None:
            config = Config(**options)
        elif not isinstance(config, Config):
            raise TypeError(f"Sandbox() takes a ri.Config or keywords, not {type(config).__name__}")
        elif options:
            config = dataclasses.replace(config, **options)
        lib = _lib.lib()
        c, _arrays, trampolines = _config_to_c(config)
        err = _lib.RiSandboxError()
        h = lib.ri_sandbox_create(_default_factory(), ctypes.byref(c), ctypes.byref(err))
        if not h:
            raise errors.from_c(err)
        self._adopt(h, config, trampolines)

    @classmethod
    def _wrap(cls, h, config, trampolines):
        self = cls.__new__(cls)
        self._adopt(h, config, trampolines)
        return self

    def _adopt(self, h, config, trampolines):
        self._h = h
        self._config = config
        self._trampolines = trampolines  # the C sandbox (and its forks) call these
        self._lock = threading.RLock()   # RLock: a host function may use its sandbox
        self._handle_lock = threading.Lock()  # interrupt() against close()
        self._depth = 0
        self._free_pending = False
        self._last_checkpoint = None
        self.last_result = None
        self._id = _lib.text(_lib.lib().ri_sandbox_id(h))

    # ---- handles and runs ------------------------------------------------------------------

    def _handle(self):
        if self._h is None:
            raise errors.InstanceDestroyed(f"Sandbox {self._id} is closed", instance_id=self._id)
        return self._h

    @contextlib.contextmanager
    def _running(self):
        """Around a C call that may run WebAssembly (and so host functions)."""
        with self._lock:
            h = self._handle()
            self._depth += 1
            host.take_parked()
            try:
                yield h
            finally:
                host.take_parked()  # taken already unless the body failed before it could
                self._depth -= 1
                if self._depth == 0 and self._free_pending:
                    self._free()

    @staticmethod
    def _check(ok, err):
        _raise_for(None if ok else errors.from_c(err), host.take_parked())

    def _finish(self, r):
        """The Result of a C result (freed here), raising its error."""
        lib = _lib.lib()
        try:
            raw = ctypes.string_at(r.value_json).decode("utf-8") if r.value_json else None
            result = Result(
                ok=bool(r.ok),
                value=json.loads(raw) if raw is not None else None,
                value_json=raw,
                results=tuple(values.load(r.results[i]) for i in range(min(r.nresults, 4))),
                gas_used=r.gas_used,
                duration_ms=r.duration_ms,
                metrics=Metrics._from_c(r.metrics),
            )
            if not r.ok:
                result.error = errors.from_c(r.error, result)
        finally:
            lib.ri_sandbox_result_free(ctypes.byref(r))
        self.last_result = result
        _raise_for(result.error, host.take_parked())
        return result

    def _free(self):
        with self._handle_lock:
            h, self._h = self._h, None
        self._last_checkpoint = None
        if h:
            _lib.lib().ri_sandbox_free(h)

    # ---- properties ------------------------------------------------------------------------

    @property
    def files(self):
        """The workspace's files (:class:`ri.Files`) of a sandbox created with ``wasi=True``."""
        return files.Files(self)

    def diff_files(self, snapshot):
        """What changed in the workspace's files since ``snapshot`` (bytes of an image): the
        dict :func:`ri.diff_files` gives."""
        lib = _lib.lib()
        snapshot = bytes(snapshot)
        d = _lib.RiFileDiff()
        err = _lib.RiSandboxError()
        with self._lock:
            ok = lib.ri_sandbox_diff_files(self._handle(), snapshot, len(snapshot), ctypes.byref(d), ctypes.byref(err))
        if not ok:
            raise errors.from_c(err)
        return files._diff_result(lib, d)

    @property
    def id(self):
        """The sandbox's id ("sandbox-0", ...)."""
        return self._id

    @property
    def config(self):
        return self._config

    @property
    def status(self):
        """"created", "loaded", "running", "suspended", "destroyed", or "closed" after close()."""
        with self._lock:
            if self._h is None:
                return "closed"
            lib = _lib.lib()
            return _lib.text(lib.ri_sandbox_status_name(lib.ri_sandbox_status_of(self._h)))

    @property
    def metrics(self):
        """Live :class:`ri.Metrics`: memory, and the gas and time of the last execution."""
        with self._lock:  # another thread waits for a running execution (a host function may ask)
            return Metrics._from_c(_lib.lib().ri_sandbox_get_metrics(self._handle()))

    # ---- load and execute ------------------------------------------------------------------

    def load(self, wasm):
        """Loads (or re-loads) a module from its binary (bytes-like). Raises InvalidModule."""
        data = bytes(wasm)
        err = _lib.RiSandboxError()
        with self._running() as h:
            ok = _lib.lib().ri_sandbox_load(h, data, len(data), ctypes.byref(err))
            self._check(ok, err)

    def execute(self, name, payload=None, *, transactional=False):
        """Runs the export ``name`` and returns its value.

        payload: None, a number or a list of numbers (the arguments: the direct convention,
        typed by the export's signature), or any other JSON-serialisable value (the JSON
        convention: the module exports ``__alloc`` and returns where its JSON result lies).
        The value is the result decoded from JSON: a number, a list for several results,
        None for none, or the JSON document. ``transactional``: a failed execution leaves the
        sandbox exactly as before it. The full Result is in ``last_result``.
        """
        text = _payload(payload)
        opts = _lib.RiExecuteOptions(transactional=bool(transactional))
        with self._running() as h:
            r = _lib.lib().ri_sandbox_execute_with(h, name.encode(), text, ctypes.byref(opts))
            return self._finish(r).value

    def call(self, name, *args):
        """Calls the export ``name`` with typed arguments and returns its typed results: None,
        one number, or a tuple. A Python int is an i32 and a float an f64; wrap the others:
        ``ri.i64(x)``, ``ri.f32(x)`` (a wrong type raises Trap "runtime_error")."""
        typed = [values.infer(a) for a in args]
        arr = (_lib.RiVal * max(1, len(typed)))()
        for i, v in enumerate(typed):
            values.store(arr[i], v.type, v.value)
        with self._running() as h:
            r = _lib.lib().ri_sandbox_call(h, name.encode(), arr, len(typed))
            return self._typed(self._finish(r))

    @staticmethod
    def _typed(result):
        if isinstance(result.value, list) and len(result.value) > len(result.results):
            return tuple(result.value)  # more than the four typed results the C result holds
        if not result.results:
            return None
        return result.results[0] if len(result.results) == 1 else result.results

    def interrupt(self):
        """Stops the running execution (from any thread): it raises Interrupted (a Trap of
        kind "interrupted"), or Timeout if its time was up anyway. A no-op when idle."""
        with self._handle_lock:
            if self._h is not None:
                _lib.lib().ri_sandbox_interrupt(self._h)

    def check_determinism(self, name, payload=None):
        """Runs ``name`` twice from the same state and says whether result, gas and state agree
        (the sandbox is left as it was)."""
        text = _payload(payload)
        det = ctypes.c_bool(False)
        err = _lib.RiSandboxError()
        with self._running() as h:
            ok = _lib.lib().ri_sandbox_check_determinism(h, name.encode(), text, ctypes.byref(det),
                                                         ctypes.byref(err))
            self._check(ok, err)
        return bool(det.value)

    # ---- lifecycle -----------------------------------------------------------------------------

    def suspend(self):
        """loaded -> suspended (restore or load brings it back)."""
        err = _lib.RiSandboxError()
        with self._lock:
            self._check(_lib.lib().ri_sandbox_suspend(self._handle(), ctypes.byref(err)), err)

    def destroy(self):
        """Releases the instance; the object stays (status "destroyed"). Idempotent. From a host
        function, the running execution stops with InstanceDestroyed."""
        with self._lock:
            if self._h is not None:
                _lib.lib().ri_sandbox_destroy(self._h)

    def close(self):
        """Destroys the sandbox and frees it; later calls raise InstanceDestroyed. Idempotent.
        From another thread it waits for a running execution to end (interrupt it first)."""
        with self._lock:
            if self._h is None:
                return
            if self._depth:  # from a host function: free once the execution has unwound
                _lib.lib().ri_sandbox_destroy(self._h)
                self._free_pending = True
            else:
                self._free()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None) and not self._depth:
            with contextlib.suppress(Exception):
                self._free()

    def __repr__(self):
        if not self._lock.acquire(blocking=False):  # never wait in a repr
            return f"<ri.Sandbox {self._id} busy>"
        try:
            return f"<ri.Sandbox {self._id} {self.status}>"
        finally:
            self._lock.release()

    # ---- snapshots, checkpoints, fork ------------------------------------------------------------

    def snapshot(self, *, format="v2", include_module=False, compressed=True):
        """The sandbox's state as snapshot bytes: WSNP v2 (everything: memories, globals, tables,
        PRNG, gas, a paused call; ``include_module`` embeds the module so that the bytes alone
        restore anywhere; ``compressed=False`` stores pages without zstd), or ``format="v1"``
        (the byte-exact WSNP v1 of memory 0). Raises SnapshotError."""
        if format not in _SNAPSHOT_FORMATS:
            raise ValueError(f"format must be 'v2' or 'v1', got {format!r}")
        opts = _lib.RiSnapshotOptions(_SNAPSHOT_FORMATS[format], bool(include_module), not compressed)
        out = _lib.c_u8p()
        n = ctypes.c_size_t(0)
        err = _lib.RiSandboxError()
        lib = _lib.lib()
        with self._lock:
            ok = lib.ri_sandbox_snapshot_with(self._handle(), ctypes.byref(opts), ctypes.byref(out),
                                              ctypes.byref(n), ctypes.byref(err))
        try:
            if not ok:
                raise errors.from_c(err)
            return ctypes.string_at(out, n.value)
        finally:
            if out:
                lib.ri_free(out)  # malloc'd by the library: freed by its allocator

    def diff(self, snapshot, *, max_ranges=0):
        """What differs from ``snapshot`` (bytes) to the sandbox as it is now: the dict
        :func:`ri.diff` gives. Changes nothing."""
        lib = _lib.lib()
        data = bytes(snapshot)
        opts = snapdiff._options(max_ranges)
        d = _lib.RiSnapDiff()
        err = _lib.RiSandboxError()
        with self._lock:
            ok = lib.ri_sandbox_diff(self._handle(), data, len(data), ctypes.byref(opts), ctypes.byref(d),
                                     ctypes.byref(err))
        if not ok:
            raise errors.from_c(err)
        return snapdiff._diff_dict(lib, d)

    def snapshot_delta(self, parent, *, compressed=True):
        """The state as a WSNP v2 delta image: only the memory pages that differ from the full
        v2 image ``parent`` (bytes), which it names by SHA-256. restore_delta(parent, delta)
        or :func:`ri.delta_apply` need the parent."""
        data = bytes(parent)
        opts = _lib.RiSnapshotOptions(_SNAPSHOT_FORMATS["v2"], False, not compressed)
        out = _lib.c_u8p()
        n = ctypes.c_size_t(0)
        err = _lib.RiSandboxError()
        lib = _lib.lib()
        with self._lock:
            ok = lib.ri_sandbox_snapshot_delta(self._handle(), data, len(data), ctypes.byref(opts), ctypes.byref(out),
                                               ctypes.byref(n), ctypes.byref(err))
        try:
            if not ok:
                raise errors.from_c(err)
            return ctypes.string_at(out, n.value)
        finally:
            if out:
                lib.ri_free(out)

    def restore_delta(self, parent, delta):
        """Restores a delta image on top of its parent (the full image it names); atomic."""
        p, d = bytes(parent), bytes(delta)
        err = _lib.RiSandboxError()
        with self._running() as h:
            self._check(_lib.lib().ri_sandbox_restore_delta(h, p, len(p), d, len(d), ctypes.byref(err)), err)

    def restore(self, snapshot):
        """Puts the state of snapshot bytes (v1 or v2) back; atomic (a refused restore changes
        nothing). Raises SnapshotError."""
        data = bytes(snapshot)
        err = _lib.RiSandboxError()
        with self._running() as h:
            self._check(_lib.lib().ri_sandbox_restore(h, data, len(data), ctypes.byref(err)), err)

    def checkpoint(self, *, full=False):
        """An in-memory snapshot (:class:`ri.Checkpoint`), copy-on-write: cheap to take, and
        rollback and fork from it cost nothing in proportion to the memory. rollback() without
        an argument goes back to the last one taken."""
        opts = _lib.RiCheckpointOptions(full=bool(full))
        err = _lib.RiSandboxError()
        with self._lock:
            h = _lib.lib().ri_sandbox_checkpoint(self._handle(), ctypes.byref(opts), ctypes.byref(err))
        if not h:
            raise errors.from_c(err)
        cp = Checkpoint(h)
        self._last_checkpoint = cp
        return cp

    def read_memory(self, offset, length):
        """length bytes of the sandbox's memory from offset (bytes); OutOfBounds outside it."""
        buf = ctypes.create_string_buffer(max(length, 1))
        err = _lib.RiSandboxError()
        with self._lock:
            ok = _lib.lib().ri_sandbox_memory_read(self._handle(), offset, buf, length, ctypes.byref(err))
            self._check(ok, err)
        return buf.raw[:length]

    def write_memory(self, offset, data):
        """Writes data (bytes-like) into the sandbox's memory at offset; OutOfBounds outside it.
        Not while a call runs (a paused one is fine)."""
        data = bytes(data)
        err = _lib.RiSandboxError()
        with self._lock:
            ok = _lib.lib().ri_sandbox_memory_write(self._handle(), offset, data, len(data), ctypes.byref(err))
            self._check(ok, err)

    @property
    def memory_size(self):
        """The size of the sandbox's memory in bytes (0 before a load)."""
        with self._lock:
            return int(_lib.lib().ri_sandbox_memory_size(self._handle()))

    def rollback(self, checkpoint=None):
        """Puts the sandbox back into checkpoint's state (default: the last checkpoint() taken)."""
        cp = checkpoint if checkpoint is not None else self._last_checkpoint
        if cp is None:
            raise errors.SnapshotError("rollback() without a checkpoint, and none was taken")
        err = _lib.RiSandboxError()
        with self._lock:
            ok = _lib.lib().ri_sandbox_rollback(self._handle(), cp._handle(), ctypes.byref(err))
            self._check(ok, err)

    def fork(self, checkpoint=None):
        """A new, independent Sandbox (its own id, this one's config) in this sandbox's current
        state, or in checkpoint's. Both go on separately."""
        err = _lib.RiSandboxError()
        with self._lock:
            h = _lib.lib().ri_sandbox_fork(_default_factory(), self._handle(),
                                           checkpoint._handle() if checkpoint is not None else None,
                                           ctypes.byref(err))
        if not h:
            raise errors.from_c(err)
        return Sandbox._wrap(h, self._config, self._trampolines)

    # ---- pausable executions -----------------------------------------------------------------------

    @property
    def pause_on(self):
        """When later executions pause instead of failing: a subset of {"gas", "interrupt",
        "yield"} (gas needs the "instructions" schedule). A paused execution raises Suspended;
        resume() continues it."""
        with self._lock:
            mask = _lib.lib().ri_sandbox_pause_on(self._handle())
        return frozenset(k for k, bit in _PAUSE_FLAGS.items() if mask & bit)

    @pause_on.setter
    def pause_on(self, names):
        names = {names} if isinstance(names, str) else set(names)
        unknown = names - set(_PAUSE_FLAGS)
        if unknown:
            raise ValueError(f"pause_on takes 'gas', 'interrupt' and 'yield', not {sorted(unknown)}")
        mask = sum(_PAUSE_FLAGS[n] for n in names)
        err = _lib.RiSandboxError()
        with self._lock:
            self._check(_lib.lib().ri_sandbox_set_pause_on(self._handle(), mask, ctypes.byref(err)), err)

    @property
    def pending_call(self):
        """The export name of the paused call, or None."""
        lib = _lib.lib()
        with self._lock:
            h = self._handle()
            return _lib.text(lib.ri_sandbox_pending_action(h)) if lib.ri_sandbox_has_pending_call(h) else None

    def resume(self, gas=None, *, carry=False):
        """Continues the paused call and returns its value (or raises Suspended again). gas:
        added to what the last slice left (instructions schedule; None: max_gas); carry=True:
        only what the last slice left."""
        with self._running() as h:
            lib = _lib.lib()
            if carry:
                r = lib.ri_sandbox_resume_carry(h)
            else:
                r = lib.ri_sandbox_resume(h, 0 if gas is None else _uint(gas, "gas", 64, ValueError))
            return self._finish(r).value

    def abandon(self):
        """Drops the paused call (status loaded; memory as the call left it)."""
        err = _lib.RiSandboxError()
        with self._lock:
            self._check(_lib.lib().ri_sandbox_abandon(self._handle(), ctypes.byref(err)), err)

