"""GET /status (version, server id, uptime, sandbox counts by state, checkpointing; "status":"ok"
kept for the original's clients) and GET /metrics (Prometheus text: histograms of execution,
checkpoint and restore durations and bytes; ri_build_info; every execution counted). Counts
are checked exactly; durations only for their form (buckets cumulative, +Inf = _count)."""
import asyncio
import json
import os
import re
import subprocess

from harness import (Server, action, attach_running, b64, check, check_eq, checkpoint, create, main,
                     run_wasm, settled, statuses, test, value_of)

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$')


class Scrape(dict):
    def __init__(self, samples, types):
        super().__init__(samples)
        self.types = types


def scrape(server):
    """{(name, labels text): value} of GET /metrics; every line checked for the text format."""
    code, body = server.http_get("/metrics")
    check_eq(code, 200, "GET /metrics")
    out = {}
    types = {}  # kept apart from the samples: out's keys are all (name, labels)
    for line in body.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        m = SAMPLE.match(line)
        check(m, f"not a Prometheus sample line: {line!r}")
        out[(m.group(1), m.group(2) or "")] = float(m.group(3))
    return Scrape(out, types)


def hist(metrics, name, labels=""):
    """(buckets [(le, cumulative count)], sum, count) of one histogram series; checks its form."""
    check_eq(metrics.types.get(name), "histogram", f"TYPE of {name}")
    inner = labels + "," if labels else ""
    buckets = []
    for (n, lab), v in metrics.items():
        if n == name + "_bucket" and lab.startswith("{" + inner + "le="):
            le = lab[len("{" + inner + 'le="'):-2]
            buckets.append((float("inf") if le == "+Inf" else float(le), v))
    buckets.sort()
    check(buckets and buckets[-1][0] == float("inf"), f"{name}{{{labels}}} has no +Inf bucket")
    counts = [c for _, c in buckets]
    check(counts == sorted(counts), f"{name}{{{labels}}} buckets not cumulative: {buckets}")
    key = "{" + labels + "}" if labels else ""
    total = metrics[(name + "_count", key)]
    check_eq(total, counts[-1], f"{name}_count{key} and its +Inf bucket")
    return buckets, metrics[(name + "_sum", key)], total


def value(metrics, name, labels=""):
    return metrics[(name, labels)]


def status(server):
    code, body = server.http_get("/status")
    check_eq(code, 200, "GET /status")
    return json.loads(body)


def counts(server):
    return status(server)["sandboxes"]


@test(60)
async def status_fields(ri):
    s = Server(ri, args=["--server-id", "srv-status-test"])
    st = status(s)
    check_eq(st["status"], "ok", "status (what the original's clients read)")
    out = subprocess.run([ri, "--version"], capture_output=True, text=True).stdout
    check(st["version"] in out, f"version {st['version']!r} is not ri --version's {out!r}")
    check_eq(st["server_id"], "srv-status-test", "server_id")
    check(isinstance(st["uptime_seconds"], int) and st["uptime_seconds"] >= 0, f"uptime {st['uptime_seconds']!r}")
    check_eq(st["checkpointing"], True, "checkpointing with a checkpoint path")
    check_eq(st["tls"], False, "tls without certificate")
    check_eq(st["sandboxes"], {"total": 0, "live": 0, "attached": 0, "hibernated": 0, "executing": 0,
                               "max": 1024}, "sandboxes of a new server")
    check_eq(status(Server(ri, ckpt=None))["checkpointing"], False, "checkpointing without a path")


@test(60)
async def status_counts_follow_the_sandboxes(ri):
    s = Server(ri)
    a = await create(s, module="echo", enable_checkpoint=True)
    b = await create(s, module="counter", enable_checkpoint=True)
    c = await create(s, module="counter")
    want = {"total": 3, "live": 3, "attached": 3, "hibernated": 0, "executing": 0, "max": 1024}
    check_eq(counts(s), want, "three sandboxes attached")
    # an execution blocked in ri.read is executing until its input ends
    await a.client.send({"language": "wasm", "code": b64("echo")})
    await a.client.until_status("SANDBOX_EXECUTION_RUNNING")
    check_eq(counts(s)["executing"], 1, "executing while one reads stdin")
    await a.client.send({"event": "stdin_close"})
    await a.client.until_status("SANDBOX_EXECUTION_DONE")
    check_eq(counts(s)["executing"], 0, "executing after the end")
    # a client that leaves: live, not attached
    await c.client.close()
    want.update(attached=2)
    check_eq(await settled(lambda: counts(s), want), want, "after a client left")
    # a checkpoint takes the sandbox out of memory; attach brings it back
    await checkpoint(b.client)
    want.update(total=2, live=2, attached=1)
    check_eq(await settled(lambda: counts(s), want), want, "after a checkpoint")
    await attach_running(s, b.id, b.token, restoring=True)
    want.update(total=3, live=3, attached=2)
    check_eq(counts(s), want, "after the restore")


