"""Sandbox.files: a WASI sandbox's workspace from Python (put/get/list/stat/mkdir/remove/
rename), its Pythonic errors, and the file diffs of snapshots (ri.diff_files,
Sandbox.diff_files)."""

import errno

import pytest

import ri

EMPTY_MODULE = b"\0asm\x01\0\0\0"


@pytest.fixture
def sb():
    with ri.Sandbox(wasi=True) as s:
        yield s


def test_put_get_stat_list(sb):
    f = sb.files
    f.put("/hello.txt", "hello")
    assert f.get("/hello.txt") == b"hello"
    assert f.read_text("/hello.txt") == "hello"
    f.put("/data/bin", bytes(range(256)) * 100, parents=True)
    assert f.get("/data/bin") == bytes(range(256)) * 100
    st = f.stat("/data/bin")
    assert st.type == "file" and st.size == 25600 and st.nlink == 1
    assert f.stat("/data").type == "directory"
    f.put("/data/a", b"")
    assert f.get("/data/a") == b""
    assert [(e.name, e.type, e.size) for e in f.list("/data")] == [("a", "file", 0), ("bin", "file", 25600)]
    assert [e.name for e in f.list()] == ["data", "hello.txt"]
    assert f.exists("/data/a") and not f.exists("/nope") and not f.exists("/hello.txt/x")
    f.put("/hello.txt", b"replaced")
    assert f.get("/hello.txt") == b"replaced"
    assert [e.name for e in f.list()] == ["data", "hello.txt"]  # no temporary file left


def test_mkdir_remove_rename(sb):
    f = sb.files
    f.mkdir("/a")
    with pytest.raises(FileExistsError):
        f.mkdir("/a")
    f.mkdir("/a", exist_ok=True)
    f.mkdir("/a/b/c", parents=True)
    f.put("/a/b/c/file", "x")
    with pytest.raises(ri.DirectoryNotEmpty) as e:
        f.remove("/a")
    assert e.value.errno == errno.ENOTEMPTY and isinstance(e.value, OSError)
    f.rename("/a/b/c/file", "/moved")
    assert f.get("/moved") == b"x"
    f.remove("/a", recursive=True)
    assert [e.name for e in f.list()] == ["moved"]
    f.remove("/moved")
    assert f.list() == []


def test_errors(sb):
    f = sb.files
    f.put("/file", "x")
    with pytest.raises(FileNotFoundError) as e:
        f.get("/missing")
    assert isinstance(e.value, ri.FileNotFound) and isinstance(e.value, ri.RiError)
    assert e.value.code == "FILE_ERROR" and e.value.kind == "not_found" and e.value.errno == errno.ENOENT
    assert "/missing" in str(e.value)
    with pytest.raises(NotADirectoryError):
        f.list("/file")
    with pytest.raises(IsADirectoryError):
        f.get("/")
    with pytest.raises(FileExistsError):
        f.put("/file", "y", exclusive=True)
    for bad in ["relative", "/../etc/passwd", "/a/./b", "/a\0b", "/" + "x" * 300, "/" + "d/" * 3000]:
        with pytest.raises(ValueError) as e:
            f.put(bad, "x", parents=True)
        assert isinstance(e.value, ri.BadPath)
    with pytest.raises(TypeError):
        f.get(42)
    assert f.list() == [ri.FileEntry("file", "file", 1)]


def test_no_workspace_and_closed():
    with ri.Sandbox() as plain:
        with pytest.raises(ri.NoWorkspace) as e:
            plain.files.put("/a", "x")
        assert e.value.kind == "no_workspace"
    s = ri.Sandbox(wasi=True)
    s.close()
    with pytest.raises(ri.InstanceDestroyed):
        s.files.list()


def test_quota(sb):
    # The default quota is 256 MiB: one file just over it is refused, and nothing is left.
    with pytest.raises(ri.QuotaExceeded) as e:
        sb.files.put("/big", b"\0" * ((256 << 20) + 1))
    assert e.value.errno == errno.ENOSPC
    assert sb.files.list() == []


def test_diff_files(sb):
    sb.load(EMPTY_MODULE)
    sb.files.put("/a.txt", "hello")
    sb.files.put("/gone", "bye")
    old = sb.snapshot()
    sb.files.put("/a.txt", "hellO!")
    sb.files.remove("/gone")
    sb.files.put("/new/n.txt", "n", parents=True)
    new = sb.snapshot()
    d = ri.diff_files(old, new)
    assert (d["added"], d["removed"], d["changed"], d["moved"]) == (2, 1, 1, 0)
    by_path = {c["path"]: c for c in d["changes"]}
    assert by_path["/a.txt"]["kind"] == "changed" and by_path["/a.txt"]["changedBytes"] == 2
    assert by_path["/gone"]["kind"] == "removed"
    assert by_path["/new/n.txt"]["kind"] == "added" and by_path["/new/n.txt"]["newSize"] == 1
    assert sb.diff_files(old) == d
    assert ri.diff_files(new, new)["changes"] == []
    with pytest.raises(ri.SnapshotError):
        ri.diff_files(b"junk", new)
