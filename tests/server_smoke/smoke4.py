#!/usr/bin/python3
"""Smoke check of the snapshot actions: cross-session refs, snapshot_filesystem and
filesystem_snapshot_name, named diff. usage: smoke4.py RI_BINARY"""
import asyncio, json, os, signal, sys
from smoke_lib import *  # noqa

async def make(addr, counter, **kw):
    ws = await websockets.connect("ws://%s/create" % addr)
    msg = {"sandbox": {"module": counter}}
    msg.update(kw)
    await ws.send(json.dumps(msg))
    frames = [await recv(ws), await recv(ws), await recv(ws)]
    return ws, frames[1]

async def act(ws, **m):
    await ws.send(json.dumps(m))
    return await recv(ws)

async def main():
    vol = os.path.join(TMP, "vol")
    p, addr = start(vol)
    counter = wasm("counter")
    a, ida = await make(addr, counter)
    b, idb = await make(addr, counter)
    await act(a, action="execute", function="inc")
    ref = (await act(a, action="snapshot"))["ref"]
    m = await act(b, action="snapshot_restore", ref=ref)
    check(m.get("ok") is False and m["error"]["code"] == "FORBIDDEN", "cross-session refused: %s" % m)
    m = await act(b, action="snapshot_list")
    check(m.get("ok") and m["snapshots"] == [], "b lists none of a's")
    m = await act(b, action="snapshot_list", allow_cross_session=True, limit=0)
    check(m.get("ok") and len(m["snapshots"]) == 1, "cross-session list with opt-in")
    m = await act(b, action="snapshot_restore", ref=ref, allow_cross_session=True)
    check(m.get("ok") is True, "cross-session restore with opt-in: %s" % m)
    c = await websockets.connect("ws://%s/attach/%s?sandbox_token=%s" % (addr, m["sandbox_id"], m["sandbox_token"]))
    check((await recv(c)).get("status") == "SANDBOX_RUNNING", "attach the restored sandbox")
    m = await act(c, action="execute", function="inc")
    check(m.get("value") == 2, "restored state: %s" % m)
    m = await act(a, action="execute", function="inc")
    check(m.get("value") == 2, "origin untouched by the fork: %s" % m)
    m = await act(b, action="snapshot_delete", ref=ref)
    check(m.get("ok") is False, "cross-session delete refused")
    for _ in range(2):
        m = await act(a, action="snapshot_delete", ref=ref)
        check(m.get("ok") is True and m.get("deleted") is True, "idempotent delete: %s" % m)
    m = await act(a, action="snapshot_restore", ref={"providerId": "x"})
    check(m.get("ok") is False and m["error"]["code"] == "INVALID_REF", "malformed ref: %s" % m)
    # the original's named snapshot, then a sandbox created from it
    await a.send(json.dumps({"action": "snapshot_filesystem", "name": "base"}))
    m1, m2 = await recv(a), await recv(a)
    check((m1["status"], m2["status"]) == ("SANDBOX_FILESYSTEM_SNAPSHOT_CREATING", "SANDBOX_FILESYSTEM_SNAPSHOT_CREATED"), "snapshot_filesystem")
    await a.send(json.dumps({"action": "snapshot_filesystem", "name": "../evil"}))
    m1, m2, m3 = await recv(a), await recv(a), await recv(a)
    check(m2.get("status") == "SANDBOX_FILESYSTEM_SNAPSHOT_ERROR", "bad snapshot name refused: %s" % m3)
    d, idd = await make(addr, counter, filesystem_snapshot_name="base")
    m = await act(d, action="execute", function="inc")
    check(m.get("value") == 3, "created from the named snapshot: %s" % m)
    ws = await websockets.connect("ws://%s/create" % addr)
    await ws.send(json.dumps({"filesystem_snapshot_name": "missing"}))
    f = [await recv(ws), await recv(ws), await recv(ws)]
    check(f[1].get("status") == "SANDBOX_CREATION_ERROR", "missing named snapshot: %s" % f)
    m = await act(d, action="named_save", name="later")
    m = await act(d, action="named_diff", **{"from": "base", "to": "later"})
    check(m.get("ok") is True and "diff" in m, "named_diff: %s" % str(m)[:200])
    m = await act(d, action="named_diff", **{"from": "base"})
    check(m.get("ok") is True, "named_diff against live")
    m = await act(d, action="named_list")
    check(m.get("ok") and {s["name"] for s in m["snapshots"]} >= {"base", "later"}, "named_list")
    m = await act(d, action="named_delete", name="later")
    check(m.get("deleted") is True, "named_delete")
    m = await act(d, action="named_delete", name="later")
    check(m.get("ok") is True and m.get("deleted") is False, "named_delete again")
    p.send_signal(signal.SIGTERM); check(p.wait(20) == 0, "exit 0")
    log = open(os.path.join(TMP, "log.txt")).read()
    check("cross-session" in log, "cross-session opt-in audited in the log")

asyncio.run(main())
print("FAILED: %d" % len(failures) if failures else "all ok")
sys.exit(1 if failures else 0)
