"""Shared fixtures: the package from this source tree, the library, WAT modules compiled
with wat2wasm."""

import os
import pathlib
import shutil
import subprocess
import sys
import threading

import pytest

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent  # the repository

# Test the source tree's package unless told to test an installed one.
if not os.environ.get("RI_PYTHON_INSTALLED"):
    sys.path.insert(0, str(HERE.parent / "src"))

# Without RI_LIBRARY, use the build directory's library when there is one (a developer's run).
if not os.environ.get("RI_LIBRARY") and (ROOT / "build" / "libri.so.0").exists():
    os.environ["RI_LIBRARY"] = str(ROOT / "build" / "libri.so.0")


@pytest.fixture(scope="session")
def wasm(tmp_path_factory):
    """wasm("basic") -> the bytes of tests/wat/basic.wat compiled with wat2wasm."""
    if not shutil.which("wat2wasm"):
        pytest.skip("wat2wasm (Debian package wabt) is not installed")
    out = tmp_path_factory.mktemp("wasm")
    cache = {}
    lock = threading.Lock()  # tests compile from several threads

    def compile_(name):
        with lock:
            return compile_locked(name)

    def compile_locked(name):
        if name not in cache:
            target = out / f"{name}.wasm"
            subprocess.run(["wat2wasm", str(HERE / "wat" / f"{name}.wat"), "-o", str(target)], check=True)
            cache[name] = target.read_bytes()
        return cache[name]
    return compile_


@pytest.fixture
def basic(wasm):
    """A loaded sandbox of basic.wat (closed at the end)."""
    import ri
    with ri.Sandbox() as sb:
        sb.load(wasm("basic"))
        yield sb