@test(90)
async def status_counts_hibernated(ri):
    s = Server(ri, args=["--memory-budget", str(3 << 20)])
    for i in range(8):
        sess = await create(s, module="big", sandbox={"max_memory_bytes": 16 << 20})
        await value_of(sess.client, "setup", [16, i])
    for _ in range(40):
        if counts(s)["hibernated"] >= 1:
            break
        await asyncio.sleep(0.25)
    # Hibernations go on while memory is over the budget: compare the count with the images on
    # disk once two readings a quarter second apart agree (the count and the files are read at
    # different moments, so a hibernation finishing between them is not a disagreement).
    def images():
        return len([f for _, _, fs in os.walk(os.path.join(s.ckpt, "_hibernate")) for f in fs
                    if f.endswith(".img")])
    st, on_disk = counts(s), images()
    for _ in range(80):
        await asyncio.sleep(0.25)
        st2, on_disk2 = counts(s), images()
        if (st2, on_disk2) == (st, on_disk) and st["hibernated"] == on_disk:
            break
        st, on_disk = st2, on_disk2
    check(st["hibernated"] >= 1, f"nothing hibernated: {st}")
    check_eq(st["hibernated"], on_disk, "hibernated and the images on disk, once settled")
    check_eq(st["live"] + st["hibernated"], 8, "live + hibernated")
    check_eq(st["attached"], 8, "attached (hibernation is invisible to clients)")
    m = scrape(s)
    check_eq(value(m, "ri_server_sandboxes_hibernated"), st["hibernated"], "/metrics agrees with /status")


@test(60)
async def metrics_histograms_count_executions(ri):
    s = Server(ri)
    m0 = scrape(s)
    check(re.fullmatch(r'\{version="\d+\.\d+\.\d+",libwebsockets="[^"]+",openssl="[^"]+"\}',
                       [lab for (n, lab) in m0 if n == "ri_build_info"][0]), "ri_build_info labels")
    check_eq([v for (n, _), v in m0.items() if n == "ri_build_info"], [1.0], "ri_build_info value")
    check(value(m0, "ri_server_uptime_seconds") >= 0, "uptime gauge")
    for kind in ("run", "execute"):
        _, total, n = hist(m0, "ri_server_execution_duration_seconds", f'kind="{kind}"')
        check_eq((total, n), (0.0, 0.0), f"execution histogram {kind} of a new server")
    sess = await create(s, module="counter")
    for _ in range(3):
        await value_of(sess.client, "increment")
    await run_wasm(sess.client, "counter")
    await run_wasm(sess.client, "trap")                    # a trap: an execution too
    await sess.client.send({"language": "wasm", "code": "not base64!"})  # started, fails to load
    await sess.client.until_status("SANDBOX_EXECUTION_DONE")
    r = await action(sess.client, "execute", function="nope")  # fails: counted
    check_eq(r.get("ok"), False, "execute of a missing export")
    m1 = scrape(s)
    _, _, runs = hist(m1, "ri_server_execution_duration_seconds", 'kind="run"')
    _, _, execs = hist(m1, "ri_server_execution_duration_seconds", 'kind="execute"')
    check_eq(runs, 3.0, "run executions in the histogram")
    check_eq(execs, 4.0, "execute actions in the histogram")
    check_eq(value(m1, "ri_server_executions_total") - value(m0, "ri_server_executions_total"), 7.0,
             "ri_server_executions_total")
    # refused requests: counted apart, not in the histogram
    await sess.client.send({"language": "cobol", "code": "DISPLAY 1."})
    await sess.client.until_status("SANDBOX_EXECUTION_DONE")
    await sess.client.send({"language": "wasm", "code": 5})
    await sess.client.until_status("SANDBOX_EXECUTION_DONE")
    m2 = scrape(s)
    check_eq(value(m2, "ri_server_executions_refused_total"), 2.0, "refused execution requests")
    check_eq(hist(m2, "ri_server_execution_duration_seconds", 'kind="run"')[2], 3.0, "runs after refusals")


