"""Hibernation under --memory-budget and what may happen to a hibernated sandbox: its next
message, attach, checkpoint, idle timeout and kill_sandbox all act on it as if it were live.
A WASI process waiting for stdin is hibernated with its sandbox and goes on, with the same
output, when its input comes. Also many sandboxes executing at once, and --max-sandboxes."""
import asyncio
import base64
import os

from harness import (CHECKPOINT_STATUSES, Client, Server, Skip, attach, attach_running, check, check_eq,
                     checkpoint, create, init_message, main, statuses, test, texts, value_of)

BUDGET = 3 << 20


async def big(server, seed, **kw):
    sess = await create(server, module="big", sandbox={"max_memory_bytes": 16 << 20}, **kw)
    check_eq(await value_of(sess.client, "setup", [16, seed]), 16, "setup 1 MiB")
    return sess, await value_of(sess.client, "sum")


def hibernated(server):
    code, body = server.http_get("/metrics")
    for line in body.splitlines():
        if line.startswith("ri_server_sandboxes_hibernated "):
            return float(line.split()[1])
    raise AssertionError("no ri_server_sandboxes_hibernated in /metrics")


def images(server):
    d = os.path.join(server.ckpt, "_hibernate")
    return sorted(f for _, _, fs in os.walk(d) for f in fs if f.endswith(".img"))


async def crowd(server, n, **kw):
    """n sandboxes of 1 MiB, then waits until some are hibernated."""
    out = [await big(server, 500 + i, **kw) for i in range(n)]
    for _ in range(40):
        if hibernated(server) >= 1:
            break
        await asyncio.sleep(0.25)
    check(hibernated(server) >= 1, "nothing hibernated under the budget")
    return out


async def hibernated_one(server, sessions):
    """A session whose sandbox is hibernated now (its image is on disk)."""
    names = images(server)
    for sess, want in sessions:
        if any(sess.id in n for n in names):
            return sess, want
    raise AssertionError(f"no hibernation image names a sandbox id: {names}")


def c_program(name):
    path = os.path.join(os.environ.get("RI_C_WASI_DIR", ""), name + ".wasm")
    if not os.path.exists(path):
        raise Skip(f"{path} not built (clang-19 and wasi-libc needed; RI_C_WASI_DIR)")
    with open(path, "rb") as f:
        return {"language": "wasm", "code": base64.b64encode(f.read()).decode()}


async def hibernation_of(server, sid):
    for _ in range(80):
        if any(sid in n for n in images(server)):
            return
        await asyncio.sleep(0.25)
    raise AssertionError(f"{sid} was not hibernated (images: {images(server)})")


@test(120)
async def process_waiting_for_stdin_is_hibernated_and_goes_on(ri):
    # a budget below one process's memory: the process, parked waiting for stdin, is
    # hibernated with its sandbox; its input wakes it, and it goes on where it was
    s = Server(ri, args=["--memory-budget", str(64 << 10)])
    sess = await create(s)
    c = sess.client
    await c.send(c_program("srv_lines"))
    await c.until(lambda f: "ready" in texts(c.frames, "stdout"), 20)
    await c.send({"event": "stdin", "data": "hello\n"})
    await c.until(lambda f: f.get("event") == "stdout" and "HELLO" in f.get("data", ""), 20)
    await hibernation_of(s, sess.id)
    check(hibernated(s) >= 1, "the sandbox counts as hibernated")
    await c.send({"event": "stdin", "data": "wor"})
    await c.send({"event": "stdin", "data": "ld\nquit\n"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 30)
    done = [f for f in got if f.get("status") == "SANDBOX_EXECUTION_DONE"][-1]
    check_eq(done.get("exit_code"), 0, "exit code after the wake")
    check_eq(texts(c.frames, "stdout"), "ready\n1> HELLO\n2> WORLD\nbye after 2\n", "the process's output")
    check_eq(images(s), [], "the hibernation image left after the wake")
    # hibernated again while waiting, then killed: it ends as a parked process does
    await c.send(c_program("srv_lines"))
    await c.until(lambda f: texts(c.frames, "stdout").count("ready") == 2, 20)
    await hibernation_of(s, sess.id)
    await c.send({"action": "kill_process"})
    got = await c.until(lambda f: f.get("status") == "SANDBOX_EXECUTION_DONE" and
                        statuses(c.frames).count("SANDBOX_EXECUTION_DONE") == 2, 30)
    last = [f for f in c.frames if f.get("status") == "SANDBOX_EXECUTION_DONE"][-1]
    check_eq(last.get("error", {}).get("code"), "KILLED", "a hibernated process killed")


@test(90)
async def checkpoint_of_hibernated_sandbox(ri):
    s = Server(ri, args=["--memory-budget", str(BUDGET)])
    sessions = await crowd(s, 8, enable_checkpoint=True)
    sess, want = await hibernated_one(s, sessions)
    await checkpoint(sess.client)
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "sum"), want, "state of a sandbox checkpointed while hibernated")


