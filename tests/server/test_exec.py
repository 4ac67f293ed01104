"""Executions: RUNNING before output, stdout/stderr, UTF-8 never split, traps, unsupported
language, a second execution while one runs, stdin round trip and stdin errors."""
import base64

from harness import (Server, action, b64, load, ok_action, wasm, check, check_eq, create, main, run_wasm, statuses, test, texts,
                     value_of)


def kinds(frames):
    return [f.get("status") or f.get("event") for f in frames]


@test()
async def hello_stdout_stderr_done(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run_wasm(sess.client, "hello")
    k = kinds(got)
    check_eq(k[0], "SANDBOX_EXECUTION_RUNNING", "first frame of an execution")
    check_eq(k[-1], "SANDBOX_EXECUTION_DONE", "last frame")
    check_eq(texts(got, "stdout"), "hello, world\n", "stdout")
    check_eq(texts(got, "stderr"), "to stderr\n", "stderr")
    check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE"], "statuses")
    check_eq(await sess.client.quiet(0.3), [], "frames after DONE")
    # Twice in a row on the same socket.
    got = await run_wasm(sess.client, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "stdout of the second run")


@test()
async def utf8_written_bytewise_never_split(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run_wasm(sess.client, "utf8")
    out = [f for f in got if f.get("event") in ("stdout", "stderr")]
    for f in out:
        check("\ufffd" not in f["data"], f"a split character arrived as U+FFFD: {f!r}")
        check(f["data"] != "", f"an empty output event: {f!r}")
    check_eq(texts(got, "stdout"), "é€😀\n", "stdout written one byte per call")
    check_eq(texts(got, "stderr"), "é€😀\n", "stderr written one byte per call")


@test()
async def invalid_utf8_replaced(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run_wasm(sess.client, "utf8_bad")
    want = b"a\xffbc\x80d\xe2\x82".decode("utf-8", "replace")
    check_eq(texts(got, "stdout"), want, "invalid UTF-8 as U+FFFD")


@test()
async def large_output_complete(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run_wasm(sess.client, "bigout", 30)
    want = "".join("\n" if i % 100 == 99 else chr(97 + i % 26) for i in range(300000))
    out = texts(got, "stdout")
    check_eq(len(out), len(want), "length of 300,000 bytes written at once")
    check(out == want, "the content of the large output differs")
    check_eq(texts(got, "stderr"), "bad fd ok\nbad range ok\nend\n", "ri.write of a bad fd/range")


@test()
async def trap_reports_stderr_then_done(ri):
    s = Server(ri)
    sess = await create(s)
    got = await run_wasm(sess.client, "trap")
    # as the original: a program that fails once it runs is not a protocol error
    check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE"], "statuses of a trapping run")
    check_eq(texts(got, "stdout"), "before the trap\n", "output before the trap")
    check_eq([f for f in got if f.get("event") == "error"], [], "error events")
    check_eq(texts(got, "stderr"), "WASM_TRAP unreachable: unreachable\n", "the error on stderr")
    check_eq(got[-1].get("error"), {"code": "WASM_TRAP", "message": "unreachable", "trap_kind": "unreachable"},
             "the typed error on DONE")
    # The sandbox still runs code.
    got = await run_wasm(sess.client, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "run after a trap")


@test()
async def limits_stop_runaway_code(ri):
    s = Server(ri)
    sess = await create(s, sandbox={"max_execution_ms": 200})
    got = await run_wasm(sess.client, "spin", 10)
    check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING", "SANDBOX_EXECUTION_DONE"], "a loop past max_execution_ms")
    msg = texts(got, "stderr")
    check(msg.startswith("TIMEOUT"), f"stderr {msg!r}")
    check_eq(got[-1].get("error", {}).get("code"), "TIMEOUT", "error code on DONE")
    sess = await create(s, sandbox={"max_gas": 100000, "gas_schedule": "instructions"})
    got = await run_wasm(sess.client, "spin", 10)
    msg = texts(got, "stderr")
    check(msg.startswith("GAS_EXHAUSTED"), f"stderr {msg!r}")
    check_eq(statuses(got)[-1], "SANDBOX_EXECUTION_DONE", "last status")
    # Waiting for stdin counts: at the time limit the read returns 0; the module's next import
    # call then either still fits (the limit is in whole ms: "eof" is written, no error) or
    # ends the run with TIMEOUT.
    sess = await create(s, sandbox={"max_execution_ms": 300})
    got = await run_wasm(sess.client, "echo", 10)
    out = texts(got, "stdout")
    err = texts(got, "stderr")
    check((out == "ready\n" and err.startswith("TIMEOUT")) or (out == "ready\neof\n" and err == ""),
          f"a run that waited for stdin past its limit: stdout {out!r}, stderr {err!r}")


async def rejected(client, msg, status, message=None, prefix=None):
    await client.send(msg)
    got = await client.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(kinds(got), [status, "error", "SANDBOX_EXECUTION_DONE"], f"answer to {str(msg)[:60]}")
    if message is not None:
        check_eq(got[1].get("message"), message, "error message")
    if prefix is not None:
        check(got[1].get("message", "").startswith(prefix), f"error {got[1].get('message')!r}")


@test()
async def unsupported_language_and_bad_code(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await rejected(c, {"language": "cobol", "code": "DISPLAY 1."},
                   "SANDBOX_EXECUTION_UNSUPPORTED_LANGUAGE_ERROR",
                   "Unsupported language: cobol (this server runs wasm, python, lua, ruby, javascript)")
    await rejected(c, {"language": "wasm", "code": "@@@ not base64 @@@"}, "SANDBOX_EXECUTION_ERROR")
    await rejected(c, {"language": "wasm", "code": base64.b64encode(b"\0asm\x01\0\0\0\xff").decode()},
                   "SANDBOX_EXECUTION_ERROR")
    await rejected(c, {"language": "wasm", "code": base64.b64encode(wasm("counter")[:29]).decode()},
                   "SANDBOX_EXECUTION_ERROR", prefix="INVALID_MODULE")  # a truncated section
    await rejected(c, {"something": "else"}, "SANDBOX_EXECUTION_ERROR")
    await rejected(c, "not json at all", "SANDBOX_EXECUTION_ERROR")
    await rejected(c, "[1,2,3]", "SANDBOX_EXECUTION_ERROR")
    got = await run_wasm(c, "hello")
    check_eq(texts(got, "stdout"), "hello, world\n", "run after rejected requests")


@test()
async def second_execution_while_one_runs(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("echo")})
    got = await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    check_eq(statuses(got), ["SANDBOX_EXECUTION_RUNNING"], "before the first output")
    await c.send({"language": "wasm", "code": b64("hello")})
    got = await c.until_event("error", 10)
    check_eq(kinds(got), ["SANDBOX_EXECUTION_ERROR", "error"], "second execution")
    check_eq(got[-1]["message"], "An execution is already in progress.", "error message")
    check_eq(await c.quiet(0.3), [], "frames after the refusal (no DONE)")
    await c.send({"event": "stdin", "data": "first"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:first", "the first execution continued")
    check_eq(statuses(got), ["SANDBOX_EXECUTION_DONE"], "exactly one DONE")
    check_eq(await c.quiet(0.3), [], "frames after DONE")


@test()
async def stdin_round_trip(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    for data in ("hello", "héllo wörld ✓ 😀", "x" * 200):
        await c.send({"language": "wasm", "code": b64("echo")})
        await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
        await c.send({"event": "stdin", "data": data})
        got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
        check_eq(texts(got, "stdout"), "got:" + data, "echoed stdin")
    # stdin_close: read returns 0.
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    await c.send({"event": "stdin_close"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "eof\n", "read after stdin_close")


@test()
async def stdin_errors(ri):
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    await c.send({"event": "stdin", "data": "nobody reads"})
    got = await c.until_event("error", 10)
    check_eq(kinds(got), ["SANDBOX_EXECUTION_ERROR", "error"], "stdin with nothing running")
    check_eq(got[-1]["message"], "No process is running in the sandbox.", "error message")
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    for bad in ({"event": "stdin"}, {"event": "stdin", "data": 5}, {"event": "stdin", "data": None}):
        await c.send(bad)
        got = await c.until_event("error", 10)
        check_eq(kinds(got), ["SANDBOX_STDIN_ERROR", "error"], f"answer to {bad}")
        check_eq(got[-1]["message"], 'Invalid stdin message: "data" must be a string.', "message")
    await c.send({"event": "stdin", "data": "still fine"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:still fine", "execution after bad stdin messages")


@test()
async def execute_action_results(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    c = sess.client
    check_eq(await value_of(c, "increment"), 1, "increment")
    check_eq(await value_of(c, "add", [10]), 11, "add(10)")
    await c.send({"action": "execute", "function": "get", "request_id": "abc"})
    res = await c.until_event("result", 10)
    check_eq(res[-1].get("request_id"), "abc", "echoed request_id")
    check_eq(res[-1].get("value"), 11, "get")
    await c.send({"action": "execute", "function": "no_such_export"})
    res = (await c.until_event("result", 10))[-1]
    check_eq(res.get("ok"), False, "execute of a missing export")
    check_eq(res.get("error", {}).get("code"), "WASM_TRAP", "error code")


@test()
async def load_status_and_typed_calls(ri):
    import hashlib
    s = Server(ri)
    sess = await create(s)
    c = sess.client
    st = await ok_action(c, "status")
    check_eq(st.get("sandbox_id"), sess.id, "status before load")
    res = await load(c, "counter")
    check_eq(res.get("module_sha256"), hashlib.sha256(wasm("counter")).hexdigest(), "module_sha256")
    check_eq(res.get("module_bytes"), len(wasm("counter")), "module_bytes")
    st = await ok_action(c, "status")
    check_eq(st.get("module_loaded"), True, "status after load")
    check_eq(st.get("module_bytes"), len(wasm("counter")), "status module_bytes after load")
    res = await ok_action(c, "execute", function="add", args=[{"type": "i32", "value": -7}])
    check_eq(res.get("value"), -7, "typed i32 argument")
    check_eq(res.get("results"), [{"type": "i32", "value": -7}], "typed results")
    res = await ok_action(c, "execute", function="add", payload=[4294967297])  # ToInt32 -> 1
    check_eq(res.get("value"), -6, "direct convention wraps to 32 bits")
    res = await action(c, "load", module="bm90IHdhc20=")
    check_eq(res.get("ok"), False, "load of a non-module")
    check_eq(await value_of(c, "get"), -6, "a failed load keeps the previous module and memory")
    res = await action(c, "execute", function="add", args=[{"type": "f32", "value": 1}])
    check_eq(res.get("ok"), False, "typed argument of the wrong type")
    check_eq(res.get("error", {}).get("code"), "WASM_TRAP", "error code")
    check("f32" in res.get("error", {}).get("message", ""), f"error {res.get('error')}")
    res = await ok_action(c, "execute", function="get")
    check_eq(res.get("value"), -6, "a refused call changes nothing")
    for bad in ("x", None, [1], {"a": 1}, "12abc"):
        res = await action(c, "execute", function="add", args=[{"type": "i32", "value": bad}])
        check_eq(res.get("ok"), False, f"typed i32 argument with value {bad!r}")
    check_eq(await value_of(c, "get"), -6, "refused typed calls change nothing")
    res = await action(c, "no_such_action")
    check_eq(res.get("ok"), False, "unknown action")


if __name__ == "__main__":
    main()
