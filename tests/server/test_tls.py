"""TLS: `ri serve --tls-cert C --tls-key K` serves wss:// and https:// (/status, /metrics) on
one port, with a self-signed certificate made here with `openssl req -x509`; a plain ws://
(or http://) client against it fails cleanly and the server keeps serving; missing,
unreadable, non-PEM, encrypted or mismatched files are a startup error (exit 2) naming the
file and the reason; a non-loopback address without TLS is warned about."""
import asyncio
import json
import os
import re
import socket
import ssl
import subprocess
import urllib.request

import websockets

from harness import (Server, attach_running, check, check_eq, checkpoint, create, main, run_wasm,
                     statuses, tempdir, test, texts, value_of)

USAGE_EXIT = 2


def make_cert(d, name="server", cn="localhost"):
    """A self-signed certificate (EC P-256, for localhost and 127.0.0.1) and its key in d."""
    cert, key = os.path.join(d, name + ".crt"), os.path.join(d, name + ".key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", f"/CN={cn}",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    return cert, key


def tls_server(ri, **kw):
    return Server(ri, tls=make_cert(tempdir("ri-srv-tls-")), **kw)


@test(60)
async def wss_create_execute_checkpoint_attach(ri):
    s = tls_server(ri)
    check(s.url.startswith("wss://"), f"url of a TLS server: {s.url}")
    sess = await create(s, module="counter", enable_checkpoint=True)
    check_eq(await value_of(sess.client, "increment"), 1, "execute over wss")
    got = await run_wasm(sess.client, "counter")
    check_eq(texts(got, "stdout"), "count\n", f"stdout of a run over wss: {got}")
    n = await value_of(sess.client, "increment")
    await checkpoint(sess.client)
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), n, "the counter restored over wss")
    check(s.status_ok(), "https /status after the session")


@test()
async def https_status_and_metrics(ri):
    s = tls_server(ri)
    code, body = s.http_get("/status")
    check_eq(code, 200, "GET https /status")
    st = json.loads(body)
    check_eq(st.get("status"), "ok", "status field")
    check_eq(st.get("tls"), True, "tls field of /status")
    code, body = s.http_get("/metrics")
    check_eq(code, 200, "GET https /metrics")
    check(re.search(r'^ri_build_info\{version="[0-9]+\.[0-9]+\.[0-9]+",[^}]*\} 1$', body, re.M),
          "no ri_build_info over https")
    code, _ = s.http_get("/nothing-here")
    check_eq(code, 404, "unknown path over https")
    # the listening log line says the scheme; stdout's first line stays as it was
    logs = [json.loads(line) for line in s.stderr().splitlines() if line.startswith("{")]
    listening = [l for l in logs if l.get("msg") == "listening"]
    check(listening and listening[0].get("scheme") == "wss", f"listening log line: {listening}")
    with open(s.out_path) as f:
        check(re.fullmatch(r"listening on 127\.0\.0\.1:\d+\n", f.readline()), "first stdout line")


@test(60)
async def plain_clients_fail_cleanly_against_tls(ri):
    s = tls_server(ri)
    # a plain WebSocket client: its handshake is not TLS, so the server drops it
    try:
        ws = await websockets.connect(f"ws://127.0.0.1:{s.port}/create", open_timeout=10, ping_interval=None)
        await ws.close()
        raise AssertionError("a plain ws:// client was accepted by a TLS server")
    except (websockets.exceptions.InvalidHandshake, websockets.exceptions.ConnectionClosed,
            ConnectionError, EOFError, OSError, asyncio.TimeoutError):
        pass
    # plain http
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{s.port}/status", timeout=10) as r:
            raise AssertionError(f"plain http answered {r.status} on a TLS port")
    except (urllib.error.URLError, ConnectionError, OSError, ValueError) as e:
        check(not isinstance(e, urllib.error.HTTPError), f"plain http got an HTTP answer: {e}")
    # a TLS client that does not trust the certificate
    try:
        ws = await websockets.connect(s.url + "/create", ssl=ssl.create_default_context(), open_timeout=10)
        await ws.close()
        raise AssertionError("a client that does not trust the certificate connected")
    except ssl.SSLCertVerificationError:
        pass
    # raw garbage, and a socket that says nothing and goes away
    with socket.create_connection(("127.0.0.1", s.port), timeout=5) as sk:
        sk.sendall(b"\x16\x03\x01\x00\x05garbage-not-a-hello\r\n\r\n")
    socket.create_connection(("127.0.0.1", s.port), timeout=5).close()
    check(s.status_ok(), "the TLS server stopped answering after plain clients")
    sess = await create(s, module="counter")
    check_eq(await value_of(sess.client, "increment"), 1, "a wss session after the plain clients")


