"""Harness of the server integration tests (tests/server/test_*.py).

Starts `ri serve` processes on free ports with temporary checkpoint volumes, talks to them
as a real WebSocket client would (python3-websockets 10.4 + asyncio), records every frame
and the close code, and kills every server it started when the file is done.

Each test file is run as `/usr/bin/python3 tests/server/test_X.py PATH/TO/ri` and ends with
one line `N passed, N failed`; its exit status is 0 only when nothing failed.
"""
import asyncio
import base64
import json
import os
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

import websockets

HERE = os.path.dirname(os.path.abspath(__file__))
WAT_DIR = os.path.join(HERE, "wat")
TIMESTAMP = 1700000000000

# Every status string of the protocol (docs: shared/reference/sandbox-server-protocol.md).
STATUSES = {
    "SANDBOX_CREATING", "SANDBOX_RUNNING", "SANDBOX_NOT_FOUND", "SANDBOX_IN_USE",
    "SANDBOX_CREATION_ERROR", "SANDBOX_PERMISSION_DENIAL_ERROR", "SANDBOX_RESTORING",
    "SANDBOX_RESTORE_ERROR", "SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE",
    "SANDBOX_EXECUTION_ERROR", "SANDBOX_EXECUTION_UNSUPPORTED_LANGUAGE_ERROR",
    "SANDBOX_EXECUTION_FORCE_KILLED", "SANDBOX_EXECUTION_FORCE_KILL_ERROR",
    "SANDBOX_EXECUTION_IN_PROGRESS_ERROR", "SANDBOX_STDIN_ERROR", "SANDBOX_CHECKPOINTING",
    "SANDBOX_CHECKPOINTED", "SANDBOX_CHECKPOINT_ERROR", "SANDBOX_FILESYSTEM_SNAPSHOT_CREATING",
    "SANDBOX_FILESYSTEM_SNAPSHOT_CREATED", "SANDBOX_FILESYSTEM_SNAPSHOT_ERROR",
    "SANDBOX_DELETING", "SANDBOX_DELETED", "SANDBOX_KILLING", "SANDBOX_KILLED",
    "SANDBOX_KILL_ERROR", "SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED",
    "SANDBOX_LOCK_RELEASE_REQUESTED", "SANDBOX_LOCK_RELEASING", "SANDBOX_LOCK_RELEASED",
    "SANDBOX_LOCK_RENEWAL_ERROR", "SANDBOX_ERROR",
}


# The original's sequences (github.com/GoogleCloudPlatform/cloud-run-sandbox: its tests and
# src/sandbox/manager.py, handle.py). A checkpoint deletes the live copy: DELETING and
# DELETED come before CHECKPOINTED; a sandbox with handoff holds a lock, released within.
CHECKPOINT_STATUSES = ["SANDBOX_CHECKPOINTING", "SANDBOX_DELETING", "SANDBOX_DELETED",
                       "SANDBOX_CHECKPOINTED"]
HANDOFF_CHECKPOINT_STATUSES = ["SANDBOX_CHECKPOINTING", "SANDBOX_DELETING", "SANDBOX_LOCK_RELEASING",
                               "SANDBOX_LOCK_RELEASED", "SANDBOX_DELETED", "SANDBOX_CHECKPOINTED"]


class TestFailure(AssertionError):
    pass


class Skip(Exception):
    """The test cannot run here (e.g. it needs to mount a tmpfs); counted neither way."""


def check(cond, what):
    if not cond:
        raise TestFailure(what)


def check_eq(seen, want, what):
    if seen != want:
        raise TestFailure(f"{what}: expected {want!r}, seen {seen!r}")


# ---- wasm modules ---------------------------------------------------------------------------
_WASM_CACHE = {}
_WASM_TMP = None


def wasm(name):
    """The bytes of tests/server/wat/NAME.wat, compiled with wat2wasm into a temp dir."""
    global _WASM_TMP
    if name not in _WASM_CACHE:
        if _WASM_TMP is None:
            _WASM_TMP = tempfile.mkdtemp(prefix="ri-srv-wasm-")
        out = os.path.join(_WASM_TMP, name + ".wasm")
        subprocess.run(["wat2wasm", "--enable-all", os.path.join(WAT_DIR, name + ".wat"), "-o", out],
                       check=True)
        with open(out, "rb") as f:
            _WASM_CACHE[name] = f.read()
    return _WASM_CACHE[name]


