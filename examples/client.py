#!/usr/bin/python3
"""A small client of `ri serve` (docs/SERVER.md): create, execute, checkpoint, attach.

    client.py [-v] URL create [--module FILE.wasm] [--checkpoint] [--idle-timeout S]
    client.py [-v] URL run    ID TOKEN FILE.wasm [--stdin TEXT]   (runs its export _start)
    client.py [-v] URL call   ID TOKEN FUNCTION [NUMBER...]       (our execute action)
    client.py [-v] URL checkpoint ID TOKEN
    client.py [-v] URL kill   ID TOKEN

URL is ws://HOST:PORT. `create` prints `ID TOKEN`; `run` prints the program's output; `call`
prints the value; every command exits non-zero when the server reports an error. -v shows
every frame as it arrives. Needs python3-websockets (Debian's, hence /usr/bin/python3).

The same steps as a library:

    async with Sandbox.create("ws://127.0.0.1:8080", module=open("m.wasm","rb").read()) as sb:
        print(sb.id, await sb.call("increment"))
        await sb.checkpoint()
    async with Sandbox.attach(url, sid, token) as sb: ...
"""
import argparse
import asyncio
import base64
import json
import sys

import websockets


class ServerError(Exception):
    """The server reported an error status (and message) or closed the socket early."""


class Sandbox:
    def __init__(self, ws, verbose=False):
        self.ws = ws
        self.verbose = verbose
        self.id = None
        self.token = None

    # -- connecting ---------------------------------------------------------------------------
    @classmethod
    async def _open(cls, url, verbose):
        ws = await websockets.connect(url, max_size=None, ping_interval=None)
        return cls(ws, verbose)

    @classmethod
    def create(cls, url, module=None, checkpoint=False, idle_timeout=300, verbose=False):
        return _Session(cls._create(url, module, checkpoint, idle_timeout, verbose))

    @classmethod
    async def _create(cls, url, module, checkpoint, idle_timeout, verbose):
        sb = await cls._open(url + "/create", verbose)
        init = {"idle_timeout": idle_timeout, "enable_checkpoint": checkpoint, "sandbox": {}}
        if module is not None:
            init["sandbox"]["module"] = base64.b64encode(module).decode()
        await sb._send(init)
        # SANDBOX_CREATING, then the id and token, then SANDBOX_RUNNING.
        while True:
            f = await sb._next()
            if f.get("event") == "sandbox_id":
                sb.id, sb.token = f["sandbox_id"], f["sandbox_token"]
            elif f.get("status") == "SANDBOX_RUNNING":
                return sb

    @classmethod
    def attach(cls, url, sid, token, verbose=False):
        return _Session(cls._attach(url, sid, token, verbose))

    @classmethod
    async def _attach(cls, url, sid, token, verbose):
        sb = await cls._open(f"{url}/attach/{sid}?sandbox_token={token}", verbose)
        sb.id, sb.token = sid, token
        # Possibly SANDBOX_RESTORING (from the checkpoint volume) first.
        while (await sb._next()).get("status") != "SANDBOX_RUNNING":
            pass
        return sb

    # -- requests -----------------------------------------------------------------------------
    async def run(self, module, stdin=None, out=sys.stdout, err=sys.stderr):
        """Runs the module's _start; writes its output; returns when SANDBOX_EXECUTION_DONE."""
        await self._send({"language": "wasm", "code": base64.b64encode(module).decode()})
        failed = None
        while True:
            f = await self._next(raise_on_error=False)
            if f.get("status") == "SANDBOX_EXECUTION_RUNNING" and stdin is not None:
                await self._send({"event": "stdin", "data": stdin})
            elif f.get("event") == "stdout":
                out.write(f["data"])
            elif f.get("event") == "stderr":
                err.write(f["data"])
            elif f.get("event") == "error":
                failed = f["message"]
            elif f.get("status") == "SANDBOX_EXECUTION_DONE":
                if failed:
                    raise ServerError(failed)
                return

    async def call(self, function, *args):
        """Calls an exported function (numbers as arguments); returns its value."""
        msg = {"action": "execute", "function": function}
        if args:
            msg["payload"] = list(args)
        await self._send(msg)
        while True:
            f = await self._next()
            if f.get("event") == "result":
                if not f.get("ok"):
                    raise ServerError(json.dumps(f.get("error")))
                return f.get("value")

    async def checkpoint(self):
        """Saves the sandbox to the server's volume; the server then closes the socket."""
        await self._send({"action": "checkpoint"})
        while (await self._next()).get("status") != "SANDBOX_CHECKPOINTED":
            pass
        await self.ws.wait_closed()

    async def kill(self):
        """Deletes the sandbox and everything stored of it."""
        await self._send({"action": "kill_sandbox"})
        while (await self._next()).get("status") != "SANDBOX_KILLED":
            pass
        await self.ws.wait_closed()

    async def close(self):
        await self.ws.close()

    # -- frames -------------------------------------------------------------------------------
    async def _send(self, msg):
        if self.verbose:
            shown = {k: (v[:40] + "...") if isinstance(v, str) and len(v) > 60 else v
                     for k, v in msg.items()}
            print(f"  -> {json.dumps(shown)}", file=sys.stderr)
        await self.ws.send(json.dumps(msg))

    async def _next(self, raise_on_error=True):
        try:
            f = json.loads(await self.ws.recv())
        except websockets.exceptions.ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd else None
            raise ServerError(f"the server closed the connection (code {code})")
        if self.verbose:
            print(f"  <- {json.dumps(f)}", file=sys.stderr)
        if raise_on_error and f.get("event") == "error":
            raise ServerError(f["message"])
        return f


class _Session:
    """`async with Sandbox.create(...) as sb`: closes the socket at the end (the sandbox stays)."""

    def __init__(self, coro):
        self.coro = coro

    async def __aenter__(self):
        self.sb = await self.coro
        return self.sb

    async def __aexit__(self, *exc):
        await self.sb.close()


async def cli(a):
    if a.command == "create":
        module = open(a.module, "rb").read() if a.module else None
        async with Sandbox.create(a.url, module, a.checkpoint, a.idle_timeout, a.verbose) as sb:
            print(sb.id, sb.token)
        return
    async with Sandbox.attach(a.url, a.id, a.token, a.verbose) as sb:
        if a.command == "run":
            await sb.run(open(a.module, "rb").read(), a.stdin)
        elif a.command == "call":
            print(json.dumps(await sb.call(a.function, *a.args)))
        elif a.command == "checkpoint":
            await sb.checkpoint()
            print("checkpointed")
        elif a.command == "kill":
            await sb.kill()
            print("killed")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-v", "--verbose", action="store_true", help="show every frame")
    ap.add_argument("url", help="ws://HOST:PORT")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("create")
    p.add_argument("--module")
    p.add_argument("--checkpoint", action="store_true")
    p.add_argument("--idle-timeout", type=int, default=300)
    for name in ("run", "call", "checkpoint", "kill"):
        p = sub.add_parser(name)
        p.add_argument("id")
        p.add_argument("token")
        if name == "run":
            p.add_argument("module")
            p.add_argument("--stdin")
        if name == "call":
            p.add_argument("function")
            p.add_argument("args", nargs="*", type=float)
    a = ap.parse_args()
    if a.command == "call":
        a.args = [int(x) if x == int(x) else x for x in a.args]
    try:
        asyncio.run(cli(a))
    except ServerError as e:
        print(f"client.py: {e}", file=sys.stderr)
        sys.exit(1)
    except OSError as e:
        print(f"client.py: cannot connect to {a.url}: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
