"""A WASI sandbox's workspace from Python: :attr:`ri.Sandbox.files` (the C ri/files.h)."""

import ctypes
import json
from dataclasses import dataclass

from . import _lib, errors

_PARENTS, _EXCLUSIVE = 1, 2
_TYPES = {0: "unknown", 3: "directory", 4: "file", 7: "symlink"}


@dataclass(frozen=True)
class FileStat:
    """What a workspace path names: ``type`` ("file", "directory", "symlink"), ``size`` (bytes
    of a file or a symlink's target, 0 for a directory), ``ino``, ``nlink``, and the times of
    the sandbox's virtual clock in ns (``mtime_ns``, ``ctime_ns``)."""
    type: str
    size: int
    ino: int
    nlink: int
    mtime_ns: int
    ctime_ns: int


@dataclass(frozen=True)
class FileEntry:
    """One entry of a directory listing: ``name``, ``type``, ``size``."""
    name: str
    type: str
    size: int


def _path(path):
    """A path as the C API takes it: str (UTF-8) or bytes, absolute, without NUL (which C
    would silently cut)."""
    if isinstance(path, str):
        raw = path.encode("utf-8", "surrogateescape")
    elif isinstance(path, (bytes, bytearray)):
        raw = bytes(path)
    else:
        raise TypeError(f"a workspace path is str or bytes, not {type(path).__name__}")
    if b"\0" in raw:
        raise errors.BadPath(f"the path {path!r} contains a NUL byte", trap_kind="bad_path")
    return raw


def _name(raw):
    return raw.decode("utf-8", "surrogateescape")


class Files:
    """The files of a WASI sandbox's workspace (``Sandbox(wasi=True).files``): what its program
    sees as "/". Paths are absolute ("/data/in.txt"); errors are :class:`ri.FileError`
    subclasses that are also the matching built-in exceptions (FileNotFoundError,
    NotADirectoryError, IsADirectoryError, FileExistsError, OSError for ENOTEMPTY and ENOSPC,
    ValueError for a bad path). Usable between calls, and while a call is paused."""

    def __init__(self, sandbox):
        self._sb = sandbox

    def _call(self, fn, *args):
        lib = _lib.lib()
        err = _lib.RiSandboxError()
        with self._sb._lock:
            ok = getattr(lib, fn)(self._sb._handle(), *args, ctypes.byref(err))
        if not ok:
            raise errors.from_c(err)

    def put(self, path, data, *, parents=False, exclusive=False):
        """Writes ``data`` (bytes, or str as UTF-8) as the file at ``path``, replacing a file
        there atomically. ``parents``: create missing directories; ``exclusive``: fail with
        FileExists if the path exists."""
        if isinstance(data, str):
            data = data.encode("utf-8")
        data = bytes(data)
        flags = (_PARENTS if parents else 0) | (_EXCLUSIVE if exclusive else 0)
        self._call("ri_sandbox_file_put", _path(path), data, len(data), flags)

    def get(self, path):
        """The file's bytes (a final symlink followed)."""
        out = _lib.c_u8p()
        n = ctypes.c_size_t()
        self._call("ri_sandbox_file_get", _path(path), ctypes.byref(out), ctypes.byref(n))
        try:
            return ctypes.string_at(out, n.value) if n.value else b""
        finally:
            _lib.lib().ri_free(ctypes.cast(out, ctypes.c_void_p))

    def read_text(self, path, encoding="utf-8"):
        return self.get(path).decode(encoding)

    def stat(self, path):
        """A :class:`FileStat` (a final symlink not followed)."""
        st = _lib.RiFileStat()
        self._call("ri_sandbox_file_stat", _path(path), ctypes.byref(st))
        return FileStat(_TYPES.get(st.type, "unknown"), st.size, st.ino, st.nlink, st.mtime_ns, st.ctime_ns)

    def exists(self, path):
        try:
            self.stat(path)
            return True
        except (errors.FileNotFound, errors.NotADirectory):
            return False

    def list(self, path="/"):
        """The directory's entries (:class:`FileEntry`), sorted by name bytes, without "." and
        ".."."""
        lib = _lib.lib()
        out = ctypes.POINTER(_lib.RiFileEntry)()
        n = ctypes.c_size_t()
        self._call("ri_sandbox_file_list", _path(path), ctypes.byref(out), ctypes.byref(n))
        try:
            return [FileEntry(_name(ctypes.string_at(out[i].name)), _TYPES.get(out[i].type, "unknown"), out[i].size)
                    for i in range(n.value)]
        finally:
            lib.ri_file_list_free(out, n.value)

    def mkdir(self, path, *, parents=False, exist_ok=False):
        """Makes a directory; ``parents`` also the missing ones above it. An existing path is
        FileExists unless ``exist_ok`` (and it is a directory)."""
        if exist_ok or parents:
            flags = _PARENTS | (0 if exist_ok else _EXCLUSIVE)
        else:
            flags = 0
        self._call("ri_sandbox_file_mkdir", _path(path), flags)

    def remove(self, path, *, recursive=False):
        """Removes a file, a symlink or an empty directory; ``recursive``: a whole tree."""
        self._call("ri_sandbox_file_remove", _path(path), bool(recursive))

    def rename(self, src, dst):
        """POSIX rename: replaces a file, or an empty directory with a directory."""
        self._call("ri_sandbox_file_rename", _path(src), _path(dst))


def _diff_result(lib, d):
    raw = lib.ri_file_diff_json(ctypes.byref(d))
    try:
        if not raw:
            raise MemoryError("out of memory writing the file diff")
        return json.loads(ctypes.string_at(raw).decode("utf-8", "surrogateescape"))
    finally:
        lib.ri_free(raw)
        lib.ri_file_diff_free(ctypes.byref(d))


def diff_files(old, new):
    """What changed in the workspace's files from snapshot ``old`` to ``new`` (bytes of
    images): a dict with ``added``, ``removed``, ``changed``, ``moved`` (counts),
    ``oldHasWorkspace``, ``newHasWorkspace`` and ``changes``: [{kind, type, path, oldPath,
    oldSize, newSize, changedBytes}], sorted by path."""
    lib = _lib.lib()
    old, new = bytes(old), bytes(new)
    d = _lib.RiFileDiff()
    err = _lib.RiSandboxError()
    if not lib.ri_snapshot_diff_files(old, len(old), new, len(new), ctypes.byref(d), ctypes.byref(err)):
        raise errors.from_c(err)
    return _diff_result(lib, d)
