"""Every error class, with the fields of the C ri_sandbox_error."""

import pytest

import ri

WHOLE_CLASS_TREE = [ri.GasExhausted, ri.MemoryExceeded, ri.Timeout, ri.Trap, ri.Interrupted, ri.InvalidModule,
                    ri.HostFunctionError, ri.InstanceDestroyed, ri.SnapshotError, ri.InvalidConfig, ri.Suspended]


def test_every_class_is_an_rierror_with_its_code():
    codes = {cls: cls.code for cls in WHOLE_CLASS_TREE}
    assert all(issubclass(cls, ri.RiError) for cls in WHOLE_CLASS_TREE)
    assert issubclass(ri.Interrupted, ri.Trap)
    assert codes[ri.GasExhausted] == "GAS_EXHAUSTED" and codes[ri.Trap] == "WASM_TRAP"
    assert len(set(codes.values())) == len(codes) - 1  # Interrupted shares Trap's code


def test_gas_exhausted(wasm):
    with ri.Sandbox(gas_schedule="instructions", max_gas=1000) as sb:
        sb.load(wasm("basic"))
        with pytest.raises(ri.GasExhausted) as e:
            sb.execute("spin")
    err = e.value
    assert err.code == "GAS_EXHAUSTED" and err.gas_limit == 1000 and 0 < err.gas_used <= 1000
    assert err.result is sb.last_result and not err.result.ok and err.result.error is err
    assert str(err).startswith("GAS_EXHAUSTED: ")


def test_gas_exhausted_host_calls_schedule(wasm):
    with ri.Sandbox(max_gas=2) as sb:
        sb.load(wasm("basic"))
        sb.execute("random")
        sb.execute("random")          # the meter is fresh for every execution
        assert sb.last_result.gas_used == 1


def test_memory_exceeded(wasm):
    with ri.Sandbox(max_memory_bytes=65536 + 1) as sb:  # two pages allowed, 65,537 bytes the limit
        sb.load(wasm("basic"))
        with pytest.raises(ri.MemoryExceeded) as e:
            sb.execute("grow", [1])
    assert (e.value.memory_used, e.value.memory_limit) == (131072, 65537)


def test_timeout(wasm):
    with ri.Sandbox(max_execution_ms=5) as sb:  # host-calls schedule: the loop costs no gas
        sb.load(wasm("basic"))
        with pytest.raises(ri.Timeout) as e:
            sb.execute("spin")
    assert e.value.limit_ms == 5 and e.value.elapsed_ms > 5


def test_traps(basic):
    for name, args, kind in [("crash", None, "unreachable"), ("div", [1, 0], "integer_divide_by_zero"),
                             ("nope", None, "missing_export")]:
        with pytest.raises(ri.Trap) as e:
            basic.execute(name, args)
        assert e.value.kind == e.value.trap_kind == kind
    assert basic.status == "loaded"


def test_invalid_module():
    with ri.Sandbox() as sb:
        with pytest.raises(ri.InvalidModule, match="magic"):
            sb.load(b"not a wasm module")
        with pytest.raises(ri.Trap) as e:
            sb.execute("add")
        assert e.value.kind == "invalid_state"


def test_host_function_error(wasm):
    def fail(x):
        raise ValueError(f"bad value {x}")
    hfs = [ri.HostFunction("add", lambda a, b: a + b, ["i32", "i32"], ["i32"]),
           ri.HostFunction("wide", lambda a, b, c: (a, b, c), ["i64", "f32", "f64"], ["i64", "f32", "f64"]),
           ri.HostFunction("fail", fail, ["i32"]),
           ri.HostFunction("greet", lambda p, n: 0, ["i32", "i32"], ["i32"]),
           ri.HostFunction("tick", lambda: 1, results=["i32"])]
    with ri.Sandbox(host_functions=hfs) as sb:
        sb.load(wasm("host"))
        with pytest.raises(ri.HostFunctionError) as e:
            sb.execute("call_fail", [7])
    assert e.value.function_name == "fail" and e.value.message == "bad value 7"
    assert isinstance(e.value.__cause__, ValueError)


def test_instance_destroyed(basic):
    basic.destroy()
    basic.destroy()                       # idempotent
    assert basic.status == "destroyed"
    with pytest.raises(ri.InstanceDestroyed) as e:
        basic.execute("add")
    assert e.value.instance_id == basic.id
    basic.close()
    with pytest.raises(ri.InstanceDestroyed, match="closed"):
        basic.execute("add")
    basic.close()                         # idempotent


def test_snapshot_error(basic):
    with pytest.raises(ri.SnapshotError, match="magic"):
        basic.restore(b"XXXXXXXXXXXX")
    with pytest.raises(ri.SnapshotError):
        ri.Sandbox().snapshot()           # nothing loaded
    basic.execute("bump_global")
    with pytest.raises(ri.SnapshotError, match="global"):
        basic.snapshot(format="v1")       # v1 cannot hold a changed global
    assert len(basic.snapshot()) > 0      # v2 can


@pytest.mark.parametrize("options", [
    {"max_gas": -1}, {"max_execution_ms": 2**32}, {"seed": 1.5}, {"gas_schedule": "fast"},
    {"event_timestamp": 2**63}, {"host_functions": ["not a host function"]},
    # refused by the C library: a host function may not be called memory
    {"host_functions": [ri.HostFunction("memory", lambda: 0, results=["i32"])]},
])
def test_invalid_config(options):
    with pytest.raises(ri.InvalidConfig) as e:
        ri.Sandbox(**options)
    assert e.value.code == "INVALID_CONFIG" and e.value.message


def test_pause_on_gas_needs_instructions(basic):
    with pytest.raises(ri.InvalidConfig):
        basic.pause_on = {"gas"}
    with pytest.raises(ValueError):
        basic.pause_on = {"never"}


def test_memory_read_write_and_out_of_bounds(wasm):
    with ri.Sandbox() as sb:
        sb.load(wasm("basic"))
        size = sb.memory_size
        assert size >= 65536
        sb.write_memory(100, b"hello")
        assert sb.read_memory(100, 5) == b"hello"
        assert sb.read_memory(size - 2, 2) == b"\0\0"
        with pytest.raises(ri.OutOfBounds) as e:
            sb.read_memory(size - 2, 3)
        assert e.value.code == "OUT_OF_BOUNDS" and isinstance(e.value, IndexError)
        assert "outside the memory" in str(e.value)
        with pytest.raises(ri.OutOfBounds):
            sb.write_memory(2**40, b"x")
