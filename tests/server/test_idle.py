"""Idle timeout: delete, or auto-checkpoint; reset by activity; not while executing."""
import asyncio
import os

from harness import (CHECKPOINT_STATUSES, Server, attach, attach_running, b64, check, check_eq,
                     create, main, statuses, test, texts, value_of)


@test()
async def idle_timeout_deletes_detached(ri):
    s = Server(ri)
    sess = await create(s, module="counter", idle_timeout=1)
    await value_of(sess.client, "increment")
    await sess.client.close()
    await asyncio.sleep(2.5)
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(statuses(got)[-1:], ["SANDBOX_NOT_FOUND"], "attach after the idle timeout")
    check_eq(c.close_code, 1011, "close code")


@test()
async def idle_timeout_deletes_attached(ri):
    s = Server(ri)
    sess = await create(s, module="counter", idle_timeout=1)
    got = await sess.client.until_closed(5)
    check_eq(statuses(got), ["SANDBOX_DELETING", "SANDBOX_DELETED"], "statuses on idle delete")
    check_eq(sess.client.close_code, 1000, "close code on idle delete")


@test()
async def idle_timeout_auto_checkpoint(ri):
    s = Server(ri)
    sess = await create(s, module="counter", idle_timeout=1, enable_checkpoint=True,
                        enable_idle_timeout_auto_checkpoint=True)
    await value_of(sess.client, "add", [2])
    got = await sess.client.until_closed(5)
    check_eq(statuses(got), CHECKPOINT_STATUSES, "statuses on idle checkpoint")
    check_eq(sess.client.close_code, 1000, "close code on idle checkpoint")
    check(os.path.isfile(os.path.join(s.ckpt, sess.id, "checkpoints", "latest")), "no image")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 2, "counter restored after the idle checkpoint")


@test()
async def idle_timeout_auto_checkpoint_detached(ri):
    s = Server(ri)
    sess = await create(s, module="counter", idle_timeout=1, enable_checkpoint=True,
                        enable_idle_timeout_auto_checkpoint=True)
    await value_of(sess.client, "add", [3])
    await sess.client.close()
    await asyncio.sleep(2.5)
    check(os.path.isfile(os.path.join(s.ckpt, sess.id, "checkpoints", "latest")), "no image")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 3, "counter restored after the idle checkpoint")


@test()
async def idle_timer_reset_by_activity(ri):
    s = Server(ri)
    sess = await create(s, module="counter", idle_timeout=2)
    c = sess.client
    for i in range(8):  # 8 x 0.6 s = 4.8 s, more than twice the timeout
        await asyncio.sleep(0.6)
        check_eq(await value_of(c, "increment"), i + 1, f"increment {i + 1} while active")
    check(c.close_code is None, "closed while active")
    # Then idle: it goes.
    got = await c.until_closed(5)
    check_eq(statuses(got), ["SANDBOX_DELETING", "SANDBOX_DELETED"], "after activity stopped")


@test()
async def idle_timer_reset_by_any_message(ri):
    s = Server(ri)
    sess = await create(s, module="counter", idle_timeout=2)
    c = sess.client
    for _ in range(8):  # 4.8 s of status requests, no execution
        await asyncio.sleep(0.6)
        await c.send({"action": "status"})
        got = await c.until_event("result", 5)
        check_eq(got[-1].get("sandbox_id"), sess.id, "status action")
    check(c.close_code is None, "closed while messages kept coming")
    check_eq(await value_of(c, "get"), 0, "the sandbox is still there")


@test()
async def idle_timer_not_while_executing(ri):
    s = Server(ri)
    sess = await create(s, idle_timeout=1)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    await asyncio.sleep(2.5)  # blocked in read, longer than the idle timeout
    check(c.close_code is None, "the sandbox timed out during an execution")
    await c.send({"event": "stdin", "data": "late"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:late", "execution after a long read")


@test()
async def idle_timeout_never(ri):
    s = Server(ri)
    for it in (None, 0):
        sess = await create(s, module="counter", idle_timeout=it)
        await sess.client.close()
        await asyncio.sleep(1.5)
        c = await attach_running(s, sess.id, sess.token, restoring=False)
        check_eq(await value_of(c, "get"), 0, f"sandbox with idle_timeout {it}")


if __name__ == "__main__":
    main()
