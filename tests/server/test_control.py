"""kill_process (an infinite loop without host calls), kill_sandbox, reconnect."""
import os

from harness import (Server, attach, attach_running, b64, check, check_eq, checkpoint, create,
                     main, run_wasm, statuses, test, texts, value_of)


@test()
async def kill_process_stops_loop_without_host_calls(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("spin")})
    got = await c.until(lambda f: f.get("event") == "stdout", 10, "spinning")
    check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING"], "before the output")
    await c.quiet(0.3)  # it is looping now
    await c.send({"action": "kill_process"})
    # Within the 5 s the original's clients wait (the loop itself would run for 60 s).
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 5)
    check_eq(statuses(got), ["SANDBOX_EXECUTION_FORCE_KILLED", "SANDBOX_EXECUTION_DONE"],
             "statuses after kill_process")
    check_eq(await c.quiet(0.3), [], "frames after DONE")
    got = await run_wasm(c, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "run after kill_process")


@test()
async def kill_process_stops_blocked_read(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    await c.send({"action": "kill_process"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 5)
    check_eq(statuses(got), ["SANDBOX_EXECUTION_FORCE_KILLED", "SANDBOX_EXECUTION_DONE"],
             "statuses after kill_process during read")
    check("got:" not in texts(got, "stdout"), "the killed execution went on")


@test()
async def kill_process_with_nothing_running(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await c.send({"action": "kill_process"})
    got = await c.until_status("SANDBOX_EXECUTION_FORCE_KILLED", 5)
    check_eq(statuses(got), ["SANDBOX_EXECUTION_FORCE_KILLED"], "kill_process when idle")
    rest = await c.quiet(0.3)
    check(all(f.get("status") in (None, "SANDBOX_EXECUTION_DONE") for f in rest),
          f"unexpected frames after an idle kill_process: {rest}")
    got = await run_wasm(c, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "the socket is still usable")


@test()
async def kill_sandbox_sequence_and_deletion(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "increment")
    await checkpoint(sess.client)
    check(os.path.isdir(os.path.join(s.ckpt, sess.id)), "no sandbox directory after checkpoint")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    await c.send({"action": "kill_sandbox"})
    got = await c.until_closed(5)  # the original's clients wait at most 5 s
    check_eq(statuses(got), ["SANDBOX_KILLING", "SANDBOX_DELETING", "SANDBOX_DELETED",
                             "SANDBOX_KILLED"], "kill_sandbox statuses")
    check_eq(c.close_code, 1000, "close code after kill_sandbox")
    check(not os.path.exists(os.path.join(s.ckpt, sess.id)), "stored state left after kill_sandbox")
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(statuses(got)[-1:], ["SANDBOX_NOT_FOUND"], "attach after kill_sandbox")


@test()
async def kill_sandbox_during_execution(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("spin")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "spinning")
    await c.send({"action": "kill_sandbox"})
    got = await c.until_closed(5)
    st = [x for x in statuses(got) if x != "SANDBOX_EXECUTION_DONE"
          and x != "SANDBOX_EXECUTION_FORCE_KILLED"]
    check_eq(st, ["SANDBOX_KILLING", "SANDBOX_DELETING", "SANDBOX_DELETED", "SANDBOX_KILLED"],
             "kill_sandbox statuses during a run")
    check_eq(c.close_code, 1000, "close code")
    check(s.status_ok(), "server down after kill_sandbox of a running sandbox")


@test()
async def reconnect_resumes_running_execution(ri):
    s = Server(ri)
    sess = await create(s)
    await sess.client.send({"language": "wasm", "code": b64("echo")})
    await sess.client.until(lambda f: f.get("event") == "stdout", 10, "ready")
    await sess.client.close()
    c = await attach_running(s, sess.id, sess.token, restoring=False)
    await c.send({"action": "reconnect"})
    got = await c.until_status("SANDBOX_EXECUTION_RUNNING", 5)
    check_eq(got, [{"event": "status_update", "status": "SANDBOX_EXECUTION_RUNNING"}], "reconnect's answer")
    # "ready" was written to the first socket: not sent again (tests/server/test_stream.py)
    check_eq(await c.quiet(0.3), [], "output re-sent after the reconnect")
    await c.send({"event": "stdin", "data": "again"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:again", "live output after reconnect")


@test()
async def reconnect_without_running_execution(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    # Never ran anything: not fatal, the socket stays and works.
    await c.send({"action": "reconnect"})
    rest = await c.quiet(0.5)
    check(c.close_code is None, f"socket closed ({c.close_code}) by reconnect with no execution")
    check(not any(f.get("event") in ("stdout", "stderr") for f in rest), f"output replayed: {rest}")
    got = await run_wasm(c, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "run after reconnect")
    # After a finished execution: answers at once (no hang), nothing replayed.
    await c.send({"action": "reconnect"})
    rest = await c.quiet(0.5)
    check(c.close_code is None, "socket closed by reconnect after a finished execution")
    check(not any(f.get("event") in ("stdout", "stderr") for f in rest),
          f"a finished execution was replayed: {rest}")
    got = await run_wasm(c, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "run after the second reconnect")


if __name__ == "__main__":
    main()
