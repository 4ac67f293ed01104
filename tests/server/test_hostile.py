"""Hostile input never crashes the server: after each attempt it still answers /status and
an earlier sandbox still works. Oversized messages, deep JSON, binary frames, garbage, raw
TCP garbage, path-traversal ids, huge base64."""
import asyncio
import os
import shutil

import websockets

from harness import (Client, Server, attach, b64, check, check_eq, checkpoint, create,
                     init_message, main, statuses, test, value_of)


def tree(path):
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), path)] = fh.read()
    return out


async def survives(server, witness):
    """The server lives, answers /status, and the witness sandbox still counts."""
    check(server.alive(), "the server process died")
    check(server.status_ok(), "GET /status does not answer ok")
    before = await value_of(witness, "get")
    check_eq(await value_of(witness, "increment"), before + 1, "witness sandbox")


async def drain(c, seconds=3.0):
    try:
        return await c.quiet(seconds)
    except Exception:
        return []


async def setup(ri, args=()):
    s = Server(ri, args=args)
    w = await create(s, module="counter")
    return s, w.client


@test(60)
async def oversized_messages(ri):
    s, w = await setup(ri, ["--max-message-bytes", str(1 << 20)])
    sess = await create(s)
    await sess.client.send_may_close("x" * (2 << 20))
    await drain(sess.client)
    check_eq(sess.client.close_code, 1009, "close code of a message above --max-message-bytes")
    # As the init message of /create too.
    c = await Client.connect(s.url + "/create")
    await c.send_may_close("{\"pad\":\"" + "y" * (2 << 20) + "\"}")
    await drain(c)
    check(c.close_code is not None, "oversized init message did not close the socket")
    # A huge base64 module (4x the limit) on a fresh sandbox.
    sess = await create(s)
    await sess.client.send_may_close({"language": "wasm", "code": "QUFB" * (1 << 20)})
    await drain(sess.client)
    check_eq(sess.client.close_code, 1009, "close code of a huge base64 module")
    await survives(s, w)


@test(60)
async def huge_base64_within_limit(ri):
    s, w = await setup(ri)  # default limit 16 MiB
    sess = await create(s)
    await sess.client.send({"language": "wasm", "code": "QUFB" * (3 << 20)})  # 12 MiB, not wasm
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 30)
    check_eq(statuses(got), ["SANDBOX_EXECUTION_ERROR", "SANDBOX_EXECUTION_DONE"], "big non-wasm")
    await sess.client.send({"action": "load", "module": "!" * (8 << 20)})
    res = await sess.client.until_event("result", 30)
    check_eq(res[-1].get("ok"), False, "load of 8 MiB of non-base64")
    await survives(s, w)


@test(60)
async def deep_and_malformed_json(ri):
    s, w = await setup(ri)
    sess = await create(s)
    c = sess.client
    for msg in ("[" * 100000 + "]" * 100000, "{\"a\":" * 50000 + "1" + "}" * 50000,
                "[" * 100000, "{\"language\":\"wasm\",\"code\":", "\"just a string\"", "null",
                "1e999999", "{\"action\":null}", "{\"action\":[]}", "{\"event\":{}}",
                "{\"language\":1,\"code\":2}", "{\"action\":\"execute\",\"function\":{}}",
                "{\"action\":\"load\",\"module\":null}", "{\"a\":\"\\ud800\"}",
                "{\"a\":1,\"a\":2}", "\ufeff{}", "{\"action\":\"" + "k" * 100000 + "\"}"):
        await c.send(msg)
        await drain(c, 0.2)
        check(c.close_code is None or c.close_code in (1009, 4000, 1007, 1002),
              f"unexpected close {c.close_code} for {msg[:40]!r}")
        if c.close_code is not None:
            c = (await create(s)).client
    await survives(s, w)
    # Deep JSON as the init message of /create.
    c = await Client.connect(s.url + "/create")
    await c.send("[" * 100000 + "]" * 100000)
    got = await c.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR"], "deep init message")
    check_eq(c.close_code, 4000, "close code")
    await survives(s, w)


@test(60)
async def binary_frames(ri):
    s, w = await setup(ri)
    sess = await create(s)
    await sess.client.send(b"\x00\xff" * 1000)
    await drain(sess.client, 0.5)
    await sess.client.send(b64("hello").encode())
    await drain(sess.client, 0.5)
    c = await Client.connect(s.url + "/create")
    await c.send(os.urandom(10000))
    await drain(c, 1)
    check(c.close_code is not None, "a binary init message did not end the creation")
    await survives(s, w)


async def raw(server, data, read=True):
    r, wr = await asyncio.open_connection("127.0.0.1", server.port)
    try:
        wr.write(data)
        await wr.drain()
        if read:
            try:
                await asyncio.wait_for(r.read(65536), 2)
            except (asyncio.TimeoutError, ConnectionError):
                pass
    except ConnectionError:
        pass
    finally:
        wr.close()


