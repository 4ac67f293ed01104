"""Snapshots (v2 and v1), restore, checkpoints and rollback, fork isolation, transactional
executions, pausing on gas and a paused call carried by a snapshot."""

import pytest

import ri


def test_snapshot_restore_round_trip(basic):
    for _ in range(3):
        basic.execute("incr")
    basic.execute("bump_global")
    snap = basic.snapshot()
    assert snap[:4] == b"WSNP" and snap[4] == 2
    basic.execute("incr")
    basic.execute("bump_global")
    basic.restore(snap)
    assert basic.execute("get") == 3
    assert basic.execute("bump_global") == 2            # v2 holds globals
    basic.restore(snap)
    assert basic.snapshot() == snap                     # canonical: the same state, the same bytes


def test_snapshot_v1(basic):
    basic.execute("incr")
    v1 = basic.snapshot(format="v1")
    assert v1[:5] == b"WSNP\x01" and len(v1) == 13 + 65536 + len(b'{"prngState":{"current":0},"timestamp":0,"gasUsed":0}')
    basic.execute("incr")
    basic.restore(v1)
    assert basic.execute("get") == 1
    with pytest.raises(ValueError):
        basic.snapshot(format="v3")


def test_snapshot_with_module_restores_anywhere(basic):
    basic.execute("incr")
    basic.execute("random")
    snap = basic.snapshot(include_module=True, compressed=False)
    with ri.Sandbox() as fresh:                          # nothing loaded
        fresh.restore(snap)
        assert fresh.execute("get") == 1
        assert fresh.execute("random") == basic.execute("random")  # the PRNG state came along


def test_checkpoint_and_rollback(basic):
    basic.execute("incr")
    cp = basic.checkpoint()
    assert cp.info.memory_pages == 1 and cp.info.depth == 0
    basic.execute("incr")
    basic.execute("incr")
    basic.rollback(cp)
    assert basic.execute("get") == 1
    basic.execute("incr")
    basic.rollback()                                     # the last checkpoint taken
    assert basic.execute("get") == 1
    cp.close()
    cp.close()
    with pytest.raises(ri.SnapshotError, match="closed"):
        basic.rollback(cp)
    with ri.Sandbox() as other:
        with pytest.raises(ri.SnapshotError):
            other.rollback()                             # none taken


def test_fork_isolation(basic):
    basic.execute("incr")
    child = basic.fork()
    assert child.id != basic.id and child.status == "loaded"
    assert [child.execute("incr") for _ in range(2)] == [2, 3]
    assert basic.execute("get") == 1
    assert basic.execute("incr") == 2
    assert child.execute("get") == 3
    with basic.checkpoint() as cp:
        basic.execute("incr")
        from_cp = basic.fork(cp)
    assert from_cp.execute("get") == 2 and basic.execute("get") == 3
    child.close()
    from_cp.close()
    assert basic.execute("get") == 3


def test_transactional_execute(basic):
    basic.execute("incr")
    before = basic.snapshot()
    with pytest.raises(ri.Trap):
        basic.execute("write_then_trap", transactional=True)
    assert basic.snapshot() == before and basic.execute("get") == 1
    with pytest.raises(ri.Trap):
        basic.execute("write_then_trap")
    assert basic.execute("get") == 99


def test_suspend(basic):
    basic.suspend()
    assert basic.status == "suspended"
    with pytest.raises(ri.Trap) as e:
        basic.execute("get")
    assert e.value.kind == "invalid_state"
    basic.restore(basic.snapshot())
    assert basic.status == "loaded"


def test_pause_on_gas_and_resume(wasm):
    with ri.Sandbox(gas_schedule="instructions", max_gas=10**9) as whole:
        whole.load(wasm("basic"))
        expected = whole.execute("sum", [2000])
        expected_gas = whole.last_result.gas_used
    with ri.Sandbox(gas_schedule="instructions", max_gas=5000) as sb:
        sb.load(wasm("basic"))
        sb.pause_on = {"gas"}
        with pytest.raises(ri.Suspended) as e:
            sb.execute("sum", [2000])
        assert e.value.code == "SUSPENDED" and sb.pending_call == "sum"
        # the paused call travels in a snapshot, to another sandbox with the same config
        snap = sb.snapshot()
        with ri.Sandbox(gas_schedule="instructions", max_gas=5000) as other:
            other.load(wasm("basic"))
            other.restore(snap)
            assert other.pending_call == "sum"
            assert other.resume(gas=10**9) == expected
        slices = 1
        while True:
            try:
                value = sb.resume()
                break
            except ri.Suspended:
                slices += 1
        assert value == expected and sb.last_result.gas_used == expected_gas and slices > 3


def test_abandon(wasm):
    with ri.Sandbox(gas_schedule="instructions", max_gas=100) as sb:
        sb.load(wasm("basic"))
        sb.pause_on = ["gas"]
        with pytest.raises(ri.Suspended):
            sb.execute("sum", [1000])
        with pytest.raises(ri.Trap, match="paused call"):
            sb.execute("get")
        sb.abandon()
        assert sb.pending_call is None and sb.status == "loaded"
        assert sb.execute("get") == 0


def test_memory_pressure(wasm):
    sbs = [ri.Sandbox() for _ in range(3)]
    for sb in sbs:
        sb.load(wasm("basic"))
    try:
        assert ri.memory_pressure(sbs, 10 * 65536) == "NORMAL"
        assert ri.memory_pressure(sbs, 3 * 65536) == "OOM"
        level = ri.memory_pressure(sbs, int(3 * 65536 / 0.9))
        assert level == "PRESSURE"
        advice = ri.advise(level, sbs, foreground=sbs[0].id)
        assert advice.action == "suspend" and advice.instance_ids == (sbs[1].id, sbs[2].id)
        assert ri.advise("WARNING", sbs).message.startswith("Memory usage is above 70%")
    finally:
        for sb in sbs:
            sb.close()
