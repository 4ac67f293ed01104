"""Host functions: Python callables of every value type, failures (an exception never crosses
the C frames), the caller's memory, pausing from a host function, keeping the callbacks alive."""

import gc
import math

import pytest

import ri


def host_functions(**overrides):
    """The host functions host.wat imports; keywords replace their callables."""
    fns = {
        "add": (lambda a, b: a + b, ["i32", "i32"], ["i32"]),
        "wide": (lambda a, b, c: (a + 1, b * 2, c / 2), ["i64", "f32", "f64"], ["i64", "f32", "f64"]),
        "fail": (lambda x: None, ["i32"], []),
        "greet": (lambda p, n: 0, ["i32", "i32"], ["i32"]),
        "tick": (lambda: 1, [], ["i32"]),
    }
    made = []
    for name, (fn, params, results) in fns.items():
        if name in overrides:
            fn = overrides[name]
        if isinstance(fn, ri.HostFunction):
            made.append(fn)
        else:
            made.append(ri.HostFunction(name, fn, params, results))
    return made


@pytest.fixture
def host_sandbox(wasm):
    def make(**overrides):
        sb = ri.Sandbox(host_functions=host_functions(**overrides))
        sb.load(wasm("host"))
        return sb
    return make


def test_host_function_values(host_sandbox):
    seen = []

    def add(a, b):
        seen.append((a, b))
        return a + b
    with host_sandbox(add=add) as sb:
        assert sb.execute("call_add", [40, 2]) == 42
        assert sb.call("call_add", -5, 2) == -3
        assert seen == [(40, 2), (-5, 2)]
        i, f, d = sb.call("call_wide", ri.i64(2**62), ri.f32(1.5), ri.f64(3.0))
        assert (i, f, d) == (2**62 + 1, 3.0, 1.5)
        assert sb.last_result.gas_used == 1          # one import call (host-calls schedule)


def test_decorator(host_sandbox):
    @ri.host_function(["i32", "i32"], ["i32"])
    def add(a, b):
        return a * b
    assert add.name == "add" and add.params == ("i32", "i32")
    with host_sandbox(add=add) as sb:
        assert sb.execute("call_add", [6, 7]) == 42


def test_raising_host_function(host_sandbox):
    def fail(x):
        raise RuntimeError("no such user: %d" % x)
    with host_sandbox(fail=fail) as sb:
        with pytest.raises(ri.HostFunctionError) as e:
            sb.execute("call_fail", [3])
        assert e.value.function_name == "fail" and e.value.message == "no such user: 3"
        assert isinstance(e.value.__cause__, RuntimeError)
        assert sb.status == "loaded"
        assert sb.execute("call_add", [1, 1]) == 2     # the sandbox goes on


def test_exception_without_message_names_its_class(host_sandbox):
    def fail(x):
        raise LookupError
    with host_sandbox(fail=fail) as sb:
        with pytest.raises(ri.HostFunctionError, match="LookupError"):
            sb.execute("call_fail", [0])


def test_keyboard_interrupt_in_host_function_comes_back_as_itself(host_sandbox):
    def fail(x):
        raise KeyboardInterrupt
    with host_sandbox(fail=fail) as sb:
        with pytest.raises(KeyboardInterrupt):
            sb.execute("call_fail", [0])
        assert sb.last_result.error.code == "HOST_FUNCTION_ERROR"
        assert sb.execute("call_add", [2, 2]) == 4


@pytest.mark.parametrize("bad, message", [
    (lambda a, b: "42", "wants an int"),
    (lambda a, b: 2**40, "does not fit i32"),
    (lambda a, b: None, "wants an int"),
])
def test_wrong_results_fail_the_call(host_sandbox, bad, message):
    with host_sandbox(add=bad) as sb:
        with pytest.raises(ri.HostFunctionError, match=message):
            sb.execute("call_add", [1, 2])


