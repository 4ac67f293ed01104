"""pip installs the package (offline: no build isolation, no index) into a directory, and a
fresh interpreter imports it from there and runs a module."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import HERE


def test_pip_install_target(tmp_path, wasm):
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("pip is not installed (Debian package python3-pip)")
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
    src = tmp_path / "src"
    shutil.copytree(HERE.parent, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", "--no-index",
                    "--no-deps", "--disable-pip-version-check", "--target", str(target), str(src)],
                   check=True, env={**os.environ, "PIP_NO_CACHE_DIR": "1", "PIP_ROOT_USER_ACTION": "ignore"})
    assert (target / "ri" / "__init__.py").exists() and (target / "ri" / "py.typed").exists()
    (tmp_path / "add.wasm").write_bytes(wasm("basic"))
    code = ("import ri, sys\n"
            "assert ri.__file__.startswith(sys.argv[1]), ri.__file__\n"
            "with ri.Sandbox() as sb:\n"
            "    sb.load(open(sys.argv[2], 'rb').read())\n"
            "    print(ri.version(), sb.execute('add', [40, 2]))\n")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": str(target),
           "RI_LIBRARY": os.environ["RI_LIBRARY"], "PYTHONDONTWRITEBYTECODE": "1"}
    for name in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS"):  # a sanitizer build's runtime
        if name in os.environ:
            env[name] = os.environ[name]
    out = subprocess.run([sys.executable, "-c", code, str(target), str(tmp_path / "add.wasm")], env=env,
                         cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    assert out.split() == [__import__("ri").version(), "42"]
