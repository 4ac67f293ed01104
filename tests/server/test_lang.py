"""Code as text through the server, as the original's clients send it
({"language": "python", "code": "print(1+1)"}): output, errors and exit codes, stdin, files kept
from one execution (and language) to the next, kill of an endless loop, a live checkpoint of a
running Python program finished on a second server with the same output. Skipped when the
interpreters of scripts/fetch-interpreters.sh are not installed (RI_INTERPRETERS_DIR)."""
import os

import harness
from harness import (Skip, Server, attach_running, check, check_eq, create, main, statuses, tempdir, test,
                     texts)


def need(lang):
    d = os.environ.get("RI_INTERPRETERS_DIR") or os.path.expanduser("~/.cache/ri/interpreters")
    if not os.path.exists(os.path.join(d, lang + ".wasm")):
        raise Skip(f"no {lang}.wasm in {d} (scripts/fetch-interpreters.sh)")


async def run(client, lang, code, stdin=None, timeout=60.0):
    await client.send({"language": lang, "code": code})
    if stdin is not None:
        await client.send({"event": "stdin", "data": stdin})
    return await client.until_status("SANDBOX_EXECUTION_DONE", timeout)


def done_of(frames):
    return [f for f in frames if f.get("status") == "SANDBOX_EXECUTION_DONE"][-1]


@test(120)
async def python_and_lua_share_the_files(ri):
    need("python")
    need("lua")
    s = Server(ri)
    sess = await create(s)
    got = await run(sess.client, "python", "print(1 + 1)\nopen('/note.txt', 'w').write('from python')")
    check_eq(texts(got, "stdout"), "2\n", "python's output")
    check_eq(done_of(got).get("exit_code"), 0, "exit code")
    check_eq(statuses(got)[0], "SANDBOX_EXECUTION_RUNNING", "first status")
    got = await run(sess.client, "lua", "print(io.open('/note.txt'):read('a') .. ', read by lua')")
    check_eq(texts(got, "stdout"), "from python, read by lua\n", "lua reads python's file")
    got = await run(sess.client, "python", "import sys\nprint(''.join(reversed(sys.stdin.readline().strip())))", "olleh\n")
    check_eq(texts(got, "stdout"), "hello\n", f"stdin (stderr {texts(got, 'stderr')!r})")
    s.stop()


@test(120)
async def javascript_shares_the_files(ri):
    need("python")
    need("javascript")
    s = Server(ri)
    sess = await create(s)
    got = await run(sess.client, "python", "import os\nos.mkdir('/d')\nopen('/d/py.txt', 'w').write('from python')")
    check_eq(done_of(got).get("exit_code"), 0, f"python wrote (stderr {texts(got, 'stderr')!r})")
    js = ("const fs = require('fs');\n"
          "console.log(fs.readFileSync('/d/py.txt', 'utf8') + ', read by javascript', fs.readdirSync('/d'));\n"
          "fs.writeFileSync('/d/js.txt', 'from javascript \\u00e9');\n"
          "try { fs.readFileSync('/d/none') } catch (e) { console.log(e.code) }\n")
    got = await run(sess.client, "javascript", js)
    check_eq(texts(got, "stdout"), "from python, read by javascript [ 'py.txt' ]\nENOENT\n",
             f"javascript reads python's file (stderr {texts(got, 'stderr')!r})")
    got = await run(sess.client, "python", "print(open('/d/js.txt').read(), sorted(__import__('os').listdir('/d')))")
    check_eq(texts(got, "stdout"), "from javascript \u00e9 ['js.txt', 'py.txt']\n", "python reads javascript's file")
    s.stop()


@test(120)
async def errors_and_exit_codes(ri):
    need("python")
    need("lua")
    s = Server(ri)
    sess = await create(s)
    got = await run(sess.client, "python", "print('a')\ndef f():\n    raise ValueError('boom')\nf()")
    check_eq(texts(got, "stdout"), "a\n", "output before the error")
    check("ValueError: boom" in texts(got, "stderr"), f"traceback on stderr: {texts(got, 'stderr')!r}")
    check('File "main.py", line 3, in f' in texts(got, "stderr"), "the traceback names main.py")
    check_eq(done_of(got).get("exit_code"), 1, "exit code of an uncaught exception")
    got = await run(sess.client, "python", "import sys\nsys.exit(4)")
    check_eq(done_of(got).get("exit_code"), 4, "sys.exit(4)")
    got = await run(sess.client, "lua", "error('bad')")
    check("lua: main.lua:1: bad" in texts(got, "stderr"), "lua's error")
    check_eq(done_of(got).get("exit_code"), 1, "lua's exit code")
    # an unsupported language keeps the original's error flow and lists the supported ones
    await sess.client.send({"language": "cobol", "code": "DISPLAY 1."})
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 10)
    errs = [f for f in got if f.get("event") == "error"]
    check(errs and "Unsupported language: cobol (this server runs wasm, python, lua, ruby, javascript)" in errs[0].get("message", ""),
          f"unsupported language: {got!r}")
    s.stop()


