"""/create, ids and tokens, creation errors, GET /status and GET /metrics."""
import json
import os
import re
import subprocess

from harness import (CHECKPOINT_STATUSES, Client, Server, check, check_eq, create, init_message,
                     main, statuses, test, value_of)

ID_RE = re.compile(r"^sandbox-[0-9a-f]{24}$")     # docs/SERVER.md: 96 random bits
TOKEN_RE = re.compile(r"^[0-9a-f]{32}$")          # 128 random bits


@test()
async def create_sequence_id_before_running(ri):
    s = Server(ri)
    sess = await create(s)  # checks CREATING, sandbox_id, RUNNING in this order
    check_eq(statuses(sess.frames), ["SANDBOX_CREATING", "SANDBOX_RUNNING"], "statuses")
    check_eq([f.get("event") for f in sess.frames],
             ["status_update", "sandbox_id", "status_update"], "frames of a creation")
    extra = await sess.client.quiet(0.3)
    check_eq(extra, [], "frames after SANDBOX_RUNNING without a request")


@test()
async def ids_and_tokens_random_and_well_formed(ri):
    s = Server(ri)
    ids, tokens = set(), set()
    for _ in range(8):
        sess = await create(s)
        check(ID_RE.match(sess.id or ""), f"id {sess.id!r} is not sandbox-<24 hex> (>= 64 bits)")
        check(TOKEN_RE.match(sess.token or ""), f"token {sess.token!r} is not 32 hex (128 bits)")
        check(sess.token not in sess.id, "the token is part of the id")
        ids.add(sess.id)
        tokens.add(sess.token)
        await sess.client.close()
    check_eq(len(ids), 8, "distinct ids of 8 sandboxes")
    check_eq(len(tokens), 8, "distinct tokens of 8 sandboxes")
    # 8 ids of 96 random bits: the hex digits after the prefix are not all alike in position.
    hexes = [i[len("sandbox-"):] for i in ids]
    varying = sum(1 for k in range(24) if len({h[k] for h in hexes}) > 1)
    check(varying >= 16, f"only {varying} of 24 id digits vary across 8 ids: {sorted(ids)}")


async def creation_error(server, init, message):
    c = await Client.connect(server.url + "/create")
    await c.send(init)
    got = await c.until_closed(10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR", "error"], "frames of a failed create")
    msg = got[-1].get("message", "")
    if message.endswith("*"):
        check(msg.startswith(message[:-1]), f"error message {msg!r} does not start with {message[:-1]!r}")
    else:
        check_eq(msg, message, "error message")
    check_eq(c.close_code, 4000, "close code of a failed create")


@test()
async def creation_error_without_checkpoint_path(ri):
    s = Server(ri, ckpt=None)
    await creation_error(s, init_message(enable_checkpoint=True),
                         "Checkpointing is not enabled on the server.")
    # Without asking for checkpoints the same server creates sandboxes.
    sess = await create(s)
    check(sess.id, "no id")
    check(s.status_ok(), "server no longer answers /status")


@test()
async def creation_error_bad_module_and_bad_init(ri):
    s = Server(ri)
    await creation_error(s, init_message(module=b"\0asm\x01\0\0\0garbage"), "Failed to load WASM module*")
    bad = init_message()
    bad["idle_timeout"] = "soon"
    await creation_error(s, bad, "Invalid init message*")
    bad = init_message()
    bad["sandbox"]["module"] = "%%% not base64 %%%"
    c = await Client.connect(s.url + "/create")
    await c.send(bad)
    got = await c.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR"], "bad base64 module")
    check_eq(c.close_code, 4000, "close code")
    check(not any(f.get("event") == "sandbox_id" for f in got), "an id was sent for a failed create")
    check(s.status_ok(), "server down")


@test()
async def unknown_init_keys_ignored_and_module_loaded(ri):
    s = Server(ri)
    sess = await create(s, module="counter", some_future_key={"x": [1, 2]}, another=None)
    check_eq(await value_of(sess.client, "increment"), 1, "increment after create with a module")
    check_eq(await value_of(sess.client, "add", [41]), 42, "add(41)")


@test()
async def checkpoint_path_from_environment(ri):
    s = Server(ri, env_ckpt=True)
    sess = await create(s, enable_checkpoint=True, module="counter")
    await value_of(sess.client, "increment")
    await sess.client.send({"action": "checkpoint"})
    got = await sess.client.until_closed(10)
    check_eq(statuses(got), CHECKPOINT_STATUSES, "checkpoint")
    check(os.path.isfile(os.path.join(s.ckpt, sess.id, "checkpoints", "latest")),
          "no checkpoints/latest under CHECKPOINT_AND_RESTORE_PATH")


@test()
async def http_status_and_metrics(ri):
    s = Server(ri)
    code, body = s.http_get("/status")
    check_eq(code, 200, "GET /status code")
    st = json.loads(body)
    check_eq(st.get("status"), "ok", "GET /status body's status (the original's whole answer)")
    check_eq(sorted(st), sorted(["status", "version", "server_id", "uptime_seconds", "tls", "checkpointing",
                                 "sandboxes", "connections", "coordinator"]), "GET /status fields")
    check("backend" in st["coordinator"], "GET /status coordinator names its backend: %r" % (st["coordinator"],))
    sess = await create(s, module="counter")
    await value_of(sess.client, "increment")
    code, body = s.http_get("/metrics")
    check_eq(code, 200, "GET /metrics code")
    sample = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? -?[0-9.eE+-]+|NaN|[+-]Inf$")
    values = {}
    for line in body.splitlines():
        if not line or line.startswith("#"):
            continue
        check(sample.match(line), f"not a Prometheus sample line: {line!r}")
        name, val = line.rsplit(" ", 1)
        values[name] = float(val)
    for m in ("ri_server_sandboxes_live", "ri_server_connections", "ri_server_messages_total"):
        check(m in values, f"/metrics has no {m}")
    check(values["ri_server_sandboxes_live"] >= 1, "ri_server_sandboxes_live is 0 with a sandbox")
    code, _ = s.http_get("/no-such-endpoint")
    check(code == 404, f"GET of an unknown path answered {code}, expected 404")


@test()
async def serve_command_line_errors(ri):
    s = Server(ri)
    r = subprocess.run([ri, "serve", "--port", str(s.port)], capture_output=True, text=True,
                       timeout=20)
    check(r.returncode != 0, "a second server on a port in use exited 0")
    check(f"127.0.0.1:{s.port}" in r.stderr, f"no clear error for a port in use: {r.stderr!r}")
    r = subprocess.run([ri, "serve", "--no-such-option"], capture_output=True, text=True, timeout=20)
    check(r.returncode != 0, "an unknown option was accepted")
    check("--no-such-option" in r.stderr, f"the error does not name the option: {r.stderr!r}")
    r = subprocess.run([ri, "serve", "--port", "99999"], capture_output=True, text=True, timeout=20)
    check(r.returncode != 0, "port 99999 was accepted")
    check(s.status_ok(), "the first server suffered")


if __name__ == "__main__":
    main()