def b64(name):
    return base64.b64encode(wasm(name)).decode()


# ---- servers --------------------------------------------------------------------------------
_SERVERS = []


class Server:
    """One `ri serve` process. ckpt=None: no checkpoint path at all (flag and env unset).
    tls=(CERT, KEY): served with --tls-cert/--tls-key; its url is wss://, http_get uses
    https://, and the clients trust CERT (client_kw)."""

    def __init__(self, ri, ckpt="new", args=(), env_ckpt=False, start=True, tls=None):
        self.ri = ri
        self.tls = tls
        self.dir = tempfile.mkdtemp(prefix="ri-srv-")
        if ckpt == "new":
            ckpt = os.path.join(self.dir, "volume")
            os.makedirs(ckpt)
        self.ckpt = ckpt
        self.args = list(args)
        self.env_ckpt = env_ckpt
        self.proc = None
        self.port = None
        _SERVERS.append(self)
        if start:
            self.start()

    def start(self, timeout=15.0):
        env = dict(os.environ)
        env.pop("CHECKPOINT_AND_RESTORE_PATH", None)
        cmd = [self.ri, "serve", "--port", "0"]
        if self.ckpt is not None:
            if self.env_ckpt:
                env["CHECKPOINT_AND_RESTORE_PATH"] = self.ckpt
            else:
                cmd += ["--checkpoint-path", self.ckpt]
        if self.tls:
            cmd += ["--tls-cert", self.tls[0], "--tls-key", self.tls[1]]
        cmd += self.args
        # e.g. "--coordinator etcd://..." to run a file's servers with ownership on etcd (only
        # those with a checkpoint volume: ownership is of checkpointed sandboxes)
        if self.ckpt is not None:
            cmd += os.environ.get("RI_SERVE_EXTRA_ARGS", "").split()
        n = len([f for f in os.listdir(self.dir) if f.startswith("out")])
        self.out_path = os.path.join(self.dir, f"out{n}.txt")
        self.err_path = os.path.join(self.dir, f"err{n}.txt")
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with open(self.out_path, "r", errors="replace") as f:
                first = f.readline()
            if first.endswith("\n"):
                m = re.fullmatch(r"listening on 127\.0\.0\.1:(\d+)\n", first)
                if not m:
                    raise TestFailure(f"first stdout line of ri serve: expected "
                                      f"'listening on 127.0.0.1:PORT', seen {first!r}")
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                raise TestFailure(f"ri serve exited with {self.proc.returncode} before listening: "
                                  f"{self.stderr()[-2000:]}")
            time.sleep(0.01)
        raise TestFailure("ri serve printed no 'listening on' line in time")

    def stderr(self):
        try:
            with open(self.err_path, "r", errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    @property
    def url(self):
        return f"{'wss' if self.tls else 'ws'}://127.0.0.1:{self.port}"

    def ssl_context(self):
        """A client context that trusts this server's certificate only (None without TLS)."""
        if not self.tls:
            return None
        ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=self.tls[0])
        return ctx

    def client_kw(self):
        """Keyword arguments of Client.connect for this server."""
        return {"ssl": self.ssl_context()} if self.tls else {}

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def http_get(self, path, timeout=5.0):
        """(status code, body text) of GET path."""
        scheme = "https" if self.tls else "http"
        try:
            with urllib.request.urlopen(f"{scheme}://127.0.0.1:{self.port}{path}", timeout=timeout,
                                        context=self.ssl_context()) as r:
                return r.status, r.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode("utf-8", "replace")

    def status_ok(self):
        """True when the process lives and GET /status answers {"status":"ok"}."""
        if not self.alive():
            return False
        try:
            code, body = self.http_get("/status")
            return code == 200 and json.loads(body).get("status") == "ok"
        except Exception:
            return False

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)

    def wait(self, timeout=10.0):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, graceful=True):
        """SIGTERM (so sanitizer builds report leaks at exit), SIGKILL after 10 s."""
        if self.proc is not None and self.proc.poll() is None:
            if graceful:
                self.proc.terminate()
                try:
                    self.proc.wait(10)
                    return
                except subprocess.TimeoutExpired:
                    pass
            self.proc.kill()
            self.proc.wait()

    def sanitizer_report(self):
        """The first sanitizer report (ASan, LSan, UBSan) in the server's stderr, or None."""
        err = self.stderr()
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                       "ERROR: ThreadSanitizer", "WARNING: ThreadSanitizer"):
            i = err.find(marker)
            if i >= 0:
                return err[max(0, i - 200):i + 1500]
        return None

    def cleanup(self):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


