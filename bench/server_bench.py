#!/usr/bin/python3
"""Benchmarks of the sandbox server (`ri serve`, issue 7) over loopback WebSockets.

    /usr/bin/python3 bench/server_bench.py [--ri build/ri] [--reps N] [--idle 1000] [--json FILE]
    python3 bench/bench.py --only server [same options]

Measures, with a real client (python3-websockets; the client's own time is part of every
figure, as it is for any user):
  - round trip of a small execution: our `execute` action (a function call on a loaded
    module) and a `language: wasm` run (module load + _start + output), p50 and p99;
  - checkpoint latency of 1 MiB and 16 MiB sandboxes, first (full) and after changing 1% of
    memory since the last checkpoint (a delta image: docs/SERVER.md "Full and delta
    checkpoints"), with that image's size; restore-on-attach latency (connect to SANDBOX_RUNNING);
  - server RSS per idle sandbox (from /proc before/after N detached sandboxes);
  - server RSS with 1,000 concurrently connected idle sandboxes;
  - code as text: `print(1+1)` (or its spelling) per installed language, the round trip from
    the execution message to its SANDBOX_EXECUTION_DONE (ri-bench-rtt), target < 5 ms.
Prints each figure next to its target. Timing only here, never in the tests.
"""
import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "server"))
sys.dont_write_bytecode = True

import harness  # noqa: E402
from harness import Client, Server, attach, b64, create, init_message  # noqa: E402

MIB = 1 << 20


def pct(xs, p):
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * (len(xs) - 1)))))
    return xs[k]


async def timed_until(client, pred, timeout=60):
    while True:
        f = await client.next(timeout)
        if pred(f):
            return f


PRINT = {"python": "print(1+1)", "lua": "print(1+1)", "ruby": "puts 1+1", "javascript": "console.log(1+1)"}


def interpreter_installed(lang):
    d = os.environ.get("RI_INTERPRETERS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "ri", "interpreters")
    return os.path.exists(os.path.join(d, lang + ".wasm"))


async def bench_languages(ri, reps):
    """print(1+1) through the server per installed language, from the lean C client."""
    rtt = os.path.join(os.path.dirname(os.path.abspath(ri)), "ri-bench-rtt")
    out = {}
    if not os.path.exists(rtt):
        return out
    s = Server(ri)
    for lang, code in PRINT.items():
        if not interpreter_installed(lang):
            out[lang] = None
            continue
        msg = json.dumps({"language": lang, "code": code})
        r = await asyncio.to_thread(subprocess.run, [rtt, str(s.port), json.dumps(init_message()), str(reps), msg],
                                    capture_output=True, text=True, timeout=600)
        out[lang] = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()}
    s.cleanup()
    return out


