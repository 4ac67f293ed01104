"""Snapshot diffs (ri.diff, Sandbox.diff) and delta images (Sandbox.snapshot_delta,
restore_delta, ri.delta_apply, ri.is_delta) from Python."""

import pytest

import ri


def test_diff(basic):
    old = basic.snapshot()
    basic.execute("incr")
    basic.execute("bump_global")
    new = basic.snapshot()
    d = ri.diff(old, new)
    assert d["identical"] is False
    assert d["memories"][0]["changedBytes"] == 1
    assert [g["index"] for g in d["globals"]] == [0]
    assert ri.diff(new, new)["identical"] is True
    assert basic.diff(old) == d
    assert basic.diff(new)["identical"] is True
    with pytest.raises(ValueError):
        ri.diff(old, new, max_ranges=-1)
    with pytest.raises(ri.SnapshotError):
        ri.diff(b"WSNP", new)


def test_delta_round_trip(basic):
    parent = basic.snapshot()
    for _ in range(5):
        basic.execute("incr")
    full = basic.snapshot()
    delta = basic.snapshot_delta(parent)
    assert ri.is_delta(delta) and not ri.is_delta(full)
    assert ri.delta_apply(parent, delta) == full
    basic.execute("incr")
    basic.restore_delta(parent, delta)
    assert basic.execute("get") == 5
    with pytest.raises(ri.SnapshotError) as e:
        ri.delta_apply(full, delta)
    assert "parent" in str(e.value)
    with pytest.raises(ri.SnapshotError):
        basic.restore_delta(full, delta)
