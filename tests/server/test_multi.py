"""Two servers on one volume: checkpoint on A and attach on B; two attaches at once (one
wins, nothing lost); handoff of a live sandbox; SIGKILL during a checkpoint leaves the
previous image restorable; SIGTERM checkpoints live sandboxes; hibernation under a small
--memory-budget."""
import asyncio
import os
import signal

from harness import (Server, tempdir, attach, attach_running, b64, check, check_eq, checkpoint, create,
                     main, statuses, test, texts, value_of)

# The original's order (cloud-run-sandbox: src/sandbox/manager.py _on_release_requested,
# checkpoint_sandbox, delete_sandbox; handle.py attach_persistent, release_lock; its
# examples/js/output/handoff.ts.output). The asking side: RESTORING, then the lock.
ASKER = ["SANDBOX_RESTORING", "SANDBOX_LOCK_ACQUIRING", "SANDBOX_LOCK_ACQUIRED", "SANDBOX_RUNNING"]
# The owner's side: the request, the checkpoint, the deletion with the lock's release in it.
OWNER = ["SANDBOX_LOCK_RELEASE_REQUESTED", "SANDBOX_CHECKPOINTING", "SANDBOX_DELETING",
         "SANDBOX_LOCK_RELEASING", "SANDBOX_LOCK_RELEASED", "SANDBOX_DELETED", "SANDBOX_CHECKPOINTED"]


def pair(ri, args_a=(), args_b=()):
    vol = tempdir()
    a = Server(ri, ckpt=vol, args=args_a)
    b = Server(ri, ckpt=vol, args=args_b)
    a.dir_extra = vol
    return a, b, vol


@test(60)
async def checkpoint_on_a_attach_on_b(ri):
    a, b, vol = pair(ri)
    sess = await create(a, module="counter", enable_checkpoint=True)
    for want in (1, 2, 3):
        check_eq(await value_of(sess.client, "increment"), want, "increment on A")
    await checkpoint(sess.client)
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "increment"), 4, "increment on B continues A's state")
    await checkpoint(c)
    c = await attach_running(a, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 4, "back on A: B's state")


@test(60)
async def concurrent_attach_one_wins(ri):
    a, b, vol = pair(ri)
    for rnd in range(3):
        sess = await create(a, module="counter", enable_checkpoint=True)
        await value_of(sess.client, "add", [10])
        await checkpoint(sess.client)
        ca, cb = await asyncio.gather(attach(a, sess.id, sess.token), attach(b, sess.id, sess.token))

        async def outcome(c):
            got = await c.until(lambda f: f.get("status") == "SANDBOX_RUNNING" or
                                f.get("event") == "error" or
                                f.get("status") in ("SANDBOX_IN_USE", "SANDBOX_NOT_FOUND"), 20)
            if got[-1].get("status") != "SANDBOX_RUNNING":
                await c.until_closed(10)
            return statuses(got)
        sa, sb = await asyncio.gather(outcome(ca), outcome(cb))
        wins = [c for c, st in ((ca, sa), (cb, sb)) if st[-1:] == ["SANDBOX_RUNNING"]]
        check_eq(len(wins), 1, f"winners of two attaches at once (round {rnd}): A {sa}, B {sb}")
        loser = cb if wins[0] is ca else ca
        lost = sb if wins[0] is ca else sa
        check(lost[-1] == "SANDBOX_IN_USE", f"the loser saw {lost}")
        check_eq(loser.close_code, 1011, "close code of the loser")
        w = wins[0]
        check_eq(await value_of(w, "increment"), 11, "the winner has the state")
        await checkpoint(w)
        # Nothing lost: the other server now sees the winner's increment.
        other = b if w is ca else a
        c = await attach_running(other, sess.id, sess.token, restoring=True)
        check_eq(await value_of(c, "get"), 11, "state after the winner's checkpoint")
        await c.send({"action": "kill_sandbox"})
        await c.until_closed(10)


