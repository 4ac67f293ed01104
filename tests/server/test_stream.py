"""Output of executions as the original's clients expect it: a reconnect resumes where the
previous socket's writes ended (no output twice, none lost), output goes out in events of at
most 1,024 bytes (never splitting a UTF-8 character) that a client with a 1 MiB message limit
reads, and a program that fails after it started reports its error on stderr, then
SANDBOX_EXECUTION_DONE (with exit_code and error on the DONE event)."""
import asyncio

from harness import (Client, Server, attach, b64, check, check_eq, create, main, run_wasm, statuses,
                     test, texts)

# "a€😀é": 10 bytes of UTF-8 (bigwrite.wat)
PATTERN = "a\u20ac\U0001F600\u00e9"


class Stream:
    """What stream.wat writes for each command (stdout, stderr), to compare byte for byte."""

    def __init__(self):
        self.line = 0
        self.out = ""
        self.err = ""

    def _lines(self, k):
        for _ in range(k):
            self.out += f"line {chr(65 + self.line % 26)}\n"
            self.line += 1

    def cmd(self, c):
        if c == "l":
            self._lines(3)
            self.err += "tick\n"
        elif c in "se":
            self.out += "ack\n"
            self._lines(5)
            if c == "e":
                self.out += "bye\n"

    def eof(self):
        self.out += "bye\n"


async def start_stream(c):
    await c.send({"language": "wasm", "code": b64("stream")})
    return await c.until_status("SANDBOX_EXECUTION_RUNNING", 10)


async def stdin(c, data):
    await c.send({"event": "stdin", "data": data})


async def read_upto(c, prog, got, timeout=10, before=()):
    """Frames until the client has all of prog's output so far, with what an earlier socket
    got (before); the program then waits for stdin: nothing is in flight."""
    def have():
        seen = list(before) + got
        return texts(seen, "stdout") == prog.out and texts(seen, "stderr") == prog.err
    deadline = asyncio.get_running_loop().time() + timeout
    while not have():
        left = deadline - asyncio.get_running_loop().time()
        check(left > 0, f"output so far not received: {texts(got, 'stdout')!r} {texts(got, 'stderr')!r}")
        got.append(await c.next(left))
    return got


async def reattach(s, sid, tok, timeout=10):
    """Attaches once the server has seen the previous socket go (until then: SANDBOX_IN_USE)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        c = await attach(s, sid, tok)
        got = await c.until(lambda f: f.get("status") in ("SANDBOX_RUNNING", "SANDBOX_IN_USE"), 10, "attach")
        if got[-1]["status"] == "SANDBOX_RUNNING":
            check_eq(statuses(got), ["SANDBOX_RUNNING"], "attach to the live sandbox")
            return c
        check(asyncio.get_running_loop().time() < deadline, "the server still holds the dropped socket")
        await asyncio.sleep(0.05)


def check_union(before, after, prog, what):
    """The output the client saw over both sockets is the program's output exactly."""
    out = texts(before, "stdout") + texts(after, "stdout")
    err = texts(before, "stderr") + texts(after, "stderr")
    check_eq(out, prog.out, f"{what}: stdout over both sockets (no duplicate, no loss)")
    check_eq(err, prog.err, f"{what}: stderr over both sockets")


def metric(s, name):
    code, body = s.http_get("/metrics")
    for line in body.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


async def until_metric(s, name, value, timeout=30):
    deadline = asyncio.get_running_loop().time() + timeout
    while metric(s, name) != value:
        check(asyncio.get_running_loop().time() < deadline, f"{name} did not become {value}")
        await asyncio.sleep(0.05)


async def finish(c, prog, got):
    """Ends the program (stdin closed) and reads up to its DONE."""
    await c.send({"event": "stdin_close"})
    prog.eof()
    got += await c.until_status("SANDBOX_EXECUTION_DONE", 20)
    return got


