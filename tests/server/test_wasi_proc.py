"""WASI processes in server sandboxes: C programs built with wasi-libc (tests/c-wasi/srv_*.c)
run as `language: wasm` executions; their files persist across executions, checkpoints on
another server, snapshots; a live checkpoint moves a paused process (by time slices or
waiting for stdin) to another server, which finishes it with the same output. Hostile:
exit code 3, a trap, a program that never reads stdin, a live checkpoint of an idle
sandbox."""
import asyncio
import base64
import os
import signal

import harness
from harness import (Client, Server, Skip, attach_running, check, check_eq, checkpoint, create, main,
                     ok_action, statuses, tempdir, test, texts)

CWASI = os.environ.get("RI_C_WASI_DIR", "")


def prog(name):
    path = os.path.join(CWASI, name + ".wasm")
    if not CWASI or not os.path.exists(path):
        raise Skip(f"{path} not built (clang-19 and wasi-libc needed; RI_C_WASI_DIR)")
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


def exec_msg(name):
    return {"language": "wasm", "code": prog(name)}


async def run(client, name, timeout=60.0):
    await client.send(exec_msg(name))
    return await client.until_status("SANDBOX_EXECUTION_DONE", timeout)


def done_of(frames):
    return [f for f in frames if f.get("status") == "SANDBOX_EXECUTION_DONE"][-1]


def pair(ri, args=()):
    vol = tempdir()
    return Server(ri, ckpt=vol, args=args), Server(ri, ckpt=vol, args=args)


PERSIST_1 = "run 1\n  count\n  run-1.txt\nfirst: run 1 was here\n"
PERSIST_2 = "run 2\n  count\n  run-1.txt\n  run-2.txt\nfirst: run 1 was here\n"
PERSIST_3 = "run 3\n  count\n  run-1.txt\n  run-2.txt\n  run-3.txt\nfirst: run 1 was here\n"


@test(60)
async def files_persist_between_executions(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run(sess.client, "srv_persist")
    check_eq(texts(got, "stdout"), PERSIST_1, "first run's output")
    check_eq(done_of(got).get("exit_code"), 0, "exit code")
    check_eq(statuses(got)[0], "SANDBOX_EXECUTION_RUNNING", "first status")
    got = await run(sess.client, "srv_persist")
    check_eq(texts(got, "stdout"), PERSIST_2, "second run reads the first run's files")


@test(90)
async def files_survive_checkpoint_and_attach_on_another_server(ri):
    a, b = pair(ri)
    sess = await create(a, enable_checkpoint=True)
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_1, "run on A")
    await checkpoint(sess.client)
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    check_eq(texts(await run(c, "srv_persist"), "stdout"), PERSIST_2, "run on B sees A's files")


@test(90)
async def files_in_snapshots(ri):
    s = Server(ri)
    sess = await create(s, enable_checkpoint=True)
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_1, "run 1")
    await ok_action(sess.client, "named_save", name="one")
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_2, "run 2")
    await ok_action(sess.client, "named_restore", name="one")
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_2,
             "after named_restore: the files of run 1 only")
    # snapshot_filesystem + create from it
    await sess.client.send({"action": "snapshot_filesystem", "name": "fs-two"})
    await sess.client.until_status("SANDBOX_FILESYSTEM_SNAPSHOT_CREATED", 20)
    other = await create(s, filesystem_snapshot_name="fs-two")
    check_eq(texts(await run(other.client, "srv_persist"), "stdout"), PERSIST_3,
             "a sandbox made from the filesystem snapshot has its files")
    # snapshot + snapshot_branch: a new sandbox with the files
    res = await ok_action(sess.client, "snapshot")
    br = await ok_action(sess.client, "snapshot_branch", ref=res["ref"])
    c = await attach_running(s, br["sandbox_id"], br["sandbox_token"])
    check_eq(texts(await run(c, "srv_persist"), "stdout"), PERSIST_3, "the branch has the files")


@test(60)
async def stdin_lines(ri):
    s = Server(ri)
    sess = await create(s)
    await sess.client.send(exec_msg("srv_lines"))
    await sess.client.until(lambda f: f.get("event") == "stdout" and "ready" in f.get("data", ""), 20)
    await sess.client.send({"event": "stdin", "data": "hello\nwor"})
    await sess.client.send({"event": "stdin", "data": "ld\nquit\n"})
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 20)
    check_eq(texts(sess.client.frames, "stdout"), "ready\n1> HELLO\n2> WORLD\nbye after 2\n", "echoed lines")
    check_eq(done_of(got).get("exit_code"), 0, "exit code")


