"""Host functions: Python callables a module imports (as env.<name>, or <module>.<name>).

The C library calls a host function through a ctypes trampoline (CFUNCTYPE), which holds the
GIL while Python runs. No Python exception may cross the C frames of the engine, so the
trampoline catches every exception (BaseException included), fails the host call with
ri_host_fail and the exception's message (the execution then ends as HOST_FUNCTION_ERROR),
and parks the exception in a thread-local slot; the Sandbox method that ran the execution
takes it from there once the C call has returned: an Exception becomes the HostFunctionError's
__cause__, anything else (KeyboardInterrupt, SystemExit) is raised again as it was.
"""

import ctypes
import threading

from . import _lib, values

_parked = threading.local()


def take_parked():
    """The exception a host function raised during the last C call of this thread (or None),
    and clears it."""
    exc = getattr(_parked, "exc", None)
    _parked.exc = None
    return exc


class Memory:
    """The calling instance's memory 0, valid only while the host function runs."""

    def __init__(self, mem):
        self._mem = mem

    def _base(self, offset, length):
        if self._mem is None:
            raise RuntimeError("the memory is no longer valid: the host function has returned")
        size = _lib.lib().ri_memory_size(self._mem)
        if offset < 0 or length < 0 or offset + length > size:
            raise IndexError(f"range [{offset}, {offset + length}) is outside the memory of {size} bytes")
        return (_lib.lib().ri_memory_data(self._mem) or 0) + offset

    @property
    def size(self):
        """The memory's size in bytes."""
        return 0 if self._mem is None else _lib.lib().ri_memory_size(self._mem)

    def read(self, offset, length):
        """length bytes at offset, as bytes."""
        base = self._base(offset, length)
        return ctypes.string_at(base, length) if length else b""

    def write(self, offset, data):
        """Writes the bytes data at offset."""
        data = bytes(data)
        base = self._base(offset, len(data))
        if data:
            ctypes.memmove(base, data, len(data))


class Caller:
    """What a host function declared with ``with_caller=True`` receives first: ``memory`` (the
    caller's memory, or None without one) and ``pause()``. Valid only during the call."""

    def __init__(self, call):
        self._call = call
        mem = _lib.lib().ri_host_call_memory(call)
        self.memory = Memory(mem) if mem else None
        self.paused = False

    def pause(self):
        """Pause the execution right after this host function returns its results (the
        sandbox needs "yield" in pause_on; otherwise the host call fails)."""
        self.paused = True

    def _end(self):
        if self.memory is not None:
            self.memory._mem = None


class HostFunction:
    """A Python callable the module imports with the WebAssembly signature params -> results
    (lists of "i32", "i64", "f32", "f64").

    The callable gets one Python number per parameter (int for i32/i64, float for f32/f64;
    after a Caller when ``with_caller`` is true) and returns None for no result, a number for
    one, a sequence of numbers for several. An exception it raises fails the execution with
    HOST_FUNCTION_ERROR and the exception's message. ``module`` is the import module ("env"
    by default; another, not a WASI one, is admitted for this name only).
    """

    def __init__(self, name, fn, params=(), results=(), *, module="env", with_caller=False):
        if not isinstance(name, str) or not name:
            raise ValueError("a host function needs a non-empty name")
        if not callable(fn):
            raise TypeError(f"host function {name!r}: {fn!r} is not callable")
        self.name = name
        self.fn = fn
        self.params = tuple(params)
        self.results = tuple(results)
        for t in self.params + self.results:
            values.type_code(t)
        self.module = module
        self.with_caller = with_caller

    def __repr__(self):
        sig = f"({', '.join(self.params)}) -> ({', '.join(self.results)})"
        return f"HostFunction({self.module}.{self.name} {sig})"

    def trampoline(self):
        """The C callback for this function (keep it referenced while any sandbox uses it)."""
        return _lib.HOST_FN(self._invoke)

    def _invoke(self, call, _user, args, results):
        try:
            return self._run(call, args, results)
        except BaseException as exc:  # noqa: B902 - nothing may propagate into C
            _parked.exc = exc
            try:
                message = str(exc) or type(exc).__name__
                return _lib.lib().ri_host_fail(ctypes.c_void_p(call), b"%s",
                                               message.encode("utf-8", "replace"))
            except BaseException:  # noqa: B902
                return 1  # still a failure: the engine reports the host call as failed

    def _run(self, call, args, results):
        pyargs = [values.load(args[i]) for i in range(len(self.params))]
        caller = Caller(call) if self.with_caller else None
        try:
            out = self.fn(caller, *pyargs) if caller else self.fn(*pyargs)
        finally:
            if caller:
                caller._end()
        n = len(self.results)
        if n == 0:
            if out is not None:
                raise TypeError(f"host function '{self.name}' has no results but returned {out!r}")
            outs = ()
        elif n == 1:
            outs = (out,)
        else:
            try:
                outs = tuple(out)
            except TypeError:
                raise TypeError(f"host function '{self.name}' has {n} results but returned {out!r}") from None
            if len(outs) != n:
                raise TypeError(f"host function '{self.name}' has {n} results but returned {len(outs)}")
        for i, (t, v) in enumerate(zip(self.results, outs)):
            try:
                values.store(results[i], t, v)
            except (TypeError, OverflowError) as exc:
                raise TypeError(f"host function '{self.name}' result {i}: {exc}") from None
        if caller and caller.paused:
            return _lib.lib().ri_host_yield(call)
        return 0


def host_function(params=(), results=(), *, name=None, module="env", with_caller=False):
    """Decorator: ``@ri.host_function(["i32", "i32"], ["i32"])`` over ``def add(a, b)`` makes
    a HostFunction named after the function (or ``name``)."""
    def wrap(fn):
        return HostFunction(name or fn.__name__, fn, params, results, module=module, with_caller=with_caller)
    return wrap