@test()
async def reconnect_before_any_output(ri):
    s = Server(ri)
    sess = await create(s)
    c, prog = sess.client, Stream()
    before = await start_stream(c)
    c.ws.transport.abort()  # the network drops while the program waits for stdin
    c2 = await reattach(s, sess.id, sess.token)
    await c2.send({"action": "reconnect"})
    first = await c2.next(5)
    check_eq(first.get("status"), "SANDBOX_EXECUTION_RUNNING", "first frame after reconnect")
    check_eq(await c2.quiet(0.3), [], "frames after the reconnect's RUNNING (nothing was written)")
    after = [first]
    await stdin(c2, "l")
    prog.cmd("l")
    after = await read_upto(c2, prog, after, before=before)
    after = await finish(c2, prog, after)
    check_union(before, after, prog, "dropped before any output")
    check_eq(statuses(after), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE"], "statuses after")


@test()
async def reconnect_mid_stream_sends_only_the_rest(ri):
    s = Server(ri)
    sess = await create(s)
    c, prog = sess.client, Stream()
    before = await start_stream(c)
    for cmd in "ll":  # lines A..F shown by the first client
        await stdin(c, cmd)
        prog.cmd(cmd)
        before = await read_upto(c, prog, before)
    c.ws.transport.abort()
    c2 = await reattach(s, sess.id, sess.token)
    await c2.send({"action": "reconnect"})
    after = [await c2.next(5)]
    check_eq(after[0].get("status"), "SANDBOX_EXECUTION_RUNNING", "first frame after reconnect")
    check_eq(await c2.quiet(0.3), [], "output re-sent after the reconnect")
    # A second reconnect on this socket: RUNNING again, still nothing twice.
    await c2.send({"action": "reconnect"})
    after += await c2.until_status("SANDBOX_EXECUTION_RUNNING", 5)
    check_eq(await c2.quiet(0.3), [], "output re-sent after a second reconnect")
    await stdin(c2, "l")
    prog.cmd("l")
    after = await read_upto(c2, prog, after, before=before)
    after = await finish(c2, prog, after)
    check_union(before, after, prog, "dropped mid-stream")


@test()
async def attach_without_reconnect_gets_live_output(ri):
    s = Server(ri)
    sess = await create(s)
    c, prog = sess.client, Stream()
    before = await start_stream(c)
    await stdin(c, "l")
    prog.cmd("l")
    before = await read_upto(c, prog, before)
    c.ws.transport.abort()
    c2 = await reattach(s, sess.id, sess.token)
    await stdin(c2, "l")  # no reconnect: stdin alone lets the output through, no RUNNING again
    prog.cmd("l")
    after = await read_upto(c2, prog, [], before=before)
    after = await finish(c2, prog, after)
    check_union(before, after, prog, "attached without reconnect")
    check_eq(statuses(after), ["SANDBOX_EXECUTION_DONE"], "statuses after")


async def close_from_server(c):
    """The server closes the socket (a message above --max-message-bytes: 1009) while output
    is being made; the client reads everything the server wrote before it closed."""
    await c.send_may_close("x" * 40000)
    got = await c.until_closed(20)
    check_eq(c.close_code, 1009, "close code of an oversized message")
    return got


@test(60)
async def reconnect_after_output_made_while_detached(ri):
    s = Server(ri, args=["--max-message-bytes", "16384"])
    sess = await create(s)
    c, prog = sess.client, Stream()
    before = await start_stream(c)
    await stdin(c, "l")
    prog.cmd("l")
    before = await read_upto(c, prog, before)
    await stdin(c, "s")  # ack, then five lines over time: most of them after the socket went
    prog.cmd("s")
    before += await close_from_server(c)
    c2 = await reattach(s, sess.id, sess.token)
    await c2.send({"action": "reconnect"})
    after = [await c2.next(5)]
    check_eq(after[0].get("status"), "SANDBOX_EXECUTION_RUNNING", "first frame after reconnect")
    after = await read_upto(c2, prog, after, 20, before=before)
    await stdin(c2, "l")
    prog.cmd("l")
    after = await read_upto(c2, prog, after, before=before)
    after = await finish(c2, prog, after)
    check_union(before, after, prog, "output made while detached")


@test(60)
async def reconnect_after_the_end_sends_rest_then_done(ri):
    s = Server(ri, args=["--max-message-bytes", "16384"])
    sess = await create(s)
    c, prog = sess.client, Stream()
    before = await start_stream(c)
    await stdin(c, "l")
    prog.cmd("l")
    before = await read_upto(c, prog, before)
    await stdin(c, "e")  # ack, five lines over time, bye, the end: mostly while detached
    prog.cmd("e")
    before += await close_from_server(c)
    await until_metric(s, "ri_server_executions_running", 0)  # it ended while detached
    c2 = await reattach(s, sess.id, sess.token)
    await c2.send({"action": "reconnect"})
    after = await c2.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(after[0].get("status"), "SANDBOX_EXECUTION_RUNNING", "first frame after reconnect")
    check_eq(statuses(after), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE"], "statuses")
    check_eq(after[-1].get("exit_code"), 0, "exit_code on DONE")
    check_union(before, after, prog, "ended while detached")
    # Everything delivered now: a further reconnect answers nothing (and does not hang).
    await c2.send({"action": "reconnect"})
    check_eq(await c2.quiet(0.3), [], "frames after a reconnect with nothing left")
    got = await run_wasm(c2, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "a run after the reconnect")


async def big_write(c, n):
    await c.send({"language": "wasm", "code": b64("bigwrite")})
    await c.until_status("SANDBOX_EXECUTION_RUNNING", 10)
    await stdin(c, str(n))
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 120)
    out = [f for f in got if f.get("event") in ("stdout", "stderr")]
    for f in out:
        size = len(f["data"].encode("utf-8"))
        check(0 < size <= 1024, f"an output event of {size} bytes")
        check("\ufffd" not in f["data"], f"a character split across events: {f['data'][:40]!r}...")
    want = PATTERN * (n // 10)
    seen = texts(got, "stdout")
    check_eq(len(seen), len(want), f"characters of a {n}-byte write")
    check(seen == want, f"the content of a {n}-byte write differs")
    check_eq(texts(got, "stderr"), "done\n", "stderr")
    check(len(out) >= n // 1024, f"{len(out)} events for {n} bytes")
    check_eq(statuses(got), ["SANDBOX_EXECUTION_DONE"], "statuses")


@test(120)
async def too_much_output_while_detached_is_cut_with_a_notice(ri):
    """One write of 16 MiB while no client reads: the server keeps the newest 4 MiB, and the
    client that comes back gets one stderr notice of what was dropped in their place."""
    import re
    s = Server(ri, args=["--max-message-bytes", "16384"])
    sess = await create(s, sandbox={"max_memory_bytes": 32 << 20})
    c = sess.client
    n = 16777210
    want = (PATTERN * (n // 10)).encode()
    await c.send({"language": "wasm", "code": b64("bigwrite")})
    before = await c.until_status("SANDBOX_EXECUTION_RUNNING", 10)
    await stdin(c, str(n))
    before += await close_from_server(c)
    # the write is done and the execution waits for a client to read it
    await until_metric(s, "ri_server_executions_paused_for_output", 1)
    c2 = await reattach(s, sess.id, sess.token)
    await c2.send({"action": "reconnect"})
    after = await c2.until_status("SANDBOX_EXECUTION_DONE", 60)
    check_eq(after[0].get("status"), "SANDBOX_EXECUTION_RUNNING", "first frame after reconnect")
    got1 = texts(before, "stdout").encode()
    got2 = texts(after, "stdout").encode()
    err = texts(after, "stderr")
    m = re.fullmatch(r"\[ri serve: (\d+) bytes of output dropped here: no client read them in time\]\ndone\n", err)
    check(m is not None, f"stderr after the reconnect: {err[:200]!r}; stdout bytes before {len(got1)}, after {len(got2)}")
    dropped = int(m.group(1))
    check_eq(len(got1) + dropped + len(got2), n, "bytes seen + dropped")
    check(want.startswith(got1) and want.endswith(got2), "what arrived is the start and the end of the write")
    check(len(got2) <= 4 << 20, f"{len(got2)} bytes kept for the reconnect (limit 4 MiB)")
    check(len(got2) >= (4 << 20) - 4, f"only {len(got2)} bytes kept")


@test(300)
async def large_writes_fit_a_1mib_client(ri):
    s = Server(ri)
    sess = await create(s, sandbox={"max_memory_bytes": 32 << 20})
    check_eq(sess.client.ws.max_size, 2**20, "the harness's client limit (the original client's)")
    await big_write(sess.client, 2097150)
    await big_write(sess.client, 16777210)
    check(sess.client.close_code is None, f"closed: {sess.client.close_code}")


@test(60)
async def failing_programs_report_on_stderr_then_done(ri):
    s = Server(ri)
    cases = [("trap", {}, "WASM_TRAP", "WASM_TRAP unreachable: "),
             ("spin", {"max_gas": 100000, "gas_schedule": "instructions"}, "GAS_EXHAUSTED", "GAS_EXHAUSTED: "),
             ("spin", {"max_execution_ms": 200}, "TIMEOUT", "TIMEOUT: ")]
    for module, sandbox, code, prefix in cases:
        sess = await create(s, sandbox=sandbox)
        got = await run_wasm(sess.client, module, 20)
        what = f"{module} with {sandbox}"
        check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE"], f"{what}: statuses")
        check_eq([f for f in got if f.get("event") == "error"], [], f"{what}: error events")
        err = texts(got, "stderr")
        check(err.startswith(prefix) and err.endswith("\n") and err.count("\n") == 1,
              f"{what}: stderr {err!r}")
        done = got[-1]
        check_eq(done.get("exit_code"), 1, f"{what}: exit_code on DONE")
        check_eq(done.get("error", {}).get("code"), code, f"{what}: error code on DONE")
        check_eq(done["error"].get("message"), err[len(prefix):-1], f"{what}: error message on DONE")
        if code == "WASM_TRAP":
            check_eq(done["error"].get("trap_kind"), "unreachable", "trap_kind on DONE")
            check_eq(texts(got, "stdout"), "before the trap\n", "output before the trap")
        # the sandbox goes on
        got = await run_wasm(sess.client, "hello")
        check_eq(texts(got, "stdout"), "hello, world\n", f"{what}: a run after the failure")
        check_eq(got[-1].get("exit_code"), 0, "exit_code of a run that ends well")
        check("error" not in got[-1], f"error on a good DONE: {got[-1]}")
    # kill_process: FORCE_KILLED, then DONE saying so; nothing on stderr
    sess = await create(s)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("spin")})
    got = await c.until(lambda f: f.get("event") == "stdout", 10, "spinning")
    await c.send({"action": "kill_process"})
    got += await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_FORCE_KILLED",
                             "SANDBOX_EXECUTION_DONE"], "killed: statuses")
    check_eq(texts(got, "stderr"), "", "killed: stderr")
    check_eq(got[-1].get("exit_code"), 1, "killed: exit_code")
    check_eq(got[-1].get("error", {}).get("code"), "KILLED", "killed: error code")


if __name__ == "__main__":
    main()
