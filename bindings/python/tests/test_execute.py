"""Sandbox creation, execute (both conventions), call with typed values, results and metrics,
determinism, the library's version."""

import math
import subprocess
import sys

import pytest

import ri
from ri import _lib


def test_version():
    assert ri.version() == "0.2.0"
    assert ri.__version__ == ri.version()


def test_config_defaults_are_the_librarys():
    c = _lib.lib().ri_sandbox_config_default()
    d = ri.Config()
    assert (d.max_memory_bytes, d.max_gas, d.max_execution_ms, d.seed) == (
        c.max_memory_bytes, c.max_gas, c.max_execution_ms, c.deterministic_seed)
    assert d.gas_schedule == "host_calls" and c.gas_schedule == 0
    assert d.event_timestamp == 0  # the binding's default (the C library requires one)


def test_no_time_limit(wasm):
    """None: no wall-clock limit (the library's RI_SANDBOX_NO_TIME_LIMIT); gas still stops a run."""
    with ri.Sandbox(max_execution_ms=None, max_gas=1000, gas_schedule="instructions") as sb:
        assert sb.config.max_execution_ms is None
        sb.load(wasm("basic"))
        assert sb.execute("add", [1, 2]) == 3
        assert sb.metrics.execution_limit_ms == 2**32 - 1
    with pytest.raises(ri.InvalidConfig, match="write None"):
        ri.Sandbox(max_execution_ms=2**32 - 1)
    with pytest.raises(ri.InvalidConfig):
        ri.Sandbox(max_execution_ms=-1)


def test_sandbox_from_keywords_or_config(wasm):
    with ri.Sandbox(max_gas=7, seed=3) as a:
        assert a.config.max_gas == 7 and a.config.seed == 3
        assert a.status == "created" and a.id.startswith("sandbox-")
        a.load(wasm("basic"))
        assert a.status == "loaded"
    assert a.status == "closed"
    base = ri.Config(max_gas=5)
    with ri.Sandbox(base, seed=9) as b:
        assert (b.config.max_gas, b.config.seed) == (5, 9)
    with pytest.raises(TypeError):
        ri.Sandbox(no_such_option=1)
    with pytest.raises(TypeError):
        ri.Sandbox({"max_gas": 1})


def test_execute_direct_convention(basic):
    assert basic.execute("add", [17, 25]) == 42
    r = basic.last_result
    assert r.ok and r.value == 42 and r.value_json == "42" and r.results == (42,)
    assert r.error is None and r.gas_used == 0 and r.duration_ms >= 0
    assert r.metrics.memory_used_bytes == 65536 and r.metrics.gas_limit == 1_000_000
    assert basic.execute("add", 5) == 5            # missing arguments are 0
    assert basic.execute("add") == 0
    assert basic.execute("add64", [2**53, 1]) == 2**53 + 1
    assert basic.execute("pair", [-3]) == [-3, -3]
    assert basic.execute("nothing") is None and basic.last_result.value_json is None


def test_execute_json_convention(wasm):
    payload = {"name": "ü", "list": [1, 2.5, None, True], "nested": {"x": "y"}}
    with ri.Sandbox() as sb:
        sb.load(wasm("echo"))
        assert sb.execute("echo", payload) == payload
        assert sb.last_result.value_json == '{"name":"ü","list":[1,2.5,null,true],"nested":{"x":"y"}}'
        assert sb.execute("echo", "text") == "text"
    with pytest.raises(TypeError, match="JSON"):
        sb.execute("echo", object())


def test_call_typed(basic):
    assert basic.call("add", 40, 2) == 42
    assert basic.call("add", 2**31 - 1, 1) == -2**31              # i32 wraps as WebAssembly does
    assert basic.call("add64", ri.i64(2**62), ri.i64(2**62 - 1)) == 2**63 - 1
    assert basic.call("mul32", ri.f32(1.5), ri.f32(0.1)) == pytest.approx(0.15, rel=1e-6)
    assert basic.call("mul32", ri.f32(0.1), ri.f32(1.0)) != 0.1   # rounded to single precision
    assert basic.call("mul64", 0.1, 3.0) == 0.1 * 3.0
    assert math.isnan(basic.call("mul64", float("nan"), 1.0))
    assert basic.call("pair", 7) == (7, 7)
    assert basic.call("nothing") is None
    with pytest.raises(ri.Trap, match="takes i64") as e:
        basic.call("add64", 1, 2)                                   # ints are i32 unless wrapped
    assert e.value.kind == "runtime_error"
    with pytest.raises(OverflowError):
        basic.call("add", 2**40, 0)
    with pytest.raises(TypeError):
        basic.call("add", "1", 2)


def test_state_persists_between_executions(basic):
    assert [basic.execute("incr") for _ in range(3)] == [1, 2, 3]
    assert basic.execute("get") == 3


def test_metrics_live(basic):
    m = basic.metrics
    assert m.memory_used_bytes == 65536 and m.memory_limit_bytes == 16 * 1024 * 1024
    assert m.execution_limit_ms == 50


def test_same_seed_same_values(wasm):
    def draws(seed):
        with ri.Sandbox(seed=seed) as sb:
            sb.load(wasm("basic"))
            return [sb.execute("random") for _ in range(3)]
    assert draws(0) == draws(0) == [1144304738, 1416247, 958946056]  # Mulberry32, seed 0
    assert draws(42) == draws(42) != draws(0)


def test_event_timestamp(wasm):
    with ri.Sandbox() as sb:
        sb.load(wasm("basic"))
        assert sb.execute("time") == 0                      # the binding's default
    with ri.Sandbox(event_timestamp=1700000000000) as sb:
        sb.load(wasm("basic"))
        assert sb.execute("time") == -807049216             # truncated to i32


def test_check_determinism(basic, wasm):
    assert basic.check_determinism("incr") is True
    assert basic.execute("get") == 0                        # left as it was
    state = iter(range(100))
    tick = ri.HostFunction("tick", lambda: next(state), results=["i32"])
    others = [ri.HostFunction("add", lambda a, b: a + b, ["i32", "i32"], ["i32"]),
              ri.HostFunction("wide", lambda a, b, c: (a, b, c), ["i64", "f32", "f64"], ["i64", "f32", "f64"]),
              ri.HostFunction("fail", lambda x: None, ["i32"]),
              ri.HostFunction("greet", lambda p, n: 0, ["i32", "i32"], ["i32"])]
    with ri.Sandbox(host_functions=others + [tick]) as sb:
        sb.load(wasm("host"))
        assert sb.check_determinism("ticks", [1]) is False  # the host function is not deterministic


def test_library_not_found_names_both_ways(tmp_path):
    code = "import ri\ntry:\n    ri.version()\nexcept ri.LibraryNotFoundError as e:\n    print(e)\n"
    src = str(ri.__path__[0].rsplit("/", 1)[0])
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": src, "RI_LIBRARY": str(tmp_path / "nope.so")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout
    assert "RI_LIBRARY=" in out and "nope.so" in out
    del env["RI_LIBRARY"]
    env["LD_LIBRARY_PATH"] = str(tmp_path)
    out = subprocess.run([sys.executable, "-c", code + "else:\n    print('FOUND')\n"], env=env,
                         capture_output=True, text=True).stdout
    if "FOUND" in out:
        pytest.skip("a libri.so.0 is installed system-wide")
    assert "RI_LIBRARY" in out and "find_library" in out and "libri.so.0" in out