@test(60)
async def same_server_concurrent_attach(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await checkpoint(sess.client)
    cs = await asyncio.gather(*[attach(s, sess.id, sess.token) for _ in range(4)])
    results = []
    for c in cs:
        got = await c.until(lambda f: f.get("status") in ("SANDBOX_RUNNING", "SANDBOX_IN_USE"), 20)
        results.append(statuses(got)[-1])
    check_eq(sorted(results), ["SANDBOX_IN_USE"] * 3 + ["SANDBOX_RUNNING"], "four attaches at once")


@test(60)
async def attach_on_b_while_live_on_a_without_handoff(ri):
    a, b, vol = pair(ri)
    sess = await create(a, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [5])
    await sess.client.close()  # live on A, detached
    c = await attach(b, sess.id, sess.token)
    got = await c.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_IN_USE"], "attach on B to a sandbox live on A")
    check_eq(c.close_code, 1011, "close code")
    c = await attach_running(a, sess.id, sess.token, restoring=False)
    check_eq(await value_of(c, "get"), 5, "still live on A")


@test(60)
async def handoff_detached(ri):
    a, b, vol = pair(ri)
    sess = await create(a, module="counter", enable_checkpoint=True, enable_sandbox_handoff=True)
    await value_of(sess.client, "add", [5])
    await sess.client.close()
    c = await attach(b, sess.id, sess.token)
    got = await c.until_status("SANDBOX_RUNNING", 30)
    check_eq(statuses(got), ASKER, "handoff statuses")
    check_eq(await value_of(c, "increment"), 6, "state moved from A to B")
    # A no longer has it live: attaching on A restores B's checkpoint (the lock is free).
    await checkpoint(c, handoff=True)
    c = await attach_running(a, sess.id, sess.token, restoring=True, handoff=True)
    check_eq(await value_of(c, "get"), 6, "back on A")


@test(60)
async def handoff_attached(ri):
    a, b, vol = pair(ri)
    sess = await create(a, module="counter", enable_checkpoint=True, enable_sandbox_handoff=True)
    await value_of(sess.client, "add", [8])
    c = await attach(b, sess.id, sess.token)
    got = await c.until_status("SANDBOX_RUNNING", 30)
    check_eq(statuses(got), ASKER, "handoff statuses")
    old = await sess.client.until_closed(10)
    check_eq(statuses(old), OWNER, "the owner's socket during the handoff")
    check_eq(sess.client.close_code, 1000, "close code of A's socket after the handoff")
    check_eq(await value_of(c, "increment"), 9, "state moved from A to B")


@test(60)
async def handoff_during_execution(ri):
    a, b, vol = pair(ri)
    sess = await create(a, enable_checkpoint=True, enable_sandbox_handoff=True)
    await sess.client.send({"language": "wasm", "code": b64("echo")})
    await sess.client.until(lambda f: f.get("event") == "stdout", 10, "ready")
    c = await attach(b, sess.id, sess.token)
    got = await c.until_status("SANDBOX_RUNNING", 30)
    check_eq(statuses(got), ASKER, "handoff statuses")
    old = await sess.client.until_closed(10)
    check_eq(statuses(old), OWNER[:2] + ["SANDBOX_EXECUTION_FORCE_KILLED", "SANDBOX_EXECUTION_DONE"] +
             OWNER[2:], "the owner's socket during a handoff with a running execution")
    check_eq(sess.client.close_code, 1000, "close code of A's socket after the handoff")
    # B's copy works (the running execution was not part of the image).
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready on B")
    await c.send({"event": "stdin", "data": "on B"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:on B", "execution on B after the handoff")


async def big_session(server, pages, seed, enable_checkpoint=True):
    sess = await create(server, module="big", enable_checkpoint=enable_checkpoint,
                        sandbox={"max_memory_bytes": 16 << 20})
    check_eq(await value_of(sess.client, "setup", [pages, seed]), pages, "setup pages")
    return sess


@test(120)
async def sigkill_during_checkpoint_keeps_previous_image(ri):
    vol = tempdir()
    delays = [0.0, 0.0005, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.3]
    outcomes = []
    for d in delays:
        a = Server(ri, ckpt=vol, args=["--lease-seconds", "1"])  # its lease outlives it by 1 s
        sess = await big_session(a, 256, 1)
        sum1 = await value_of(sess.client, "sum")
        await checkpoint(sess.client)
        c = await attach_running(a, sess.id, sess.token, restoring=True)
        check_eq(await value_of(c, "sum"), sum1, "sum after the first restore")
        await value_of(c, "setup", [256, 2])
        sum2 = await value_of(c, "sum")
        check(sum2 != sum1, "the two states have the same checksum")
        await c.send({"action": "checkpoint"})
        await c.until_status("SANDBOX_CHECKPOINTING", 10)
        if d:
            await asyncio.sleep(d)
        a.signal(signal.SIGKILL)
        a.wait()
        b = Server(ri, ckpt=vol, args=["--lease-seconds", "1"])
        await asyncio.sleep(1.2)  # A's lease (if it had one) expires
        cb = await attach(b, sess.id, sess.token)
        got = await cb.until(lambda f: f.get("status") in ("SANDBOX_RUNNING",) or
                             f.get("event") == "error" or f.get("status") == "SANDBOX_NOT_FOUND"
                             or f.get("status") == "SANDBOX_IN_USE", 30)
        check_eq(statuses(got)[-1:], ["SANDBOX_RUNNING"], f"restore after SIGKILL at +{d * 1000} ms")
        s = await value_of(cb, "sum")
        check(s in (sum1, sum2), f"restored a mixed state after SIGKILL at +{d * 1000} ms")
        outcomes.append("new" if s == sum2 else "old")
        await cb.send({"action": "kill_sandbox"})
        await cb.until_closed(10)
        b.stop()
    print(f"     images restored after SIGKILL at {delays}: {outcomes}")


@test(60)
async def sigterm_checkpoints_live_sandboxes(ri):
    a, b, vol = pair(ri)
    s1 = await create(a, module="counter", enable_checkpoint=True)
    await value_of(s1.client, "add", [7])
    await s1.client.close()  # live, detached
    s2 = await create(a, module="counter", enable_checkpoint=True)
    await value_of(s2.client, "add", [9])  # live, attached
    s3 = await create(a, module="counter")  # no checkpointing: just goes
    a.signal(signal.SIGTERM)
    rc = await asyncio.get_running_loop().run_in_executor(None, a.wait, 20)
    check_eq(rc, 0, "exit status after SIGTERM")
    got = await s2.client.until_closed(5)
    check_eq(statuses(got), ["SANDBOX_CHECKPOINTED"], "attached socket at SIGTERM")
    check_eq(s2.client.close_code, 1001, "close code at SIGTERM (going away)")
    for sess, want in ((s1, 7), (s2, 9)):
        check(os.path.isfile(os.path.join(vol, sess.id, "checkpoints", "latest")),
              f"no image of {sess.id} after SIGTERM")
        c = await attach_running(b, sess.id, sess.token, restoring=True)
        check_eq(await value_of(c, "get"), want, "state restored on B after SIGTERM of A")
    check(not os.path.exists(os.path.join(vol, s3.id, "checkpoints")), "checkpointed without enable")


@test(90)
async def hibernation_under_memory_budget(ri):
    n, pages = 8, 16  # 8 sandboxes of 1 MiB under a 3 MiB budget
    s = Server(ri, args=["--memory-budget", str(3 << 20)])
    sessions = []
    for i in range(n):
        sess = await big_session(s, pages, 100 + i, enable_checkpoint=False)
        sessions.append((sess, await value_of(sess.client, "sum")))
        await asyncio.sleep(0.05)
    await asyncio.sleep(1.0)
    code, body = s.http_get("/metrics")
    hib = [l for l in body.splitlines() if l.startswith("ri_server_sandboxes_hibernated ")]
    check(hib and float(hib[0].split()[1]) >= 1, f"nothing hibernated: {hib}")
    mem = [l for l in body.splitlines() if l.startswith("ri_server_sandbox_memory_bytes ")]
    check(mem and float(mem[0].split()[1]) <= (3 << 20) + (1 << 20),
          f"live sandbox memory above the budget: {mem}")
    hib_dir = os.path.join(s.ckpt, "_hibernate")
    on_disk = [f for d, _, fs in os.walk(hib_dir) for f in fs if f.endswith(".img")]
    check(len(on_disk) >= 1, f"no hibernation image under {hib_dir}")
    check(not [d for d in os.listdir(s.ckpt) if d.startswith("sandbox-")],
          "sandboxes without enable_checkpoint got a checkpoint directory")
    # Each comes back transparently on its next message, with its state.
    for sess, want in sessions:
        check(sess.client.close_code is None, "a hibernated sandbox's socket was closed")
        check_eq(await value_of(sess.client, "sum"), want, f"state of {sess.id} after hibernation")
    # Detached and hibernated: attach shows only RUNNING.
    sess, want = sessions[0]
    await sess.client.close()
    for other, _ in sessions[1:]:
        await value_of(other.client, "sum")
    c = await attach(s, sess.id, sess.token)
    got = await c.until_status("SANDBOX_RUNNING", 20)
    check_eq(statuses(got), ["SANDBOX_RUNNING"], "attach to a hibernated sandbox")
    check_eq(await value_of(c, "sum"), want, "state after attach to a hibernated sandbox")


@test(60)
async def stale_owner_loses_lease(ri):
    a, b, vol = pair(ri, ["--lease-seconds", "1"], ["--lease-seconds", "1"])
    sess = await create(a, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [4])
    await checkpoint(sess.client)
    c = await attach_running(a, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "increment"), 5, "live on A (not checkpointed since)")
    a.signal(signal.SIGSTOP)  # A freezes: its lease runs out
    try:
        await asyncio.sleep(2.0)
        cb = await attach_running(b, sess.id, sess.token, restoring=True)
        check_eq(await value_of(cb, "get"), 4, "B took the sandbox from its last checkpoint")
    finally:
        a.signal(signal.SIGCONT)
    # A wakes up, finds its lease taken over, and drops its copy without checkpointing.
    got = await c.until_closed(10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_LOCK_RENEWAL_ERROR", "error"], "A's socket after losing its lease")
    check_eq(c.close_code, 4000, "close code")
    check_eq(await value_of(cb, "increment"), 5, "B goes on")
    await checkpoint(cb)
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 5, "A's stale copy did not overwrite B's checkpoint")


if __name__ == "__main__":
    main()