@test(60)
async def exit_code_3_and_trap(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run(sess.client, "srv_exit3")
    check_eq(texts(got, "stdout"), "about to fail\n", "stdout before the exit")
    err = texts(got, "stderr")
    check(err.startswith("failing with 3\n") and "EXIT" in err, f"stderr: {err!r}")
    done = done_of(got)
    check_eq(done.get("exit_code"), 3, "the process's exit code")
    check_eq(done.get("error", {}).get("code"), "EXIT", "error code")
    got = await run(sess.client, "srv_trap")
    check_eq(texts(got, "stdout"), "before the trap\n", "stdout before the trap")
    done = done_of(got)
    check_eq(done.get("exit_code"), 1, "a trap's exit code")
    check_eq(done.get("error", {}).get("code"), "WASM_TRAP", "error code")
    # the sandbox still works
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_1, "after failures")


@test(60)
async def never_reads_stdin_and_kill(ri):
    s = Server(ri)
    sess = await create(s)
    await sess.client.send(exec_msg("srv_spin"))
    await sess.client.until(lambda f: f.get("event") == "stdout", 20)
    big = "x" * 65536
    for _ in range(40):  # more than the 1 MiB the server keeps for a process not reading
        await sess.client.send({"event": "stdin", "data": big})
    await sess.client.until(lambda f: f.get("event") == "error" and "stdin buffer full" in f.get("message", ""),
                            30, "'stdin buffer full' for 2.5 MiB of unread stdin")
    await sess.client.send({"action": "kill_process"})
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 20)
    check_eq(done_of(got).get("error", {}).get("code"), "KILLED", "killed")


@test(60)
async def timeout_while_waiting_for_stdin(ri):
    s = Server(ri)
    sess = await create(s, sandbox={"max_execution_ms": 1500})
    got = await run(sess.client, "srv_lines", timeout=20)
    check_eq(done_of(got).get("error", {}).get("code"), "TIMEOUT", "waiting for stdin counts")


async def uninterrupted(ri, name, stdin_line):
    s = Server(ri)
    sess = await create(s)
    await sess.client.send(exec_msg(name))
    if stdin_line is not None:
        await sess.client.send({"event": "stdin", "data": stdin_line})
    await sess.client.until_status("SANDBOX_EXECUTION_DONE", 120)
    s.stop()
    return texts(sess.client.frames, "stdout"), texts(sess.client.frames, "stderr")


async def live_then_finish(ri, name, when, stdin_line, args=()):
    """Starts `name` on A, live-checkpoints it once when(frames) holds, attaches on B,
    reconnects, sends stdin_line, and returns all stdout and stderr from both servers."""
    a, b = pair(ri, args)
    sess = await create(a, enable_checkpoint=True)
    await sess.client.send(exec_msg(name))
    await sess.client.until(lambda f: when(sess.client.frames), 60, "the moment to checkpoint")
    await sess.client.send({"action": "checkpoint", "live": True})
    got = await sess.client.until_closed(30)
    check_eq([x for x in statuses(got) if x != "SANDBOX_EXECUTION_RUNNING"], harness.CHECKPOINT_STATUSES,
             "live checkpoint statuses")
    check("SANDBOX_EXECUTION_DONE" not in statuses(sess.client.frames), "the process ended on A")
    check_eq(sess.client.close_code, 1000, "close code")
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    await c.send({"action": "reconnect"})
    if stdin_line is not None:
        await c.send({"event": "stdin", "data": stdin_line})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 120)
    check_eq(done_of(got).get("exit_code"), 0, "exit code on B")
    frames = sess.client.frames + c.frames
    return texts(frames, "stdout"), texts(frames, "stderr"), texts(sess.client.frames, "stdout")


def same_output(seen, want, what):
    """seen == want (stdout, stderr), else where they part (not the whole text)."""
    for k, name in ((0, "stdout"), (1, "stderr")):
        a, b = seen[k], want[k]
        if a != b:
            i = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
            raise harness.TestFailure(f"{what}: {name} differs at byte {i} (lengths {len(a)} and {len(b)}): "
                                      f"seen {a[max(0, i - 60):i + 60]!r}, want {b[max(0, i - 60):i + 60]!r}")


@test(240)
async def live_checkpoint_mid_count_finishes_on_b(ri):
    want = await uninterrupted(ri, "srv_count", "go\n")
    check(want[0].count("\n") == 501, f"uninterrupted run: {want[0][-200:]!r}")
    # --slice-ms 1 with another execution waiting is not needed: the live checkpoint
    # itself interrupts the running slice
    seen = await live_then_finish(ri, "srv_count",
                                  lambda fr: texts(fr, "stdout").count("\n") >= 30, "go\n")
    check("line 399 " not in seen[2], "the process was not paused mid-way on A (it reached its read)")
    same_output(seen[:2], want, "output across the live checkpoint")