@test(300)
async def ruby_shares_the_files_and_exits_with_codes(ri):
    need("ruby")
    need("python")
    s = Server(ri)
    sess = await create(s)
    # Ruby opens on a worker (seconds): a second client's Python runs meanwhile
    await sess.client.send({"language": "ruby", "code": "puts 1+1\nFile.write('/from_ruby.txt', 'hi from ruby')"})
    other = await create(s)
    got = await run(other.client, "python", "print('not blocked')")
    check_eq(texts(got, "stdout"), "not blocked\n", "another client's python while ruby opens")
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 240)
    check_eq(texts(got, "stdout"), "2\n", f"ruby's output (stderr {texts(got, 'stderr')!r})")
    check_eq(done_of(got).get("exit_code"), 0, "exit code")
    got = await run(sess.client, "python", "print(open('/from_ruby.txt').read())\nopen('/from_py.txt', 'w').write('py')")
    check_eq(texts(got, "stdout"), "hi from ruby\n", "python reads ruby's file")
    got = await run(sess.client, "ruby", "puts File.read('/from_py.txt') + '!'")
    check_eq(texts(got, "stdout"), "py!\n", "ruby reads python's file")
    got = await run(sess.client, "ruby", "puts 'a'\nraise ArgumentError, 'boom'")
    check_eq(texts(got, "stdout"), "a\n", "output before the error")
    check("boom (ArgumentError)" in texts(got, "stderr"), f"ruby's error: {texts(got, 'stderr')!r}")
    check("main.rb:2" in texts(got, "stderr"), "the error names main.rb")
    check_eq(done_of(got).get("exit_code"), 1, "exit code of an uncaught exception")
    got = await run(sess.client, "ruby", "exit 5")
    check_eq(done_of(got).get("exit_code"), 5, "exit 5")
    s.stop()


@test(120)
async def kill_stops_an_endless_loop(ri):
    need("python")
    s = Server(ri)
    sess = await create(s)
    await sess.client.send({"language": "python", "code": "print('start')\nwhile True:\n    pass"})
    await sess.client.until(lambda f: "start" in texts(sess.client.frames, "stdout"), 30, "the program started")
    await sess.client.send({"action": "kill_process"})
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 30)
    check("SANDBOX_EXECUTION_DONE" in statuses(got), "ended")
    got = await run(sess.client, "python", "print('after')")
    check_eq(texts(got, "stdout"), "after\n", "the sandbox runs code again")
    s.stop()


@test(120)
async def javascript_output_errors_and_kill(ri):
    need("javascript")
    s = Server(ri)
    sess = await create(s)
    got = await run(sess.client, "javascript", "console.log(1 + 1, [1, {a: 'b'}])")
    check_eq(texts(got, "stdout"), "2 [ 1, { a: 'b' } ]\n", "javascript's output")
    check_eq(done_of(got).get("exit_code"), 0, "exit code")
    got = await run(sess.client, "javascript", "console.log('a')\nthrow new RangeError('boom')")
    check("RangeError: boom" in texts(got, "stderr"), f"the error on stderr: {texts(got, 'stderr')!r}")
    check_eq(done_of(got).get("exit_code"), 1, "exit code of an uncaught error")
    got = await run(sess.client, "javascript", "await null; process.exit(5)")
    check_eq(done_of(got).get("exit_code"), 5, "process.exit(5) in a promise job")
    await sess.client.send({"language": "javascript", "code": "console.log('start'); for (;;) {}"})
    await sess.client.until(lambda f: "start" in texts(sess.client.frames, "stdout"), 30, "the program started")
    await sess.client.send({"action": "kill_process"})
    got = await sess.client.until_status("SANDBOX_EXECUTION_DONE", 30)
    check("SANDBOX_EXECUTION_DONE" in statuses(got), "ended")
    got = await run(sess.client, "javascript", "console.log('after')")
    check_eq(texts(got, "stdout"), "after\n", "the sandbox runs code again")
    s.stop()


COUNT = {
    "python": "import sys\nfor i in range(400):\n    print('line', i, i * i)\nname = sys.stdin.readline().strip()\nprint('bye', name)\n",
    "javascript": "for (let i = 0; i < 400; i++) console.log('line', i, i * i);\nconst name = readline();\nconsole.log('bye', name);\n",
}


async def live_checkpoint_finishes_on_another_server(ri, lang):
    """A program waiting on stdin is checkpointed live on server A and finishes on B with
    the output of an uninterrupted run."""
    need(lang)
    code = COUNT[lang]
    vol = tempdir()
    # the reference: one server, uninterrupted
    ref = Server(ri, ckpt=vol)
    sess = await create(ref)
    got = await run(sess.client, lang, code, "ri\n")
    want = texts(got, "stdout")
    check(want.endswith("bye ri\n") and want.count("\n") == 401, f"reference: {want[-80:]!r}")
    ref.stop()
    a, b = Server(ri, ckpt=vol), Server(ri, ckpt=vol)
    sess = await create(a, enable_checkpoint=True)
    await sess.client.send({"language": lang, "code": code})
    await sess.client.until(lambda f: "line 399 " in texts(sess.client.frames, "stdout"), 60, "waiting on stdin")
    await sess.client.send({"action": "checkpoint", "live": True})
    got = await sess.client.until_closed(30)
    check_eq([x for x in statuses(got) if x != "SANDBOX_EXECUTION_RUNNING"], harness.CHECKPOINT_STATUSES,
             "live checkpoint statuses")
    c = await attach_running(b, sess.id, sess.token, restoring=True)
    await c.send({"action": "reconnect"})
    await c.send({"event": "stdin", "data": "ri\n"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 120)
    check_eq(done_of(got).get("exit_code"), 0, "exit code on B")
    seen = texts(sess.client.frames + c.frames, "stdout")
    check_eq(seen, want, "output across the live checkpoint")
    a.stop()
    b.stop()


@test(240)
async def live_checkpoint_of_python_finishes_on_another_server(ri):
    await live_checkpoint_finishes_on_another_server(ri, "python")


@test(240)
async def live_checkpoint_of_javascript_finishes_on_another_server(ri):
    await live_checkpoint_finishes_on_another_server(ri, "javascript")


if __name__ == "__main__":
    main()