def serve_fails(ri, args, what):
    """`ri serve ARGS` must exit 2 at once with one clear line; returns its stderr."""
    r = subprocess.run([ri, "serve", "--port", "0"] + args, capture_output=True, text=True, timeout=30)
    check_eq(r.returncode, USAGE_EXIT, f"exit code of ri serve with {what} (stderr {r.stderr!r})")
    check("listening" not in r.stdout, f"ri serve with {what} said it was listening")
    return r.stderr


@test(60)
async def bad_certificate_or_key_is_a_startup_error(ri):
    d = tempdir("ri-srv-tls-")
    cert, key = make_cert(d)
    cert2, key2 = make_cert(d, "other", "other")
    missing = os.path.join(d, "missing.pem")
    junk = os.path.join(d, "junk.pem")
    with open(junk, "wb") as f:
        f.write(os.urandom(300))
    empty = os.path.join(d, "empty.pem")
    open(empty, "w").close()
    enc = os.path.join(d, "enc.key")
    subprocess.run(["openssl", "pkey", "-in", key, "-aes128", "-passout", "pass:secret", "-out", enc],
                   check=True, capture_output=True)
    cases = [
        (["--tls-cert", missing, "--tls-key", key], missing, "No such file or directory"),
        (["--tls-cert", cert, "--tls-key", missing], missing, "No such file or directory"),
        (["--tls-cert", d, "--tls-key", key], d, "not a regular file"),
        (["--tls-cert", empty, "--tls-key", key], empty, "empty"),
        (["--tls-cert", junk, "--tls-key", key], junk, "not a usable PEM certificate"),
        (["--tls-cert", key, "--tls-key", key], key, "not a usable PEM certificate"),
        (["--tls-cert", cert, "--tls-key", cert], cert, "not a usable PEM private key"),
        (["--tls-cert", cert, "--tls-key", enc], enc, "encrypted"),
        (["--tls-cert", cert, "--tls-key", key2], key2, "does not match the certificate"),
        (["--tls-cert", cert2, "--tls-key", key], key, "does not match the certificate"),
        (["--tls-cert", cert], "--tls-key", "needs"),
        (["--tls-key", key], "--tls-cert", "needs"),
    ]
    for args, names, reason in cases:
        err = serve_fails(ri, args, " ".join(os.path.basename(a) for a in args))
        check(names in err and reason in err, f"error for {args}: expected {names!r} and {reason!r}, seen {err!r}")
        check(len(err.strip().splitlines()) <= 2, f"more than a short error: {err!r}")
    # a good pair starts (the cases above failed for the reason they name)
    s = Server(ri, tls=(cert, key))
    check(s.status_ok(), "the good pair does not serve")


def start_raw(ri, args):
    """`ri serve` with its own first line (any host); returns (proc, first line)."""
    p = subprocess.Popen([ri, "serve", "--port", "0"] + args, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    return p, p.stdout.readline()


def stop_raw(p):
    p.terminate()
    try:
        _, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
        check(marker not in err, f"sanitizer report: {err[err.find(marker) - 200:][:1500]}")
    return err


@test(60)
async def non_loopback_without_tls_is_warned_about(ri):
    p, first = start_raw(ri, ["--host", "0.0.0.0"])
    err = stop_raw(p)
    check(re.fullmatch(r"listening on 0\.0\.0\.0:\d+\n", first), f"first line: {first!r}")
    warn = [json.loads(l) for l in err.splitlines() if l.startswith("{") and '"warning"' in l]
    check(any("without TLS" in w.get("msg", "") for w in warn), f"no warning for 0.0.0.0 without TLS: {err[:800]}")
    cert, key = make_cert(tempdir("ri-srv-tls-"))
    p, first = start_raw(ri, ["--host", "0.0.0.0", "--tls-cert", cert, "--tls-key", key])
    err = stop_raw(p)
    check(first.startswith("listening on 0.0.0.0:"), f"first line with TLS: {first!r}")
    check("without TLS" not in err, f"a warning although TLS is on: {err[:800]}")
    p, first = start_raw(ri, ["--host", "127.0.0.1"])
    err = stop_raw(p)
    check("without TLS" not in err, f"a warning for loopback: {err[:800]}")


if __name__ == "__main__":
    main()