@test(240)
async def live_checkpoint_waiting_on_stdin_finishes_on_b(ri):
    want = await uninterrupted(ri, "srv_count", "go\n")
    seen = await live_then_finish(ri, "srv_count",
                                  lambda fr: "line 399 " in texts(fr, "stdout"), "go\n")
    same_output(seen[:2], want, "output across the live checkpoint while waiting for stdin")


@test(120)
async def live_checkpoint_of_lines_keeps_unread_stdin(ri):
    a, b = pair(ri)
    sess = await create(a, enable_checkpoint=True)
    await sess.client.send(exec_msg("srv_lines"))
    await sess.client.until(lambda f: "ready" in f.get("data", ""), 20)
    await sess.client.send({"event": "stdin", "data": "one\n"})
    await sess.client.until(lambda f: "ONE" in f.get("data", ""), 20)
    await sess.client.send({"action": "checkpoint", "live": True})
    await sess.client.until_closed(30)
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    await c.send({"action": "reconnect"})
    await c.send({"event": "stdin", "data": "two\nquit\n"})
    await c.until_status("SANDBOX_EXECUTION_DONE", 30)
    check_eq(texts(sess.client.frames + c.frames, "stdout"), "ready\n1> ONE\n2> TWO\nbye after 2\n", "lines")
    # files and the sandbox go on after the process
    check_eq(texts(await run(c, "srv_persist"), "stdout"), PERSIST_1, "a run after the restored process")


@test(240)
async def time_slices_share_one_worker_between_processes(ri):
    want = await uninterrupted(ri, "srv_count", "go\n")
    # one worker (plus the control thread): a process that never stops would hold it for
    # ever; with time slices the other one runs to its end beside it
    s = Server(ri, args=("--workers", "1", "--slice-ms", "5"))
    spin, count = await create(s, sandbox={"max_gas": 100_000_000_000}), await create(s)
    await spin.client.send(exec_msg("srv_spin"))
    await spin.client.until(lambda f: f.get("event") == "stdout", 60)
    await count.client.send(exec_msg("srv_count"))
    await count.client.send({"event": "stdin", "data": "go\n"})
    await count.client.until_status("SANDBOX_EXECUTION_DONE", 60)  # the spinner has gas for ~100 s
    fr = count.client.frames
    same_output((texts(fr, "stdout"), texts(fr, "stderr")), want, "a sliced process's output")
    await spin.client.send({"action": "kill_process"})
    got = await spin.client.until_status("SANDBOX_EXECUTION_DONE", 30)
    check_eq(done_of(got).get("error", {}).get("code"), "KILLED", "the spinning process killed")


@test(60)
async def execute_action_reading_stdin_does_not_block_the_sandbox(ri):
    s = Server(ri)
    sess = await create(s)
    await harness.load(sess.client, "wasi_read_export")
    # an action has no stdin to wait for: the read fails with EAGAIN (6) instead of pausing
    check_eq(await harness.value_of(sess.client, "readit"), 6, "a read of stdin in an action")
    check_eq(await harness.value_of(sess.client, "one"), 1, "the next action runs")
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_1, "and the next execution")


@test(120)
async def sigterm_saves_a_waiting_process(ri):
    vol = tempdir()
    a = Server(ri, ckpt=vol)
    sess = await create(a, enable_checkpoint=True)
    await sess.client.send(exec_msg("srv_lines"))
    await sess.client.until(lambda f: "ready" in f.get("data", ""), 20)
    await sess.client.send({"event": "stdin", "data": "one\n"})
    await sess.client.until(lambda f: "ONE" in f.get("data", ""), 20)
    a.signal(signal.SIGTERM)
    got = await sess.client.until_closed(30)
    check_eq(a.wait(30), 0, "exit code of the stopped server")
    check("SANDBOX_EXECUTION_DONE" not in statuses(got), f"the process was ended: {statuses(got)}")
    check_eq(statuses(got)[-1:], ["SANDBOX_CHECKPOINTED"], "the last status")
    b = Server(ri, ckpt=vol)
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    await c.send({"action": "reconnect"})
    await c.send({"event": "stdin", "data": "two\nquit\n"})
    await c.until_status("SANDBOX_EXECUTION_DONE", 30)
    check_eq(texts(sess.client.frames + c.frames, "stdout"), "ready\n1> ONE\n2> TWO\nbye after 2\n",
             "the process went on after the restart")