@test(60)
async def metrics_histograms_of_checkpoints_and_restores(ri):
    s = Server(ri)
    m0 = scrape(s)
    for name in ("ri_server_checkpoint_duration_seconds", "ri_server_checkpoint_bytes",
                 "ri_server_restore_duration_seconds", "ri_server_restore_bytes"):
        check_eq(hist(m0, name)[1:], (0.0, 0.0), f"{name} of a new server")
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "increment")
    await checkpoint(sess.client)
    ckdir = os.path.join(s.ckpt, sess.id, "checkpoints")

    def latest():
        with open(os.path.join(ckdir, "latest")) as f:
            name = f.read().strip()
        return name, os.path.getsize(os.path.join(ckdir, name))

    first, first_size = latest()
    m1 = scrape(s)
    check_eq(hist(m1, "ri_server_checkpoint_duration_seconds")[2], 1.0, "checkpoint durations")
    check_eq(hist(m1, "ri_server_checkpoint_bytes")[1:], (float(first_size), 1.0), "checkpoint bytes (sum, count)")
    check_eq(value(m1, "ri_server_checkpoints_total"), 1.0, "checkpoints_total")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    m2 = scrape(s)
    check_eq(hist(m2, "ri_server_restore_duration_seconds")[2], 1.0, "restore durations")
    check_eq(hist(m2, "ri_server_restore_bytes")[1:], (float(first_size), 1.0), "restore bytes of a full image")
    # a second checkpoint (full or delta), then its restore: a delta is read with its parent
    await value_of(c, "increment")
    await checkpoint(c)
    second, second_size = latest()
    with open(os.path.join(s.ckpt, sess.id, "metadata.json")) as f:
        full = json.load(f).get("full_image", {})
    read = second_size + (full["bytes"] if full.get("file") != second else 0)
    m3 = scrape(s)
    check_eq(hist(m3, "ri_server_checkpoint_bytes")[1:], (float(first_size + second_size), 2.0),
             "checkpoint bytes after two")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 2, "the counter after two restores")
    m4 = scrape(s)
    check_eq(hist(m4, "ri_server_restore_bytes")[1:], (float(first_size + read), 2.0), "restore bytes after two")
    check_eq(hist(m4, "ri_server_restore_duration_seconds")[2], value(m4, "ri_server_restores_total"),
             "restore durations and restores_total")
    # a refused checkpoint is not in the histograms
    d = await create(s, module="counter")
    await d.client.send({"action": "checkpoint"})
    got = await d.client.until_closed(10)
    check_eq(statuses(got), ["SANDBOX_CHECKPOINTING", "SANDBOX_CHECKPOINT_ERROR"], "refused checkpoint")
    check_eq(hist(scrape(s), "ri_server_checkpoint_bytes")[2], 2.0, "checkpoint bytes after a refusal")


@test(90)
async def restore_bytes_of_a_delta_include_its_parent(ri):
    s = Server(ri)
    sess = await create(s, module="big", enable_checkpoint=True, sandbox={"max_memory_bytes": 16 << 20})
    await value_of(sess.client, "setup", [64, 7], timeout=60)       # 4 MiB
    await checkpoint(sess.client)
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    meta = os.path.join(s.ckpt, sess.id, "metadata.json")
    with open(meta) as f:
        full = json.load(f)["full_image"]
    await value_of(c, "touch", [(64 * 65536 // 100) & ~3, 9], timeout=60)  # 1%: a delta
    await checkpoint(c)
    ckdir = os.path.join(s.ckpt, sess.id, "checkpoints")
    with open(os.path.join(ckdir, "latest")) as f:
        delta = f.read().strip()
    check(delta != full["file"], "the second checkpoint is a full image, not a delta")
    delta_size = os.path.getsize(os.path.join(ckdir, delta))
    check(delta_size * 8 < full["bytes"], f"a delta of {delta_size} bytes on a full image of {full['bytes']}")
    await attach_running(s, sess.id, sess.token, restoring=True)
    m = scrape(s)
    check_eq(hist(m, "ri_server_restore_bytes")[1:], (float(full["bytes"] + full["bytes"] + delta_size), 2.0),
             "restore bytes: the full image, then the delta and its parent")
    check_eq(hist(m, "ri_server_checkpoint_bytes")[1:], (float(full["bytes"] + delta_size), 2.0),
             "checkpoint bytes: the full image and the delta")


if __name__ == "__main__":
    main()