@test(60)
async def raw_tcp_garbage(ri):
    s, w = await setup(ri)
    await raw(s, os.urandom(65536))
    await raw(s, b"GET /create HTTP/1.1\r\nHost: x\r\n" + b"X-Long: " + b"a" * 200000 + b"\r\n\r\n")
    await raw(s, b"GET /create HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 b"Sec-WebSocket-Key: not-base64!!\r\nSec-WebSocket-Version: 13\r\n\r\n")
    await raw(s, b"POST /status HTTP/1.1\r\nContent-Length: 99999999\r\n\r\nabc")
    await raw(s, b"GET /" + b"%" * 10000 + b" HTTP/1.1\r\n\r\n")
    await raw(s, b"\r\n" * 10000)
    # A valid handshake, then a masked frame header announcing 2^63-1 bytes.
    hs = (b"GET /create HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    await raw(s, hs + b"\x81\xff\x7f\xff\xff\xff\xff\xff\xff\xff" + b"\0\0\0\0" + b"x" * 100)
    # An unmasked client frame (a protocol error) and a fragment that never ends.
    await raw(s, hs + b"\x81\x05hello")
    await raw(s, hs + b"\x01\x85\0\0\0\0hello")
    # Many half-open connections that vanish.
    for _ in range(50):
        await raw(s, hs[:40], read=False)
    await survives(s, w)


@test(60)
async def path_traversal_ids(ri):
    s, w = await setup(ri)
    # A real sandbox image copied outside the volume, under a name an escape would reach.
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [42])
    await checkpoint(sess.client)
    outside = os.path.join(os.path.dirname(s.ckpt), "x")
    shutil.copytree(os.path.join(s.ckpt, sess.id), outside)
    parent_before = sorted(os.listdir(os.path.dirname(s.ckpt)))
    decoy_before = tree(outside)
    for sid in ("../x", "..%2Fx", "%2E%2E%2Fx", "..%2F..%2Fx", "sandbox-..", ".", "..", "%00",
                "sandbox-" + "0" * 23 + "%00", "x" * 5000, sess.id + "%2F..%2F..%2Fx",
                sess.id.upper(), "sandbox-" + "g" * 24, "_store"):
        try:
            c = await attach(s, sid, sess.token)
        except (websockets.exceptions.InvalidStatusCode, websockets.exceptions.InvalidHandshake,
                OSError):
            continue  # refused at the HTTP level: fine
        got = await c.until_closed(10)
        st = statuses(got)
        check("SANDBOX_RUNNING" not in st, f"attach to {sid[:60]!r} succeeded: {st}")
        check(st[-1:] in (["SANDBOX_NOT_FOUND"], ["SANDBOX_PERMISSION_DENIAL_ERROR"]),
              f"attach to {sid[:60]!r}: {st}")
    check_eq(sorted(os.listdir(os.path.dirname(s.ckpt))), parent_before,
             "files next to the volume after traversal attempts")
    check_eq(tree(outside), decoy_before, "the decoy outside the volume")
    await survives(s, w)


@test(60)
async def message_flood(ri):
    s, w = await setup(ri)
    sess = await create(s, module="counter")
    c = sess.client
    for _ in range(3000):
        await c.send({"action": "execute", "function": "increment"})
    # Every request gets exactly one answer: a result, or a refusal when the server's queue is
    # full ("Too many queued requests."); the counter counts exactly the ok results.
    ok = refused = 0
    while ok + refused < 3000:
        f = await c.next(30)
        check_eq(f.get("event"), "result", "the answer to an action")
        if f.get("ok"):
            ok += 1
            check_eq(f.get("value"), ok, "results in order")
        else:
            check_eq(f.get("error"), {"code": "BUSY", "message": "Too many queued requests."},
                     "refusal of a queued action")
            refused += 1
    print(f"     3000 queued executions: {ok} ran, {refused} refused")
    check(ok >= 100, f"only {ok} of 3000 queued executions ran")
    extra = [f for f in await c.quiet(0.5) if f.get("event") in ("result", "error")]
    check(refused == 0 or ok >= 256, f"refused with only {ok} run (the queue holds 256)")
    check_eq(extra, [], "answers beyond one per request")
    check_eq(await value_of(c, "get"), ok, "counter after the flood")
    for _ in range(2000):
        await c.send("garbage")
    await drain(c, 1)
    await survives(s, w)


@test(60)
async def abrupt_disconnects(ri):
    s, w = await setup(ri)
    for _ in range(20):
        c = await Client.connect(s.url + "/create")
        await c.send(init_message(module="spin"))
        c.ws.transport.abort()
    sess = await create(s)
    await sess.client.send({"language": "wasm", "code": b64("spin")})
    await sess.client.until(lambda f: f.get("event") == "stdout", 10, "spinning")
    sess.client.ws.transport.abort()
    await asyncio.sleep(0.5)
    await survives(s, w)


if __name__ == "__main__":
    main()
