"""The exceptions: one class per error code of the C library (ri_sandbox_errcode).

Every one is an RiError whose ``code`` is the C code's name ("GAS_EXHAUSTED", ...) and whose
attributes are the fields of the C ri_sandbox_error; the ones that do not apply to a code are
0 or "".
"""


class LibraryNotFoundError(OSError):
    """The shared library libri.so.0 could not be found or loaded (or is too old)."""


class RiError(Exception):
    """An error of the sandbox library.

    Attributes: ``code`` (the C error code's name), ``message``, ``gas_used``, ``gas_limit``,
    ``memory_used``, ``memory_limit``, ``elapsed_ms``, ``limit_ms``, ``trap_kind``,
    ``function_name``, ``instance_id``, and ``result``: the :class:`ri.Result` of the failed
    execution (its gas and time), or None when the error did not come from an execution.
    """

    code = "UNKNOWN"

    def __init__(self, message, *, code=None, gas_used=0, gas_limit=0, memory_used=0, memory_limit=0,
                 elapsed_ms=0, limit_ms=0, trap_kind="", function_name="", instance_id="", result=None):
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.gas_used = gas_used
        self.gas_limit = gas_limit
        self.memory_used = memory_used
        self.memory_limit = memory_limit
        self.elapsed_ms = elapsed_ms
        self.limit_ms = limit_ms
        self.trap_kind = trap_kind
        self.function_name = function_name
        self.instance_id = instance_id
        self.result = result

    def __str__(self):
        return f"{self.code}: {self.message}"


class GasExhausted(RiError):
    """The execution ran out of gas (``gas_used``, ``gas_limit``)."""
    code = "GAS_EXHAUSTED"


class MemoryExceeded(RiError):
    """After the call, the memory is above the limit (``memory_used``, ``memory_limit``)."""
    code = "MEMORY_EXCEEDED"


class Timeout(RiError):
    """The wall-clock limit ran out (``elapsed_ms``, ``limit_ms``)."""
    code = "TIMEOUT"


class Trap(RiError):
    """A WebAssembly trap or a refused execution; ``kind`` says which ("unreachable",
    "integer_divide_by_zero", "missing_export", "invalid_state", "runtime_error", ...)."""
    code = "WASM_TRAP"

    @property
    def kind(self):
        return self.trap_kind


class Interrupted(Trap):
    """A Trap of kind "interrupted": Sandbox.interrupt() stopped the execution."""


class InvalidModule(RiError):
    """The module could not be loaded (the reason in ``message``)."""
    code = "INVALID_MODULE"


class HostFunctionError(RiError):
    """A host function failed (``function_name``, ``message``). When it was a Python host
    function that raised, the exception it raised is this one's ``__cause__``."""
    code = "HOST_FUNCTION_ERROR"


class InstanceDestroyed(RiError):
    """The sandbox is destroyed or closed (``instance_id``)."""
    code = "INSTANCE_DESTROYED"


class SnapshotError(RiError):
    """A snapshot, restore, checkpoint or rollback was refused (the reason in ``message``)."""
    code = "SNAPSHOT_ERROR"


class InvalidConfig(RiError):
    """A configuration the sandbox cannot honour."""
    code = "INVALID_CONFIG"


class Suspended(RiError):
    """Not a failure: the execution paused (see Sandbox.pause_on) and is pending; continue it
    with Sandbox.resume() or drop it with Sandbox.abandon()."""
    code = "SUSPENDED"


class Exited(RiError):
    """A WASI program ended with a non-zero exit code (``exit_code`` of the result)."""
    code = "EXIT"


class OutOfBounds(RiError, IndexError):
    """A read or write of the sandbox's memory (Sandbox.read_memory/write_memory) outside it
    (also an IndexError)."""
    code = "OUT_OF_BOUNDS"


class FileError(RiError):
    """The file API (:attr:`ri.Sandbox.files`) refused; ``kind`` says why ("not_found",
    "not_a_directory", "is_a_directory", "exists", "not_empty", "quota_exceeded", "bad_path",
    "symlink_loop", "no_workspace", "busy", "invalid", "out_of_memory"). The kinds with a
    Python counterpart are also that built-in exception (FileNotFoundError, ...)."""
    code = "FILE_ERROR"

    @property
    def kind(self):
        return self.trap_kind


class FileNotFound(FileError, FileNotFoundError):
    """No such file or directory (also a FileNotFoundError)."""


class NotADirectory(FileError, NotADirectoryError):
    """A path component is not a directory (also a NotADirectoryError)."""


class IsADirectory(FileError, IsADirectoryError):
    """A file operation on a directory (also an IsADirectoryError)."""


class FileExists(FileError, FileExistsError):
    """The path exists (also a FileExistsError)."""


class DirectoryNotEmpty(FileError, OSError):
    """remove() of a non-empty directory without recursive=True (an OSError, errno ENOTEMPTY)."""


class QuotaExceeded(FileError, OSError):
    """The workspace's quota of bytes or files is used up (an OSError, errno ENOSPC)."""


class BadPath(FileError, ValueError):
    """Not an absolute workspace path, a "." or ".." component, a NUL, or too long (also a
    ValueError)."""


class NoWorkspace(FileError):
    """The sandbox has no workspace: create it with ``wasi=True``."""


_FILE_KINDS = {
    "not_found": (FileNotFound, "ENOENT"),
    "not_a_directory": (NotADirectory, "ENOTDIR"),
    "is_a_directory": (IsADirectory, "EISDIR"),
    "exists": (FileExists, "EEXIST"),
    "not_empty": (DirectoryNotEmpty, "ENOTEMPTY"),
    "quota_exceeded": (QuotaExceeded, "ENOSPC"),
    "bad_path": (BadPath, None),
    "no_workspace": (NoWorkspace, None),
}

# ri_sandbox_errcode values, in the header's order.
_BY_NUMBER = {
    1: GasExhausted,
    2: MemoryExceeded,
    3: Timeout,
    4: Trap,
    5: InvalidModule,
    6: HostFunctionError,
    7: InstanceDestroyed,
    8: SnapshotError,
    9: InvalidConfig,
    10: Suspended,
    11: Exited,
    12: FileError,
    13: OutOfBounds,
}


def from_c(err, result=None):
    """The exception for a C ri_sandbox_error."""
    def s(raw):
        return raw.decode("utf-8", "replace")

    cls = _BY_NUMBER.get(err.code, RiError)
    kind = s(err.trap_kind)
    if cls is Trap and kind == "interrupted":
        cls = Interrupted
    errno_name = None
    if cls is FileError and kind in _FILE_KINDS:
        cls, errno_name = _FILE_KINDS[kind]
    code = None if cls is not RiError else f"UNKNOWN({err.code})"
    exc = cls(s(err.message), code=code, gas_used=err.gas_used, gas_limit=err.gas_limit,
              memory_used=err.memory_used, memory_limit=err.memory_limit, elapsed_ms=err.elapsed_ms,
              limit_ms=err.limit_ms, trap_kind=kind, function_name=s(err.function_name),
              instance_id=s(err.instance_id), result=result)
    if errno_name:
        import errno as _errno
        exc.errno = getattr(_errno, errno_name)
        exc.strerror = exc.message
    return exc