_DIRS = []


def tempdir(prefix="ri-srv-vol-"):
    """A temporary directory removed with the servers at the end of the test."""
    d = tempfile.mkdtemp(prefix=prefix)
    _DIRS.append(d)
    return d


def stop_all(keep_wasm=False):
    global _WASM_TMP
    for s in _SERVERS:
        s.cleanup()
    _SERVERS.clear()
    for d in _DIRS:
        shutil.rmtree(d, ignore_errors=True)
    _DIRS.clear()
    if _WASM_TMP and not keep_wasm:
        shutil.rmtree(_WASM_TMP, ignore_errors=True)
        _WASM_TMP = None
        _WASM_CACHE.clear()


# ---- clients --------------------------------------------------------------------------------
class Closed(Exception):
    pass


_CLIENTS = []


async def _run_test(fn, ri):
    try:
        await fn(ri)
    finally:
        # Drop every socket at once: waiting for polite closes costs seconds per test.
        for c in _CLIENTS:
            try:
                c.ws.transport.abort()
            except Exception:
                pass
        _CLIENTS.clear()


class Client:
    """A WebSocket session that records every frame (parsed JSON, or raw) and the close code."""

    def __init__(self, ws):
        self.ws = ws
        self.frames = []      # everything received, in order
        self.pending = []     # received but not yet consumed by next()
        self.close_code = None
        self.close_reason = None

    @classmethod
    async def connect(cls, url, max_size=2**20, **kw):
        """max_size: the largest message accepted, 1 MiB by default as in the original's
        Python client (websockets' default); a larger one fails the connection (1009)."""
        ws = await websockets.connect(url, max_size=max_size, open_timeout=10, ping_interval=None,
                                      close_timeout=2, **kw)
        c = cls(ws)
        _CLIENTS.append(c)
        return c

    async def send(self, obj):
        await self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    async def send_may_close(self, obj):
        """send, where the server may close the socket before the message is all sent (a
        message refused at its first fragment): then the close code is recorded."""
        try:
            await self.send(obj)
        except websockets.exceptions.ConnectionClosed as e:
            self.close_code = e.rcvd.code if e.rcvd else 1006
            self.close_reason = e.rcvd.reason if e.rcvd else ""

    async def _recv(self, timeout):
        try:
            raw = await asyncio.wait_for(self.ws.recv(), timeout)
        except websockets.exceptions.ConnectionClosed as e:
            self.close_code = e.rcvd.code if e.rcvd else 1006
            self.close_reason = e.rcvd.reason if e.rcvd else ""
            raise Closed()
        try:
            frame = json.loads(raw)
        except (ValueError, TypeError):
            frame = {"raw": raw}
        self.frames.append(frame)
        return frame

    async def next(self, timeout=5.0):
        """The next frame; Closed when the server closed; TestFailure on timeout."""
        if self.pending:
            return self.pending.pop(0)
        try:
            return await self._recv(timeout)
        except asyncio.TimeoutError:
            raise TestFailure(f"no frame within {timeout} s; frames so far: {self.brief()}")

    async def until(self, pred, timeout=5.0, what="frame"):
        """Frames up to and including the first one with pred(frame); TestFailure otherwise."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure(f"no {what} within {timeout} s; frames: {brief(got)}")
            try:
                f = await self.next(left)
            except Closed:
                raise TestFailure(f"closed ({self.close_code}) before {what}; frames: {brief(got)}")
            got.append(f)
            if pred(f):
                return got

    async def until_status(self, status, timeout=5.0):
        return await self.until(lambda f: f.get("status") == status, timeout, status)

    async def until_event(self, event, timeout=5.0):
        return await self.until(lambda f: f.get("event") == event, timeout, f"event {event}")

    async def until_closed(self, timeout=5.0):
        """Every frame up to the server's close; returns them (close code in self.close_code)."""
        got = []
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure(f"not closed within {timeout} s; frames: {brief(got)}")
            try:
                got.append(await self.next(left))
            except Closed:
                return got

    async def quiet(self, seconds=0.3):
        """Frames that arrive within `seconds` (no failure if none); stops at a close."""
        got = []
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return got
            try:
                got.append(await self._recv(left))
            except (asyncio.TimeoutError, Closed):
                return got

    async def close(self):
        try:
            await asyncio.wait_for(self.ws.close(), 3)
        except Exception:
            pass

    def brief(self):
        return brief(self.frames)


