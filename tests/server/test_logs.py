"""The server's logs: --log-format json (one object per line, the default) or text (time,
level, message, key=value pairs), and --log-level filtering (error < warning < info < debug).
Bad values are usage errors that name the values there are."""
import json
import re
import subprocess

from harness import Server, check, check_eq, create, main, test

TEXT_LINE = re.compile(r'^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warning|info|debug) +\S')


def stop(s):
    s.proc.terminate()
    s.proc.wait(timeout=20)
    return [line for line in s.stderr().splitlines() if line.strip()]


@test(60)
async def json_by_default(ri):
    s = Server(ri)
    await create(s)
    lines = stop(s)
    check(lines, "the server logged nothing")
    for line in lines:
        o = json.loads(line)
        check({"ts", "level", "msg", "server"} <= set(o), f"fields of {line!r}")
    check(any(json.loads(line)["msg"] == "listening" for line in lines), "no 'listening' line")


@test(60)
async def text_format(ri):
    s = Server(ri, args=["--log-format", "text"])
    await create(s)
    lines = stop(s)
    check(lines, "the server logged nothing")
    for line in lines:
        check(TEXT_LINE.match(line), f"not a text log line: {line!r}")
    listening = [line for line in lines if " listening " in line]
    check(listening and re.search(r' host=127\.0\.0\.1 port=\d+ scheme=ws ', listening[0]),
          f"the listening line: {listening}")


@test(60)
async def level_filters(ri):
    s = Server(ri, args=["--log-level", "error"])
    await create(s)
    lines = stop(s)
    check_eq(lines, [], "lines logged at --log-level error by a server with no error")
    s = Server(ri, args=["--log-level", "info", "--log-format", "text"])
    await create(s)
    check(any(" info " in line for line in stop(s)), "info lines at --log-level info")


@test(30)
async def bad_values(ri):
    for args, want in ((["--log-level", "loud"], "--log-level: 'loud' is not error, warning, info or debug"),
                       (["--log-format", "xml"], "--log-format: 'xml' is not json or text"),
                       (["--log-formt", "text"], "unknown option '--log-formt' (did you mean --log-format?)")):
        p = subprocess.run([ri, "serve", "--port", "0"] + args, capture_output=True, text=True, timeout=20)
        check_eq(p.returncode, 2, f"exit status of {args}")
        check(want in p.stderr, f"{args}: {p.stderr!r} lacks {want!r}")


if __name__ == "__main__":
    main()
