"""Helpers of the smoke checks."""
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

