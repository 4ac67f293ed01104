"""interrupt() from another thread while execute() runs (the GIL is released during the C
call); separate sandboxes on separate threads."""

import threading

import pytest

import ri


def test_interrupt_from_another_thread(wasm):
    started = threading.Event()
    # a loop that would run for ages: a huge gas budget and time limit
    config = ri.Config(gas_schedule="instructions", max_gas=2**62, max_execution_ms=2**31,
                       host_functions=[ri.HostFunction("started", started.set)])
    with ri.Sandbox(config) as sb:
        sb.load(wasm("spin"))

        def interrupter():
            started.wait()
            sb.interrupt()
        t = threading.Thread(target=interrupter)
        t.start()
        with pytest.raises(ri.Interrupted) as e:
            sb.execute("spin")
        t.join()
        assert e.value.kind == "interrupted" and isinstance(e.value, ri.Trap)
        assert sb.status == "loaded"
        sb.interrupt()                        # idle: nothing to stop


def test_pause_on_interrupt_then_resume(wasm):
    started = threading.Event()
    config = ri.Config(max_execution_ms=2**31, host_functions=[ri.HostFunction("started", started.set)])
    with ri.Sandbox(config) as sb:
        sb.load(wasm("spin"))
        sb.pause_on = {"interrupt"}
        t = threading.Thread(target=lambda: (started.wait(), sb.interrupt()))
        t.start()
        with pytest.raises(ri.Suspended):
            sb.execute("spin")
        t.join()
        assert sb.pending_call == "spin"
        sb.abandon()


def test_sandboxes_on_separate_threads(wasm):
    results = {}
    module = wasm("basic")

    def work(i):
        with ri.Sandbox(seed=i) as sb:
            sb.load(module)
            results[i] = [sb.execute("random") for _ in range(100)]
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 4 and len({tuple(v) for v in results.values()}) == 4
    first = results[0]
    work(0)  # the same seed on this thread: the same values
    assert results[0] == first