async def bench_roundtrip(ri, reps):
    s = Server(ri)
    sess = await create(s, module="counter")
    c = sess.client
    msg = json.dumps({"action": "execute", "function": "increment"})
    lat = []
    for i in range(reps + 50):
        t0 = time.perf_counter()
        await c.send(msg)
        f = await timed_until(c, lambda f: f.get("event") == "result")
        dt = time.perf_counter() - t0
        if not f.get("ok"):
            raise RuntimeError(f"execute failed: {f}")
        if i >= 50:
            lat.append(dt)
    run_msg = json.dumps({"language": "wasm", "code": b64("hello")})
    wl = []
    for i in range(max(20, reps // 5) + 10):
        t0 = time.perf_counter()
        await c.send(run_msg)
        await timed_until(c, lambda f: f.get("status") == "SANDBOX_EXECUTION_DONE")
        if i >= 10:
            wl.append(time.perf_counter() - t0)
    # The client's own share: a WebSocket ping round trip on the same connection.
    pings = []
    for _ in range(200):
        t0 = time.perf_counter()
        await (await c.ws.ping())
        pings.append(time.perf_counter() - t0)
    await c.close()
    # The same round trip from a lean C client (server_rtt.c), on another sandbox of the
    # same server: the server's and the loopback's share without the Python client's.
    lean = None
    rtt = os.path.join(os.path.dirname(os.path.abspath(ri)), "ri-bench-rtt")
    if os.path.exists(rtt):
        out = await asyncio.to_thread(
            subprocess.run, [rtt, str(s.port), json.dumps(init_message(module="counter")), str(reps)],
            capture_output=True, text=True, timeout=120)
        if out.returncode == 0:
            lean = json.loads(out.stdout)
        else:
            print(f"  ri-bench-rtt failed: {out.stderr.strip()}", flush=True)
    s.cleanup()
    return {"execute_p50_us": pct(lat, 50) * 1e6, "execute_p99_us": pct(lat, 99) * 1e6,
            "wasm_run_p50_us": pct(wl, 50) * 1e6, "wasm_run_p99_us": pct(wl, 99) * 1e6,
            "ping_p50_us": pct(pings, 50) * 1e6, "n": len(lat),
            "lean_execute_p50_us": lean["p50_us"] if lean else None,
            "lean_execute_p99_us": lean["p99_us"] if lean else None}


async def bench_checkpoint(ri, pages, reps):
    s = Server(ri)
    sess = await create(s, module="big", enable_checkpoint=True,
                        sandbox={"max_memory_bytes": 16 * MIB})
    c = sess.client
    await harness.value_of(c, "setup", [pages, 12345], timeout=120)
    t0 = time.perf_counter()
    await c.send({"action": "checkpoint"})
    await timed_until(c, lambda f: f.get("status") == "SANDBOX_CHECKPOINTED")
    full = time.perf_counter() - t0
    await c.until_closed(10)
    ck, rs, rs_inner, rs_open, rs_pre, ck_bytes = [], [], [], [], [], []
    one_pct = (pages * 65536 // 100) & ~3
    for i in range(reps):
        t0 = time.perf_counter()
        c = await attach(s, sess.id, sess.token)
        t_open = time.perf_counter()
        t_restoring = None
        while True:
            f = await c.next(60)
            if f.get("status") == "SANDBOX_RESTORING":
                t_restoring = time.perf_counter()
            if f.get("status") == "SANDBOX_RUNNING":
                break
            if f.get("event") == "error":
                raise RuntimeError(f"restore failed: {f}")
        t1 = time.perf_counter()
        rs.append(t1 - t0)
        rs_inner.append(t1 - (t_restoring or t_open))
        rs_open.append(t_open - t0)
        rs_pre.append((t_restoring or t_open) - t_open)
        await harness.value_of(c, "touch", [one_pct, 1000 + i], timeout=60)
        t0 = time.perf_counter()
        await c.send({"action": "checkpoint"})
        await timed_until(c, lambda f: f.get("status") == "SANDBOX_CHECKPOINTED")
        ck.append(time.perf_counter() - t0)
        await c.until_closed(10)
        ck_dir = os.path.join(s.ckpt, sess.id, "checkpoints")
        with open(os.path.join(ck_dir, "latest")) as f:  # a delta on the first image, normally
            ck_bytes.append(os.path.getsize(os.path.join(ck_dir, f.read().strip())))
    img = os.path.join(s.ckpt, sess.id, "checkpoints")
    sizes = [os.path.getsize(os.path.join(img, f)) for f in os.listdir(img) if f.endswith(".img")]
    s.cleanup()
    return {"pages": pages, "full_checkpoint_ms": full * 1e3,
            "checkpoint_1pct_ms_p50": statistics.median(ck) * 1e3, "checkpoint_1pct_ms_max": max(ck) * 1e3,
            "restore_attach_ms_p50": statistics.median(rs) * 1e3, "restore_attach_ms_max": max(rs) * 1e3,
            "restore_only_ms_p50": statistics.median(rs_inner) * 1e3,
            "attach_handshake_ms_p50": statistics.median(rs_open) * 1e3,
            "attach_to_restoring_ms_p50": statistics.median(rs_pre) * 1e3,
            "image_bytes_max": max(sizes) if sizes else None,
            "image_1pct_bytes_max": max(ck_bytes) if ck_bytes else None}


async def bench_idle_memory(ri, n):
    s = Server(ri, args=["--max-sandboxes", str(n + 16)])
    await asyncio.sleep(0.3)
    before = s.rss_kib()
    for _ in range(n):
        sess = await create(s, module="counter")
        await sess.client.close()
    await asyncio.sleep(0.5)
    after = s.rss_kib()
    s.cleanup()
    return {"n": n, "rss_before_kib": before, "rss_after_kib": after,
            "per_sandbox_kib": (after - before) / n}


async def bench_connected(ri, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < n + 256:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, n + 1024), hard))
    s = Server(ri, args=["--max-sandboxes", str(n + 16)])
    await asyncio.sleep(0.3)
    before = s.rss_kib()
    init = json.dumps(init_message(module="counter"))
    clients = []
    t0 = time.perf_counter()
    sem = asyncio.Semaphore(64)

    async def one():
        async with sem:
            c = await Client.connect(s.url + "/create")
            await c.send(init)
            await c.until_status("SANDBOX_RUNNING", 60)
            clients.append(c)
    await asyncio.gather(*[one() for _ in range(n)])
    took = time.perf_counter() - t0
    await asyncio.sleep(0.5)
    after = s.rss_kib()
    alive = s.status_ok()
    # Every one of them still answers.
    probe = clients[:: max(1, n // 50)]
    vals = await asyncio.gather(*[harness.value_of(c, "increment") for c in probe])
    ok = all(v == 1 for v in vals)
    await asyncio.gather(*[c.close() for c in clients])
    s.cleanup()
    return {"n": n, "rss_before_kib": before, "rss_after_kib": after, "create_all_s": took,
            "server_alive": alive, "probes_ok": ok}


def line(what, value, unit, target=None, ok=None):
    t = ""
    if target is not None:
        t = f"   target {target}: {'met' if ok else 'NOT MET'}"
    print(f"  {what:<52} {value:>12.1f} {unit:<4}{t}", flush=True)


async def run(a):
    out = {}
    print(f"server benchmarks: {a.ri}, {os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    if "roundtrip" in a.parts:
        r = out["roundtrip"] = await bench_roundtrip(a.ri, a.reps)
        print(f"round trip over loopback ({r['n']} sequential requests on one socket)")
        if r["lean_execute_p50_us"] is not None:
            line("execute action, C client (ri-bench-rtt), p50", r["lean_execute_p50_us"], "us", "< 200 us",
                 r["lean_execute_p50_us"] < 200)
            line("execute action, C client, p99", r["lean_execute_p99_us"], "us")
        line("execute action, Python client, p50", r["execute_p50_us"], "us",
             "< 200 us" if r["lean_execute_p50_us"] is None else None, r["execute_p50_us"] < 200)
        line("execute action, Python client, p99", r["execute_p99_us"], "us")
        line("wasm run (load + _start + output + DONE), p50", r["wasm_run_p50_us"], "us")
        line("wasm run, p99", r["wasm_run_p99_us"], "us")
        line("WebSocket ping round trip (client+loopback floor), p50", r["ping_p50_us"], "us")
    if "languages" in a.parts:
        r = out["languages"] = await bench_languages(a.ri, a.lang_reps)
        print(f"code as text through the server: print(1+1), message to SANDBOX_EXECUTION_DONE "
              f"({a.lang_reps} after 50 warm-up, C client)")
        for lang, v in r.items():
            if v is None:
                print(f"  {lang:<52} not installed (scripts/fetch-interpreters.sh)")
            elif "error" in v:
                print(f"  {lang:<52} failed: {v['error']}")
            else:
                line(f"{lang}, p50", v["p50_us"] / 1000, "ms", "< 5 ms", v["p50_us"] < 5000)
                line(f"{lang}, p99", v["p99_us"] / 1000, "ms")
    if "checkpoint" in a.parts:
        for pages in (16, 256):
            r = out[f"checkpoint_{pages}p"] = await bench_checkpoint(a.ri, pages, a.ckpt_reps)
            mib = pages * 65536 // MIB
            print(f"checkpoint and restore, {mib} MiB sandbox ({a.ckpt_reps} rounds; image "
                  f"{(r['image_bytes_max'] or 0) / MIB:.2f} MiB)")
            line("first checkpoint (all memory)", r["full_checkpoint_ms"], "ms")
            line("checkpoint after 1% changed, p50", r["checkpoint_1pct_ms_p50"], "ms",
                 "< 5 ms" if pages == 256 else None, r["checkpoint_1pct_ms_p50"] < 5)
            line("checkpoint after 1% changed, max", r["checkpoint_1pct_ms_max"], "ms")
            line("  its image (a delta on the first one), max", (r["image_1pct_bytes_max"] or 0) / 1024, "KiB")
            line("restore on attach (connect to RUNNING), p50", r["restore_attach_ms_p50"], "ms",
                 "< 20 ms" if pages == 256 else None, r["restore_attach_ms_p50"] < 20)
            line("restore on attach, max", r["restore_attach_ms_max"], "ms")
            line("  of which: WebSocket handshake, p50", r["attach_handshake_ms_p50"], "ms")
            line("  of which: handshake done to RESTORING, p50", r["attach_to_restoring_ms_p50"], "ms")
            line("  of which: RESTORING to RUNNING, p50", r["restore_only_ms_p50"], "ms")
    if "memory" in a.parts:
        r = out["idle_memory"] = await bench_idle_memory(a.ri, a.mem_n)
        print(f"memory per idle sandbox ({r['n']} detached sandboxes with a 1-page module)")
        line("server RSS before", r["rss_before_kib"] / 1024, "MiB")
        line("server RSS after", r["rss_after_kib"] / 1024, "MiB")
        line("RSS per idle sandbox", r["per_sandbox_kib"], "KiB")
    if "connected" in a.parts:
        r = out["connected"] = await bench_connected(a.ri, a.idle)
        print(f"{r['n']} concurrently connected idle sandboxes")
        line("server RSS", r["rss_after_kib"] / 1024, "MiB", "< 1 GiB",
             r["rss_after_kib"] < 1024 * 1024)
        line("time to create them all (64 at a time)", r["create_all_s"], "s")
        print(f"  server answered /status: {r['server_alive']}; sampled sandboxes answered: "
              f"{r['probes_ok']}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ri", default=os.path.join(ROOT, "build", "ri"))
    ap.add_argument("--reps", type=int, default=2000, help="execute round trips (default 2000)")
    ap.add_argument("--ckpt-reps", type=int, default=31, help="checkpoint/restore rounds (default 31: one slow fsync of a busy disk moves a short median)")
    ap.add_argument("--mem-n", type=int, default=200, help="idle sandboxes for RSS per sandbox")
    ap.add_argument("--idle", type=int, default=1000, help="concurrently connected sandboxes")
    ap.add_argument("--lang-reps", type=int, default=200, help="print(1+1) round trips per language")
    ap.add_argument("--parts", default="roundtrip,languages,checkpoint,memory,connected")
    ap.add_argument("--json", help="write the figures to this file")
    a, _ = ap.parse_known_args()
    a.parts = a.parts.split(",")
    a.ri = os.path.abspath(a.ri)
    if not os.access(a.ri, os.X_OK):
        print(f"server_bench: {a.ri} is not built (make, or --ri PATH)", file=sys.stderr)
        return 2
    try:
        out = asyncio.run(run(a))
    finally:
        harness.stop_all()
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