def test_wrong_result_count(host_sandbox):
    with host_sandbox(wide=lambda a, b, c: (1, 2.0)) as sb:
        with pytest.raises(ri.HostFunctionError, match="has 3 results but returned 2"):
            sb.execute("call_wide")
    with host_sandbox(fail=lambda x: 5) as sb:
        with pytest.raises(ri.HostFunctionError, match="no results"):
            sb.execute("call_fail")


def test_float_results(host_sandbox):
    with host_sandbox(wide=lambda a, b, c: (a, 1e300, math.inf)) as sb:
        i, f, d = sb.call("call_wide", ri.i64(-1))
        assert (i, f, d) == (-1, math.inf, math.inf)  # 1e300 rounds to f32 infinity


def test_caller_memory(host_sandbox):
    def greet(caller, ptr, n):
        name = caller.memory.read(ptr, n).decode()
        answer = f"hello, {name}".encode()
        caller.memory.write(16, answer)
        return len(answer)
    kept = []

    def keep(caller, ptr, n):
        kept.append(caller.memory)
        return caller.memory.read(caller.memory.size, 1)   # out of bounds: IndexError
    with host_sandbox(greet=ri.HostFunction("greet", greet, ["i32", "i32"], ["i32"], with_caller=True)) as sb:
        n = sb.execute("call_greet")
        assert n == len("hello, world")
        assert bytes(sb.execute("byte", [16 + i]) for i in range(n)) == b"hello, world"
    with host_sandbox(greet=ri.HostFunction("greet", keep, ["i32", "i32"], ["i32"], with_caller=True)) as sb:
        with pytest.raises(ri.HostFunctionError, match="outside the memory of 65536 bytes"):
            sb.execute("call_greet")
    with pytest.raises(RuntimeError, match="no longer valid"):
        kept[0].read(0, 1)                                  # only valid during the call


def test_pause_from_host_function(host_sandbox):
    calls = []

    def tick(caller):
        calls.append(1)
        caller.pause()
        return len(calls)
    with host_sandbox(tick=ri.HostFunction("tick", tick, results=["i32"], with_caller=True)) as sb:
        sb.pause_on = {"yield"}
        assert sb.pause_on == {"yield"}
        pauses = 0
        with pytest.raises(ri.Suspended):
            sb.execute("ticks", [3])
        while True:
            pauses += 1
            assert sb.pending_call == "ticks" and sb.status == "suspended"
            try:
                value = sb.resume()
                break
            except ri.Suspended:
                continue
        assert value == 1 + 2 + 3 and pauses == 3 and sb.pending_call is None


def test_callbacks_outlive_the_python_objects(wasm):
    # The fork shares the parent's host functions: they must stay callable after the parent,
    # the config and the HostFunction objects are gone.
    sb = ri.Sandbox(host_functions=host_functions(add=lambda a, b: a - b))
    sb.load(wasm("host"))
    child = sb.fork()
    sb.close()
    del sb
    gc.collect()
    assert child.execute("call_add", [50, 8]) == 42
    child.close()


def test_host_function_may_use_its_sandbox(host_sandbox):
    holder = {}

    def add(a, b):
        return holder["sb"].metrics.gas_used + a + b
    with host_sandbox(add=add) as sb:
        holder["sb"] = sb
        assert sb.execute("call_add", [1, 1]) == 3         # gas so far: this import call


def test_destroy_and_close_from_a_host_function(host_sandbox):
    holder = {}

    def add(a, b):
        holder["sb"].close()
        return 0
    sb = host_sandbox(add=add)
    holder["sb"] = sb
    with pytest.raises(ri.InstanceDestroyed):
        sb.execute("call_add", [1, 1])
    assert sb.status == "closed"


def test_host_function_declarations():
    with pytest.raises(ValueError, match="unknown value type"):
        ri.HostFunction("f", lambda: 0, results=["i8"])
    with pytest.raises(TypeError, match="not callable"):
        ri.HostFunction("f", 3)
    assert "env.f (i32) -> ()" in repr(ri.HostFunction("f", print, ["i32"]))