def brief(frames, limit=30):
    out = []
    for f in frames[:limit]:
        if f.get("event") == "status_update":
            out.append(f["status"])
        elif f.get("event") in ("stdout", "stderr"):
            out.append(f"{f['event']}:{f.get('data')!r}")
        elif f.get("event") == "error":
            out.append(f"error:{f.get('message')!r}")
        else:
            out.append(json.dumps(f)[:200])
    if len(frames) > limit:
        out.append(f"... {len(frames) - limit} more")
    return "[" + ", ".join(out) + "]"


def statuses(frames):
    return [f["status"] for f in frames if f.get("event") == "status_update"]


def texts(frames, event):
    return "".join(f.get("data", "") for f in frames if f.get("event") == event)


def init_message(module=None, sandbox=None, **kw):
    """The init message of /create (docs/SERVER.md). kw: idle_timeout, enable_checkpoint, ...;
    sandbox: keys of the "sandbox" object over the tests' defaults (long time limit, so only
    the test decides when an execution ends)."""
    msg = {"idle_timeout": None}
    msg.update(kw)
    sb = {"seed": 0, "event_timestamp": TIMESTAMP, "max_execution_ms": 60000}
    if sandbox:
        sb.update(sandbox)
    if module is not None:
        sb["module"] = b64(module) if isinstance(module, str) else base64.b64encode(module).decode()
    msg["sandbox"] = sb
    return msg


class Session:
    """A created sandbox: its client, id, token and the frames of its creation."""

    def __init__(self, client, sid, token, frames):
        self.client = client
        self.id = sid
        self.token = token
        self.frames = frames


async def create(server, **kw):
    """Creates a sandbox; checks SANDBOX_CREATING, sandbox_id, SANDBOX_RUNNING in that order
    (with enable_sandbox_handoff: the lock statuses before the id)."""
    c = await Client.connect(server.url + "/create", **server.client_kw())
    await c.send(init_message(**kw))
    got = await c.until_status("SANDBOX_RUNNING", 10)
    st = [f for f in got if f.get("event") in ("status_update", "sandbox_id")]
    kinds = [f.get("status") or f.get("event") for f in st]
    lock = ["SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED"] if kw.get("enable_sandbox_handoff") else []
    check_eq(kinds, ["SANDBOX_CREATING"] + lock + ["sandbox_id", "SANDBOX_RUNNING"], "create sequence")
    idf = [f for f in st if f.get("event") == "sandbox_id"][0]
    return Session(c, idf.get("sandbox_id"), idf.get("sandbox_token"), got)


async def attach(server, sid, token):
    url = f"{server.url}/attach/{sid}"
    if token is not None:
        url += f"?sandbox_token={token}"
    return await Client.connect(url, **server.client_kw())


async def attach_running(server, sid, token, restoring=None, handoff=False):
    """Attaches and reads up to SANDBOX_RUNNING; restoring=True/False checks RESTORING came
    (handoff: a sandbox with enable_sandbox_handoff, whose lock is taken while restoring)."""
    c = await attach(server, sid, token)
    got = await c.until_status("SANDBOX_RUNNING", 20)
    st = statuses(got)
    if restoring is True:
        lock = ["SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED"] if handoff else []
        check_eq(st, ["SANDBOX_RESTORING"] + lock + ["SANDBOX_RUNNING"], "attach with restore")
    elif restoring is False:
        check_eq(st, ["SANDBOX_RUNNING"], "attach to a live sandbox")
    return c


async def run_wasm(client, module_name, timeout=10.0):
    """Sends a wasm execution (export _start) and returns its frames up to EXECUTION_DONE."""
    await client.send({"language": "wasm", "code": b64(module_name)})
    return await client.until_status("SANDBOX_EXECUTION_DONE", timeout)