@test(120)
async def files_survive_hibernation(ri):
    s = Server(ri, args=["--memory-budget", str(1 << 20)])
    sessions = []
    for _ in range(10):
        sess = await create(s)
        check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_1, "first run")
        sessions.append(sess)
    hib = os.path.join(s.ckpt, "_hibernate")
    asleep = []
    for _ in range(80):  # the memory budget is checked on the server's tick
        names = [f for _, _, fs in os.walk(hib) for f in fs if f.endswith(".img")] if os.path.isdir(hib) else []
        asleep = [x for x in sessions if any(x.id in n for n in names)]
        if asleep:
            break
        await asyncio.sleep(0.25)
    check(asleep, "no sandbox hibernated under a 1 MiB budget")
    check_eq(texts(await run(asleep[0].client, "srv_persist"), "stdout"), PERSIST_2,
             "a hibernated sandbox woke with its files")


OWNER = ["SANDBOX_LOCK_RELEASE_REQUESTED", "SANDBOX_CHECKPOINTING", "SANDBOX_DELETING",
         "SANDBOX_LOCK_RELEASING", "SANDBOX_LOCK_RELEASED", "SANDBOX_DELETED", "SANDBOX_CHECKPOINTED"]


@test(120)
async def handoff_moves_a_waiting_process(ri):
    a, b = pair(ri)
    sess = await create(a, enable_checkpoint=True, enable_sandbox_handoff=True)
    await sess.client.send(exec_msg("srv_lines"))
    await sess.client.until(lambda f: "ready" in f.get("data", ""), 20)
    await sess.client.send({"event": "stdin", "data": "one\n"})
    await sess.client.until(lambda f: "ONE" in f.get("data", ""), 20)
    c = await harness.attach(b, sess.id, sess.token)
    await c.until_status("SANDBOX_RUNNING", 30)
    old = await sess.client.until_closed(20)
    check_eq([x for x in statuses(old) if x != "SANDBOX_EXECUTION_RUNNING"], OWNER,
             "the owner's socket: the process is checkpointed, not killed")
    await c.send({"action": "reconnect"})
    await c.send({"event": "stdin", "data": "two\nquit\n"})
    await c.until_status("SANDBOX_EXECUTION_DONE", 30)
    check_eq(texts(sess.client.frames + c.frames, "stdout"), "ready\n1> ONE\n2> TWO\nbye after 2\n",
             "the process went on on B")


@test(120)
async def detached_process_is_checkpointed_not_ended(ri):
    s = Server(ri, args=("--detached-grace-seconds", "1"))
    sess = await create(s, enable_checkpoint=True)
    await sess.client.send(exec_msg("srv_lines"))
    await sess.client.until(lambda f: texts(sess.client.frames, "stdout") == "ready\n", 20)
    await sess.client.close()
    for _ in range(100):  # the grace period, then the checkpoint: the sandbox leaves memory
        await asyncio.sleep(0.1)
        if '"detached process checkpointed"' in s.stderr() and '"checkpointed"' in s.stderr():
            break
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    await c.send({"action": "reconnect"})
    await c.send({"event": "stdin", "data": "x\nquit\n"})
    await c.until_status("SANDBOX_EXECUTION_DONE", 30)
    check_eq(texts(c.frames, "stdout"), "1> X\nbye after 1\n", "the process went on after the restore")


@test(60)
async def live_checkpoint_of_idle_sandbox_is_a_checkpoint(ri):
    s = Server(ri)
    sess = await create(s, enable_checkpoint=True)
    check_eq(texts(await run(sess.client, "srv_persist"), "stdout"), PERSIST_1, "run")
    await sess.client.send({"action": "checkpoint", "live": True})
    got = await sess.client.until_closed(20)
    check_eq(statuses(got), harness.CHECKPOINT_STATUSES, "statuses")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(texts(await run(c, "srv_persist"), "stdout"), PERSIST_2, "files after the checkpoint")


@test(60)
async def checkpoint_without_live_during_process_is_refused(ri):
    s = Server(ri)
    sess = await create(s, enable_checkpoint=True)
    await sess.client.send(exec_msg("srv_lines"))
    await sess.client.until(lambda f: "ready" in f.get("data", ""), 20)
    await sess.client.send({"action": "checkpoint"})
    got = await sess.client.until_event("error", 10)
    check_eq(statuses(got)[-2:], ["SANDBOX_CHECKPOINTING", "SANDBOX_EXECUTION_IN_PROGRESS_ERROR"], "statuses")
    check("in progress" in got[-1].get("message", ""), f"message: {got[-1]}")
    await sess.client.send({"event": "stdin", "data": "quit\n"})
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 20)
    check_eq(done_of(got).get("exit_code"), 0, "the process went on")


if __name__ == "__main__":
    main()
