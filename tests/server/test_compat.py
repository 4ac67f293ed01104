"""What the original's clients (github.com/wlhee/cloud-run-sandbox, clients/python and
clients/ts) send, in the order they send it, against our server: init messages without our
"sandbox" object, and the auto-reconnect flow, which sends {"action":"reconnect"} as soon as
the new socket is open, before SANDBOX_RUNNING has arrived."""
import asyncio

from harness import (HANDOFF_CHECKPOINT_STATUSES, Client, Server, attach, b64, check, check_eq, main,
                     statuses, test, texts, value_of)


async def their_create(server, **params):
    """Their create: {"idle_timeout": 60} plus only the flags the user turned on."""
    c = await Client.connect(server.url + "/create")
    msg = {"idle_timeout": 60}
    msg.update(params)
    await c.send(msg)
    got = await c.until_status("SANDBOX_RUNNING", 10)
    ids = [f for f in got if f.get("event") == "sandbox_id"]
    check_eq(len(ids), 1, "sandbox_id events")
    lock = ["SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED"] if params.get("enable_sandbox_handoff") else []
    check_eq(statuses(got), ["SANDBOX_CREATING"] + lock + ["SANDBOX_RUNNING"], "create statuses")
    return c, ids[0]["sandbox_id"], ids[0]["sandbox_token"]


@test()
async def their_init_messages(ri):
    s = Server(ri)
    c, sid, tok = await their_create(s)
    await c.send({"language": "wasm", "code": b64("hello")})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "hello, world\n", "a run in a sandbox created their way")
    c, sid, tok = await their_create(s, enable_checkpoint=True, enable_idle_timeout_auto_checkpoint=True,
                                     enable_sandbox_handoff=True)
    await c.send({"action": "checkpoint"})
    got = await c.until_closed(10)
    check_eq(statuses(got), HANDOFF_CHECKPOINT_STATUSES, "their checkpoint")
    check_eq(c.close_code, 1000, "close code")


@test()
async def their_auto_reconnect_sends_reconnect_before_running(ri):
    s = Server(ri)
    c, sid, tok = await their_create(s)
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    c.ws.transport.abort()  # the network drops: 1006 on their side, they reconnect
    await asyncio.sleep(0.2)
    c2 = await attach(s, sid, tok)
    await c2.send({"action": "reconnect"})  # at once, as their on_reopen does
    got = await c2.until_status("SANDBOX_EXECUTION_RUNNING", 10)
    check_eq(statuses(got), ["SANDBOX_RUNNING", "SANDBOX_EXECUTION_RUNNING"], "statuses after the reconnect")
    # "ready" was written to the dropped socket, which got it: not sent again
    check_eq(texts(got + await c2.quiet(0.3), "stdout"), "", "output re-sent after the reconnect")
    await c2.send({"event": "stdin", "data": "back"})
    got = await c2.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:back", "the execution went on after the reconnect")


@test()
async def their_reconnect_during_restore(ri):
    s = Server(ri)
    c, sid, tok = await their_create(s, enable_checkpoint=True)
    await c.send({"action": "load", "module": b64("counter")})
    await c.until_event("result", 10)
    await value_of(c, "add", [31])
    await c.send({"action": "checkpoint"})
    await c.until_closed(10)
    c2 = await attach(s, sid, tok)
    await c2.send({"action": "reconnect"})  # arrives while the server restores
    got = await c2.until_status("SANDBOX_RUNNING", 20)
    check_eq(statuses(got), ["SANDBOX_RESTORING", "SANDBOX_RUNNING"], "attach statuses")
    rest = await c2.quiet(0.3)
    check(c2.close_code is None, f"closed after an early reconnect: {rest}")
    check_eq(await value_of(c2, "get"), 31, "state after the restore")


@test()
async def their_kill_waits_for_killed(ri):
    s = Server(ri)
    c, sid, tok = await their_create(s)
    await c.send({"action": "kill_sandbox"})
    got = await c.until_status("SANDBOX_KILLED", 5)  # they wait at most 5 s for KILLED
    check_eq(statuses(got), ["SANDBOX_KILLING", "SANDBOX_DELETING", "SANDBOX_DELETED",
                             "SANDBOX_KILLED"], "kill statuses")


if __name__ == "__main__":
    main()