async def action(client, act, timeout=15.0, **fields):
    """One of our actions; returns its result event (ok or not)."""
    msg = {"action": act}
    msg.update(fields)
    await client.send(msg)
    got = await client.until(lambda f: f.get("event") == "result", timeout, f"result of {act}")
    res = got[-1]
    check_eq(res.get("action"), act, "action of the result event")
    return res


async def ok_action(client, act, timeout=15.0, **fields):
    res = await action(client, act, timeout, **fields)
    if res.get("ok") is not True:
        raise TestFailure(f"action {act}: {json.dumps(res)[:400]}")
    return res


async def value_of(client, function, payload=None, timeout=15.0):
    """Our execute action: the value it returned."""
    fields = {"function": function}
    if payload is not None:
        fields["payload"] = payload
    return (await ok_action(client, "execute", timeout, **fields)).get("value")


async def load(client, module_name, timeout=15.0):
    return await ok_action(client, "load", timeout, module=b64(module_name))


async def checkpoint(client, timeout=20.0, handoff=False):
    """Checkpoints; checks CHECKPOINTING, DELETING, DELETED, CHECKPOINTED (handoff: the lock's
    release between the deletion statuses), close 1000."""
    await client.send({"action": "checkpoint"})
    got = await client.until_closed(timeout)
    check_eq(statuses(got), HANDOFF_CHECKPOINT_STATUSES if handoff else CHECKPOINT_STATUSES,
             "checkpoint statuses")
    check_eq(client.close_code, 1000, "close code after checkpoint")
    return got


async def settled(fn, want, timeout=5.0):
    """fn() once it returns want, or its last value after timeout. For the volume after a
    checkpoint: the server prunes old images after it has answered, not before."""
    deadline = time.monotonic() + timeout
    while True:
        seen = fn()
        if seen == want or time.monotonic() > deadline:
            return seen
        await asyncio.sleep(0.02)


# ---- runner ---------------------------------------------------------------------------------
_TESTS = []


def test(timeout=30.0):
    def deco(fn):
        _TESTS.append((fn, timeout))
        return fn
    return deco


def _failure_text(e, timeout):
    if isinstance(e, asyncio.TimeoutError):
        return f"timed out after {timeout} s"
    if isinstance(e, TestFailure):
        return str(e)
    return "".join(traceback.format_exception(e)).rstrip()


def main():
    if len(sys.argv) < 2:
        print(f"usage: {sys.argv[0]} PATH/TO/ri [TEST_NAME_SUBSTRING]", file=sys.stderr)
        sys.exit(2)
    ri = os.path.abspath(sys.argv[1])
    only = sys.argv[2] if len(sys.argv) > 2 else None
    passed = failed = 0
    print(f"{os.path.basename(sys.argv[0])} against {ri}", flush=True)
    for fn, timeout in _TESTS:
        if only and only not in fn.__name__:
            continue
        t0 = time.monotonic()
        problem = None
        try:
            asyncio.run(asyncio.wait_for(_run_test(fn, ri), timeout))
        except KeyboardInterrupt:
            raise
        except Skip as e:
            stop_all(keep_wasm=True)
            print(f"SKIP {fn.__name__}: {e}", flush=True)
            continue
        except BaseException as e:  # noqa: BLE001 - every failure is reported, none ends the file
            problem = _failure_text(e, timeout)
            for s in _SERVERS:  # what each server was doing: its state and last log lines
                if s.proc is None:
                    continue
                state = "running" if s.alive() else f"exited {s.proc.returncode}"
                tail = "\n       ".join(s.stderr().strip().splitlines()[-6:])
                problem += f"\n     server pid {s.proc.pid} ({state}); stderr tail:\n       {tail}"
        # Servers end with SIGTERM, so a sanitizer build reports leaks; any report fails the test.
        for s in _SERVERS:
            s.stop()
            report = s.sanitizer_report()
            if report:
                problem = (problem + "\n     " if problem else "") + \
                    f"sanitizer report in a server's stderr:\n{report}"
        stop_all(keep_wasm=True)
        if problem is None:
            passed += 1
            print(f"PASS {fn.__name__} ({time.monotonic() - t0:.2f} s)", flush=True)
        else:
            failed += 1
            print(f"FAIL {fn.__name__}: {problem}", flush=True)
    stop_all()
    print(f"{passed} passed, {failed} failed", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    print("run one of the test_*.py files", file=sys.stderr)
