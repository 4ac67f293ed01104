#!/usr/bin/python3
"""Smoke check of `ri serve` against hostile clients. usage: smoke3.py RI_BINARY"""
import asyncio, json, os, signal, sys
from smoke_lib import *  # noqa

async def closed(ws):
    seen = []
    try:
        while True: seen.append(await recv(ws))
    except websockets.ConnectionClosed as e:
        return seen, e.code

async def main():
    vol = os.path.join(TMP, "vol")
    p, addr = start(vol, ["--max-sandboxes", "2", "--max-message-bytes", "65536"])
    base = "ws://" + addr
    # init that is not JSON / not an object
    for bad in ["nope", "[1,2]", "{\"idle_timeout\":\"x\"}", "{\"sandbox\":{\"module\":\"!!!\"}}",
                "{\"idle_timeout\":9223372036854775807}", "{\"sandbox\":{\"max_memory_bytes\":4294967296}}"]:
        ws = await websockets.connect(base + "/create")
        await ws.send(bad)
        seen, code = await closed(ws)
        check([m.get("status") for m in seen][:2] == ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR"] and code == 4000,
              "bad init %r: %s %s" % (bad, seen, code))
    ws = await websockets.connect(base + "/create")
    await ws.send(json.dumps({"enable_checkpoint": True}))
    await recv(ws); ids = await recv(ws); await recv(ws)
    # too large
    await ws.send("{\"x\":\"" + "a" * 100000 + "\"}")
    seen, code = await closed(ws)
    check(code == 1009, "too large -> 1009 (%s)" % code)
    # the sandbox survives its socket
    ws = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (ids["sandbox_id"], ids["sandbox_token"]))
    m = await recv(ws)
    check(m.get("status") == "SANDBOX_RUNNING", "re-attach after a close")
    # binary garbage, non-object, unknown action
    await ws.send(bytes(range(256)))
    m1, m2, m3 = await recv(ws), await recv(ws), await recv(ws)
    check(m1.get("status") == "SANDBOX_EXECUTION_ERROR", "binary garbage refused")
    await ws.send("42")
    m1, m2, m3 = await recv(ws), await recv(ws), await recv(ws)
    check("object" in m2.get("message", ""), "non-object refused")
    await ws.send(json.dumps({"action": "format_disk", "request_id": 9}))
    m = await recv(ws)
    check(m.get("ok") is False and m.get("request_id") == 9 and "Unknown action" in m["error"]["message"], "unknown action refused: %s" % m)
    await ws.send(json.dumps({"event": "stdin", "data": 5}))
    m1, m2 = await recv(ws), await recv(ws)
    check(m1.get("status") == "SANDBOX_STDIN_ERROR", "stdin without string data")
    # snapshot rate
    codes = []
    for i in range(15):
        await ws.send(json.dumps({"action": "snapshot", "request_id": i}))
    for i in range(15):
        m = await recv(ws)
        codes.append(m.get("ok") or m["error"]["code"])
    check(codes.count("RATE_LIMITED") >= 4, "snapshot rate limited: %s" % codes)
    # too many sandboxes
    w2 = await websockets.connect(base + "/create"); await w2.send("{}")
    await recv(w2); await recv(w2); await recv(w2)
    w3 = await websockets.connect(base + "/create"); await w3.send("{}")
    seen, code = await closed(w3)
    check(seen[1:] and seen[2].get("message") == "Too many sandboxes on this server." and code == 4000, "max sandboxes: %s" % seen)
    # ids that try to leave the volume
    try:  # lws normalises the path: it leaves /attach/ and the handshake is refused
        w = await websockets.connect(base + "/attach/..%2F..%2Fetc?sandbox_token=x")
        seen, code = await closed(w)
        check(code == 1011, "attach ../..: %s" % code)
    except websockets.InvalidMessage:
        check(True, "attach ../.. refused at the handshake")
    for bad in ["sandbox-" + "0" * 24, "sandbox-xyz", "a" * 200, "sandbox-%2e%2e"]:
        w = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (bad, "0" * 32))
        seen, code = await closed(w)
        check(seen and seen[-1].get("status") == "SANDBOX_NOT_FOUND" and code == 1011, "attach %r: %s %s" % (bad[:20], seen, code))
    # checkpoint of a sandbox without enable_checkpoint
    await w2.send(json.dumps({"action": "checkpoint"}))
    seen, code = await closed(w2)
    check([m.get("status") for m in seen if m["event"] == "status_update"] == ["SANDBOX_CHECKPOINTING", "SANDBOX_CHECKPOINT_ERROR"] and code == 4000,
          "checkpoint not enabled: %s" % seen)
    # unknown path
    try:
        await websockets.connect(base + "/nope")
        check(False, "unknown path refused")
    except Exception:
        check(True, "unknown path refused")
    # server without a checkpoint path refuses enable_checkpoint
    q, addr2 = start(None)
    w = await websockets.connect("ws://%s/create" % addr2)
    await w.send(json.dumps({"enable_checkpoint": True}))
    seen, code = await closed(w)
    check(seen[2].get("message") == "Checkpointing is not enabled on the server." and code == 4000, "no checkpoint path")
    w = await websockets.connect("ws://%s/attach/%s?sandbox_token=x" % (addr2, ids["sandbox_id"]))
    seen, code = await closed(w)
    check([m["status"] for m in seen] == ["SANDBOX_NOT_FOUND"] and code == 1011, "attach unknown, no path: %s" % seen)
    # corrupt checkpoint: RESTORE_ERROR, files left as they are
    await ws.send(json.dumps({"action": "checkpoint"}))
    await closed(ws)
    d = os.path.join(vol, ids["sandbox_id"], "checkpoints")
    img = os.path.join(d, open(os.path.join(d, "latest")).read())
    data = bytearray(open(img, "rb").read()); data[len(data) // 2] ^= 0xFF
    open(img, "wb").write(data)
    w = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (ids["sandbox_id"], "f" * 32))
    seen, code = await closed(w)
    check([m.get("status") for m in seen][:1] == ["SANDBOX_PERMISSION_DENIAL_ERROR"] and code == 4000, "token checked before restore")
    w = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (ids["sandbox_id"], ids["sandbox_token"]))
    seen, code = await closed(w)
    check([m.get("status") for m in seen if m["event"] == "status_update"] == ["SANDBOX_RESTORING", "SANDBOX_RESTORE_ERROR"] and code == 4000,
          "corrupt image: %s" % seen)
    check(open(img, "rb").read() == bytes(data), "corrupt image left as it was")
    for x in (p, q):
        x.send_signal(signal.SIGTERM); check(x.wait(20) == 0, "exit 0")

asyncio.run(main())
print("FAILED: %d" % len(failures) if failures else "all ok")
sys.exit(1 if failures else 0)
