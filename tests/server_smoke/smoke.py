#!/usr/bin/python3
"""Quick smoke check of `ri serve` (the full suite is tests/server/).
usage: smoke.py RI_BINARY  (wat2wasm must be on PATH)"""
import asyncio, base64, json, os, signal, subprocess, sys, tempfile, urllib.request
import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
RI = sys.argv[1]
TMP = tempfile.mkdtemp(prefix="ri-smoke-")

def wasm(name):
    out = os.path.join(TMP, name + ".wasm")
    subprocess.run(["wat2wasm", os.path.join(HERE, name + ".wat"), "-o", out], check=True)
    return base64.b64encode(open(out, "rb").read()).decode()

def start(ckpt=None, extra=()):
    env = dict(os.environ)
    env.pop("CHECKPOINT_AND_RESTORE_PATH", None)
    args = [RI, "serve", "--port", "0"] + list(extra)
    if ckpt: args += ["--checkpoint-path", ckpt]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=open(os.path.join(TMP, "log.txt"), "a"), env=env)
    line = p.stdout.readline().decode()
    assert line.startswith("listening on "), line
    return p, line.split()[-1]

async def recv(ws, t=10):
    return json.loads(await asyncio.wait_for(ws.recv(), t))

async def until(ws, pred, t=10):
    seen = []
    while True:
        m = await recv(ws, t)
        seen.append(m)
        if pred(m): return seen

def st(s): return lambda m: m.get("status") == s

failures = []
def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond: failures.append(what)

