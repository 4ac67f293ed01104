#!/usr/bin/python3
"""Smoke check of `ri serve` across servers: handoff on a shared volume, idle timeout with
auto-checkpoint, hibernation under a memory budget. usage: smoke2.py RI_BINARY"""
import asyncio, json, os, signal, sys, time
sys.argv += []
from smoke_lib import *  # noqa

async def drain_close(ws):
    seen = []
    try:
        while True: seen.append(await recv(ws))
    except websockets.ConnectionClosed as e:
        return seen, e.code

async def main():
    vol = os.path.join(TMP, "vol")
    a, addr_a = start(vol, ["--server-id", "A", "--lease-seconds", "3"])
    b, addr_b = start(vol, ["--server-id", "B", "--lease-seconds", "3"])
    counter = wasm("counter")
    ws = await websockets.connect("ws://%s/create" % addr_a)
    await ws.send(json.dumps({"enable_checkpoint": True, "enable_sandbox_handoff": True,
                              "sandbox": {"module": counter}}))
    made = await until(ws, st("SANDBOX_RUNNING"), 20)  # the lock statuses come before the id
    ids = [m for m in made if m.get("event") == "sandbox_id"][0]
    sid, tok = ids["sandbox_id"], ids["sandbox_token"]
    await ws.send(json.dumps({"action": "execute", "function": "inc"}))
    await recv(ws)
    lease = json.load(open(os.path.join(vol, sid, "lease")))
    check(lease["owner"] == "A", "lease owned by A")
    wb = await websockets.connect("ws://%s/attach/%s?sandbox_token=%s" % (addr_b, sid, tok))
    seen_b = await until(wb, st("SANDBOX_RUNNING"), 20)
    check([m["status"] for m in seen_b] == ["SANDBOX_RESTORING", "SANDBOX_LOCK_ACQUIRING",
          "SANDBOX_LOCK_ACQUIRED", "SANDBOX_RUNNING"], "handoff on B: %s" % seen_b)
    seen_a, code = await drain_close(ws)
    check([m["status"] for m in seen_a] == ["SANDBOX_LOCK_RELEASE_REQUESTED", "SANDBOX_CHECKPOINTING", "SANDBOX_DELETING",
          "SANDBOX_LOCK_RELEASING", "SANDBOX_LOCK_RELEASED", "SANDBOX_DELETED", "SANDBOX_CHECKPOINTED"] and code == 1000,
          "A released: %s %s" % (seen_a, code))
    await wb.send(json.dumps({"action": "execute", "function": "inc"}))
    m = await recv(wb)
    check(m.get("value") == 2, "state moved to B: %s" % m)
    check(json.load(open(os.path.join(vol, sid, "lease")))["owner"] == "B", "lease owned by B")
    # without handoff: IN_USE
    ws = await websockets.connect("ws://%s/create" % addr_a)
    await ws.send(json.dumps({"enable_checkpoint": True}))
    await recv(ws); ids2 = await recv(ws); await recv(ws)
    wb2 = await websockets.connect("ws://%s/attach/%s?sandbox_token=%s" % (addr_b, ids2["sandbox_id"], ids2["sandbox_token"]))
    seen, code = await drain_close(wb2)
    check([m["status"] for m in seen] == ["SANDBOX_IN_USE"] and code == 1011, "no handoff: IN_USE 1011 (%s %s)" % (seen, code))
    # SIGKILL of A: its lease expires, B can then take the sandbox after it was checkpointed
    await ws.send(json.dumps({"action": "checkpoint"}))
    await drain_close(ws)
    a.send_signal(signal.SIGKILL); a.wait()
    wb3 = await websockets.connect("ws://%s/attach/%s?sandbox_token=%s" % (addr_b, ids2["sandbox_id"], ids2["sandbox_token"]))
    seen = await until(wb3, lambda m: m.get("status") in ("SANDBOX_RUNNING", "SANDBOX_NOT_FOUND", "SANDBOX_RESTORE_ERROR"))
    check(seen[-1]["status"] == "SANDBOX_RUNNING", "restore on B after A died: %s" % seen)
    b.send_signal(signal.SIGTERM); check(b.wait(20) == 0, "B SIGTERM exit 0")
    check(os.path.exists(os.path.join(vol, sid, "checkpoints", "latest")), "B checkpointed at shutdown")

    # idle timeout with auto checkpoint
    c, addr_c = start(vol)
    ws = await websockets.connect("ws://%s/create" % addr_c)
    await ws.send(json.dumps({"idle_timeout": 1, "enable_checkpoint": True, "enable_idle_timeout_auto_checkpoint": True}))
    await recv(ws); ids = await recv(ws); await recv(ws)
    t0 = time.time()
    seen, code = await drain_close(ws)
    check([m["status"] for m in seen] == ["SANDBOX_CHECKPOINTING", "SANDBOX_DELETING", "SANDBOX_DELETED",
          "SANDBOX_CHECKPOINTED"] and code == 1000, "idle auto-checkpoint after %.1fs: %s" % (time.time() - t0, seen))
    ws = await websockets.connect("ws://%s/create" % addr_c)
    await ws.send(json.dumps({"idle_timeout": 1}))
    await recv(ws); ids = await recv(ws); await recv(ws)
    seen, code = await drain_close(ws)
    check([m["status"] for m in seen] == ["SANDBOX_DELETING", "SANDBOX_DELETED"] and code == 1000, "idle delete: %s" % seen)
    c.send_signal(signal.SIGTERM); c.wait(20)

    # hibernation under a memory budget
    d, addr_d = start(vol, ["--memory-budget", "200000"])
    socks = []
    for i in range(3):
        w = await websockets.connect("ws://%s/create" % addr_d)
        await w.send(json.dumps({"sandbox": {"module": counter}}))
        await recv(w); ids = await recv(w); await recv(w)
        await w.send(json.dumps({"action": "execute", "function": "inc"}))
        await recv(w)
        socks.append(w)
    await asyncio.sleep(2)
    import urllib.request
    body = urllib.request.urlopen("http://%s/metrics" % addr_d).read().decode()
    hib = [l for l in body.splitlines() if l.startswith("ri_server_sandboxes_hibernated ")]
    check(hib and int(hib[0].split()[1]) >= 1, "hibernated under pressure: %s" % hib)
    for w in socks:
        await w.send(json.dumps({"action": "execute", "function": "inc"}))
        m = await recv(w)
        check(m.get("value") == 2, "woke transparently: %s" % m)
    d.send_signal(signal.SIGTERM); check(d.wait(20) == 0, "D exit 0")

asyncio.run(main())
print("FAILED: %d" % len(failures) if failures else "all ok")
sys.exit(1 if failures else 0)
