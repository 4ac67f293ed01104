"""/attach: live sandboxes, wrong or missing tokens, IN_USE, NOT_FOUND (protocol order)."""
import os

from harness import (Server, attach, attach_running, check, check_eq, checkpoint, create,
                     main, statuses, test, value_of)


async def denied(server, sid, token):
    """Attach with a bad token: PERMISSION_DENIAL, error, close 4000; returns the frames."""
    c = await attach(server, sid, token)
    got = await c.until_closed(10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_PERMISSION_DENIAL_ERROR", "error"], "frames of a denied attach")
    check_eq(got[-1].get("message"), "Invalid sandbox token.", "error message")
    check_eq(c.close_code, 4000, "close code of a denied attach")
    return got


@test()
async def attach_live_continues_state(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    for want in (1, 2, 3):
        check_eq(await value_of(sess.client, "increment"), want, "increment")
    await sess.client.close()
    c = await attach_running(s, sess.id, sess.token, restoring=False)
    check_eq(await value_of(c, "get"), 3, "counter after attach")
    check_eq(await value_of(c, "increment"), 4, "increment after attach")


@test()
async def wrong_and_missing_token_live(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    await value_of(sess.client, "increment")
    await sess.client.close()
    await denied(s, sess.id, "0" * 32)
    await denied(s, sess.id, sess.token[:-1] + ("0" if sess.token[-1] != "0" else "1"))
    await denied(s, sess.id, None)
    await denied(s, sess.id, "")
    # The sandbox is unharmed and still attachable with its token.
    c = await attach_running(s, sess.id, sess.token, restoring=False)
    check_eq(await value_of(c, "get"), 1, "counter after denied attaches")


@test()
async def wrong_token_checkpointed_restores_nothing(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [5])
    await checkpoint(sess.client)
    code, body = s.http_get("/metrics")
    restores_before = [l for l in body.splitlines() if l.startswith("ri_server_restores_total")]
    got = await denied(s, sess.id, "f" * 32)
    check("SANDBOX_RESTORING" not in statuses(got), "RESTORING sent before the token check")
    code, body = s.http_get("/metrics")
    restores_after = [l for l in body.splitlines() if l.startswith("ri_server_restores_total")]
    check_eq(restores_after, restores_before, "ri_server_restores_total after a denied attach")
    live = [float(l.split()[-1]) for l in body.splitlines()
            if l.startswith("ri_server_sandboxes_live ")]
    check_eq(live, [0.0], "ri_server_sandboxes_live after a denied attach")
    # The right token restores it (it was not restored by the denied attempt).
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 5, "counter after restore")


@test()
async def in_use_while_attached(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_IN_USE"], "statuses of a second attach")
    check_eq(c.close_code, 1011, "close code of IN_USE")
    # The first socket is unaffected.
    check_eq(await value_of(sess.client, "increment"), 1, "first socket after IN_USE")
    # A wrong token on an attached sandbox is a denial, not IN_USE (token first).
    await denied(s, sess.id, "1" * 32)


@test()
async def not_found_unknown_id(ri):
    s = Server(ri)
    c = await attach(s, "sandbox-" + "0" * 24, "0" * 32)
    got = await c.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_RESTORING", "SANDBOX_NOT_FOUND"], "unknown id, volume set")
    check_eq(c.close_code, 1011, "close code of NOT_FOUND")
    s2 = Server(ri, ckpt=None)
    c = await attach(s2, "sandbox-" + "0" * 24, "0" * 32)
    got = await c.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_NOT_FOUND"], "unknown id, no volume")
    check_eq(c.close_code, 1011, "close code of NOT_FOUND")


@test()
async def not_found_after_kill_sandbox(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await sess.client.send({"action": "kill_sandbox"})
    await sess.client.until_closed(10)
    check(not os.path.exists(os.path.join(s.ckpt, sess.id)), "sandbox directory left after kill")
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(statuses(got)[-1:], ["SANDBOX_NOT_FOUND"], "attach after kill_sandbox")
    check_eq(c.close_code, 1011, "close code")


if __name__ == "__main__":
    main()