async def main():
    ckpt = os.path.join(TMP, "vol")
    p, addr = start(ckpt)
    base = "ws://" + addr
    hello, echo, loop, counter = wasm("hello"), wasm("echo"), wasm("loop"), wasm("counter")
    body = urllib.request.urlopen("http://%s/status" % addr).read()
    check(json.loads(body) == {"status": "ok"}, "GET /status")
    # create
    ws = await websockets.connect(base + "/create")
    await ws.send(json.dumps({"idle_timeout": 300, "enable_checkpoint": True}))
    a, b, c = await recv(ws), await recv(ws), await recv(ws)
    check(a == {"event": "status_update", "status": "SANDBOX_CREATING"}, "CREATING")
    check(b["event"] == "sandbox_id" and len(b["sandbox_token"]) == 32, "sandbox_id event")
    check(c["status"] == "SANDBOX_RUNNING", "RUNNING")
    sid, tok = b["sandbox_id"], b["sandbox_token"]
    # execution with split UTF-8
    await ws.send(json.dumps({"language": "wasm", "code": hello}))
    seen = await until(ws, st("SANDBOX_EXECUTION_DONE"))
    out = "".join(m["data"] for m in seen if m.get("event") == "stdout")
    check(seen[0].get("status") == "SANDBOX_EXECUTION_RUNNING", "EXECUTION_RUNNING first")
    check(out == "h\u00e9llo\n", "utf-8 kept whole: %r" % out)
    check(all(m.get("data") != "h\ufffd" for m in seen), "no U+FFFD for a split character")
    # unsupported language
    await ws.send(json.dumps({"language": "python", "code": "print(1)"}))
    seen = await until(ws, st("SANDBOX_EXECUTION_DONE"))
    check(seen[0]["status"] == "SANDBOX_EXECUTION_UNSUPPORTED_LANGUAGE_ERROR", "unsupported language")
    # stdin echo
    await ws.send(json.dumps({"language": "wasm", "code": echo}))
    await until(ws, st("SANDBOX_EXECUTION_RUNNING"))
    await ws.send(json.dumps({"language": "wasm", "code": echo}))
    m1, m2 = await recv(ws), await recv(ws)
    check(m1.get("status") == "SANDBOX_EXECUTION_ERROR" and m2.get("message") == "An execution is already in progress.", "second execution refused %s %s" % (m1, m2))
    await ws.send(json.dumps({"action": "checkpoint"}))
    m1, m2, m3 = await recv(ws), await recv(ws), await recv(ws)
    check(m2.get("status") == "SANDBOX_EXECUTION_IN_PROGRESS_ERROR", "checkpoint during execution refused")
    await ws.send(json.dumps({"event": "stdin", "data": "ping\n"}))
    m = await recv(ws)
    check(m == {"event": "stdout", "data": "ping\n"}, "stdin echoed: %r" % m)
    await ws.send(json.dumps({"action": "reconnect"}))
    m = await recv(ws)
    check(m == {"event": "stdout", "data": "ping\n"}, "reconnect replays")
    await ws.send(json.dumps({"event": "stdin_close"}))
    await until(ws, st("SANDBOX_EXECUTION_DONE"))
    await ws.send(json.dumps({"event": "stdin", "data": "x"}))
    m1, m2 = await recv(ws), await recv(ws)
    check(m2.get("message") == "No process is running in the sandbox.", "stdin with nothing running")
    # kill a loop without host calls
    await ws.send(json.dumps({"language": "wasm", "code": loop}))
    await until(ws, lambda m: m.get("event") == "stdout")
    await ws.send(json.dumps({"action": "kill_process"}))
    seen = await until(ws, st("SANDBOX_EXECUTION_DONE"))
    check(seen[0].get("status") == "SANDBOX_EXECUTION_FORCE_KILLED", "kill_process stops a tight loop")
    # our actions
    await ws.send(json.dumps({"action": "load", "module": counter, "request_id": 1}))
    m = await recv(ws)
    check(m.get("ok") is True and m.get("request_id") == 1, "load: %s" % m)
    await ws.send(json.dumps({"action": "execute", "function": "inc", "request_id": 2}))
    m = await recv(ws)
    check(m.get("value") == 1, "execute inc -> 1: %s" % m)
    await ws.send(json.dumps({"action": "execute", "function": "add", "args": [{"type": "i32", "value": 17}, {"type": "i32", "value": 25}]}))
    m = await recv(ws)
    check(m.get("value") == 42, "execute add typed -> 42")
    await ws.send(json.dumps({"action": "execute", "function": "boom"}))
    m = await recv(ws)
    check(m.get("ok") is False and m["error"]["code"] == "WASM_TRAP", "trap result: %s" % m)
    await ws.send(json.dumps({"action": "snapshot", "request_id": "s"}))
    m = await recv(ws)
    check(m.get("ok") is True and "ref" in m, "snapshot ref: %s" % m)
    await ws.send(json.dumps({"action": "snapshot_list", "limit": 1000}))
    m = await recv(ws)
    check(m.get("ok") and len(m["snapshots"]) == 1, "snapshot_list")
    await ws.send(json.dumps({"action": "snapshot_branch", "ref": m["snapshots"][0]}))
    br = await recv(ws)
    check(br.get("ok") and br["sandbox_id"] != sid, "snapshot_branch -> new sandbox: %s" % br)
    await ws.send(json.dumps({"action": "named_save", "name": "one"}))
    m = await recv(ws)
    check(m.get("ok") is True, "named_save: %s" % m)
    await ws.send(json.dumps({"action": "execute", "function": "inc"}))
    m = await recv(ws)
    check(m.get("value") == 2, "inc -> 2")
    await ws.send(json.dumps({"action": "named_restore", "name": "one"}))
    await recv(ws)
    await ws.send(json.dumps({"action": "execute", "function": "inc"}))
    m = await recv(ws)
    check(m.get("value") == 2, "after named_restore inc -> 2 again")
    # bad messages
    await ws.send("{not json")
    m1, m2 = await recv(ws), await recv(ws)
    check(m1.get("status") == "SANDBOX_EXECUTION_ERROR", "bad JSON -> EXECUTION_ERROR")
    await recv(ws)
    await ws.send("[" * 100 + "]" * 100)
    m1, m2, m3 = await recv(ws), await recv(ws), await recv(ws)
    check("deeper" in m2.get("message", ""), "deep JSON refused")
    # IN_USE and denial
    ws2 = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (sid, tok))
    m = await recv(ws2)
    check(m.get("status") == "SANDBOX_IN_USE", "IN_USE")
    try:
        await ws2.recv()
    except websockets.ConnectionClosed as e:
        check(e.code == 1011, "IN_USE close 1011")
    ws2 = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (sid, "0" * 32))
    m = await recv(ws2)
    check(m.get("status") == "SANDBOX_PERMISSION_DENIAL_ERROR", "wrong token denied")
    # checkpoint
    await ws.send(json.dumps({"action": "checkpoint"}))
    seen = []
    try:
        while True: seen.append(await recv(ws))
    except websockets.ConnectionClosed as e:
        check(e.code == 1000, "checkpoint close 1000")
    check([m.get("status") for m in seen] == ["SANDBOX_CHECKPOINTING", "SANDBOX_CHECKPOINTED"], "checkpoint statuses %s" % seen)
    latest = open(os.path.join(ckpt, sid, "checkpoints", "latest")).read()
    check(latest.startswith("checkpoint_") and os.path.exists(os.path.join(ckpt, sid, "checkpoints", latest)), "layout: latest -> image")
    meta = json.load(open(os.path.join(ckpt, sid, "metadata.json")))
    check(tok not in json.dumps(meta) and len(meta["token_sha256"]) == 64, "metadata has the hash, not the token")
    # restore on attach (after a server restart)
    p.send_signal(signal.SIGTERM); check(p.wait(20) == 0, "SIGTERM exit 0")
    p, addr = start(ckpt); base = "ws://" + addr
    ws = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (sid, tok))
    m1, m2 = await recv(ws), await recv(ws)
    check((m1["status"], m2["status"]) == ("SANDBOX_RESTORING", "SANDBOX_RUNNING"), "restore on attach")
    await ws.send(json.dumps({"action": "execute", "function": "inc"}))
    m = await recv(ws)
    check(m.get("value") == 3, "state survived checkpoint/restore: %s" % m)
    await ws.send(json.dumps({"action": "kill_sandbox"}))
    seen = []
    try:
        while True: seen.append((await recv(ws))["status"])
    except websockets.ConnectionClosed as e:
        check(e.code == 1000, "kill_sandbox close 1000")
    check(seen == ["SANDBOX_KILLING", "SANDBOX_DELETING", "SANDBOX_DELETED", "SANDBOX_KILLED"], "kill statuses %s" % seen)
    check(not os.path.exists(os.path.join(ckpt, sid)), "kill_sandbox removed the files")
    ws = await websockets.connect(base + "/attach/%s?sandbox_token=%s" % (sid, tok))
    m1, m2 = await recv(ws), await recv(ws)
    check(m2["status"] == "SANDBOX_NOT_FOUND", "gone after kill")
    body = urllib.request.urlopen("http://%s/metrics" % addr).read().decode()
    check("ri_server_restores_total 1" in body, "metrics")
    p.send_signal(signal.SIGTERM); p.wait(20)

asyncio.run(main())
print("log:", os.path.join(TMP, "log.txt"))
print("FAILED: %d" % len(failures) if failures else "all ok")
sys.exit(1 if failures else 0)