@test(90)
async def kill_of_hibernated_sandbox(ri):
    s = Server(ri, args=["--memory-budget", str(BUDGET)])
    sessions = await crowd(s, 8)
    sess, _ = await hibernated_one(s, sessions)
    await sess.client.send({"action": "kill_sandbox"})
    got = await sess.client.until_closed(5)
    check_eq(statuses(got), ["SANDBOX_KILLING", "SANDBOX_DELETING", "SANDBOX_DELETED",
                             "SANDBOX_KILLED"], "kill_sandbox of a hibernated sandbox")
    check(not any(sess.id in n for n in images(s)), "its hibernation image was left behind")
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(statuses(got)[-1:], ["SANDBOX_NOT_FOUND"], "attach after the kill")


@test(90)
async def idle_timeout_of_hibernated_sandbox(ri):
    s = Server(ri, args=["--memory-budget", str(BUDGET)])
    sessions = await crowd(s, 8, idle_timeout=3, enable_checkpoint=True,
                           enable_idle_timeout_auto_checkpoint=True)
    # All go idle: each is checkpointed (hibernated or not) and leaves memory.
    for sess, _ in sessions:
        got = await sess.client.until_closed(15)
        check_eq(statuses(got), CHECKPOINT_STATUSES, f"idle checkpoint of {sess.id}")
    check_eq(images(s), [], "hibernation images left after the idle checkpoints")
    for sess, want in sessions:
        c = await attach_running(s, sess.id, sess.token, restoring=True)
        check_eq(await value_of(c, "sum"), want, f"state of {sess.id} after idle checkpoint")
        await c.close()


@test(90)
async def idle_delete_of_hibernated_sandbox(ri):
    s = Server(ri, args=["--memory-budget", str(BUDGET)])
    sessions = await crowd(s, 8, idle_timeout=3)
    for sess, _ in sessions:
        got = await sess.client.until_closed(15)
        check_eq(statuses(got), ["SANDBOX_DELETING", "SANDBOX_DELETED"], f"idle delete of {sess.id}")
    check_eq(images(s), [], "hibernation images left after the idle deletes")
    check_eq(hibernated(s), 0.0, "ri_server_sandboxes_hibernated after the idle deletes")


@test(120)
async def many_sandboxes_executing_at_once(ri):
    s = Server(ri)
    sessions = [await create(s, module="counter") for _ in range(24)]

    async def count(sess):
        for i in range(40):
            check_eq(await value_of(sess.client, "increment"), i + 1, f"{sess.id} increment")
        return await value_of(sess.client, "get")
    values = await asyncio.gather(*[count(x) for x in sessions])
    check_eq(values, [40] * 24, "counters after concurrent executions")


@test(60)
async def max_sandboxes(ri):
    s = Server(ri, args=["--max-sandboxes", "2"])
    a = await create(s)
    await create(s)
    c = await Client.connect(s.url + "/create")
    await c.send(init_message())
    got = await c.until_closed(10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_CREATING", "SANDBOX_CREATION_ERROR", "error"], "third sandbox")
    check_eq(got[-1].get("message"), "Too many sandboxes on this server.", "error message")
    check_eq(c.close_code, 4000, "close code")
    await a.client.send({"action": "kill_sandbox"})
    await a.client.until_closed(5)
    await create(s)  # room again


if __name__ == "__main__":
    main()
