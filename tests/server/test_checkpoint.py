"""Checkpoint and restore on one server: the seed-002 layout, latest, metadata.json, a
checkpoint during an execution, restore on attach (state continues), NOT_FOUND, corrupt
images (RESTORE_ERROR + 4000, files untouched), checkpoint refused (sandbox stays)."""
import asyncio
import hashlib
import json
import os
import re
import subprocess
import time

import harness
from harness import (Server, Skip, attach, attach_running, b64, check, check_eq, checkpoint, create,
                     main, settled, statuses, tempdir, test, texts, value_of)

IMG_RE = re.compile(r"^checkpoint_(\d{13})\.img$")


def tree(path):
    """{relative path: sha256} of every file under path."""
    out = {}
    for d, _, files in os.walk(path):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, path)] = hashlib.sha256(fh.read()).hexdigest()
    return out


def latest(ckpt, sid):
    with open(os.path.join(ckpt, sid, "checkpoints", "latest")) as f:
        content = f.read()
    name = content.rstrip("\n")
    check(content in (name, name + "\n"), f"latest holds more than a name: {content!r}")
    check(IMG_RE.match(name), f"latest names {name!r}, not checkpoint_<ms>.img")
    return name


@test()
async def checkpoint_layout_latest_metadata(ri):
    s = Server(ri)
    t0 = int(time.time() * 1000)
    sess = await create(s, module="counter", enable_checkpoint=True, idle_timeout=123)
    for _ in range(3):
        await value_of(sess.client, "increment")
    await checkpoint(sess.client)
    t1 = int(time.time() * 1000)
    root = os.path.join(s.ckpt, sess.id)
    check(os.path.isdir(os.path.join(root, "checkpoints")), "no {id}/checkpoints/")
    name = latest(s.ckpt, sess.id)
    ms = int(IMG_RE.match(name).group(1))
    check(t0 - 1000 <= ms <= t1 + 1000, f"image timestamp {ms} not between {t0} and {t1}")
    imgs = [f for f in os.listdir(os.path.join(root, "checkpoints")) if IMG_RE.match(f)]
    check_eq(imgs, [name], "images after one checkpoint")
    img = os.path.join(root, "checkpoints", name)
    with open(img, "rb") as f:
        check(f.read(4) == b"WSNP", "the image is not a WSNP snapshot")
    leftovers = [f for f in os.listdir(os.path.join(root, "checkpoints"))
                 if f != "latest" and not IMG_RE.match(f)]
    check_eq(leftovers, [], "temporary files left in checkpoints/")
    with open(os.path.join(root, "metadata.json")) as f:
        meta = json.load(f)
    check_eq(meta.get("sandbox_id"), sess.id, "metadata sandbox_id")
    check_eq(meta.get("idle_timeout"), 123, "metadata idle_timeout")
    check_eq(meta.get("enable_checkpoint"), True, "metadata enable_checkpoint")
    raw = open(os.path.join(root, "metadata.json")).read()
    check(sess.token not in raw, "the token is stored in clear in metadata.json")
    check_eq(meta.get("token_sha256"), hashlib.sha256(sess.token.encode()).hexdigest(),
             "metadata token_sha256")


@test()
async def restore_on_attach_continues_counting(ri):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    for want in (1, 2, 3):
        check_eq(await value_of(sess.client, "increment"), want, "increment")
    await checkpoint(sess.client)
    first = latest(s.ckpt, sess.id)
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 3, "counter after restore")
    check_eq(await value_of(c, "increment"), 4, "increment after restore")
    time.sleep(0.01)
    await checkpoint(c)
    second = latest(s.ckpt, sess.id)
    check(second != first and second > first, f"latest did not move on: {first} -> {second}")
    check(os.path.isfile(os.path.join(s.ckpt, sess.id, "checkpoints", second)), "latest image missing")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    check_eq(await value_of(c, "get"), 4, "counter after the second restore")


def metrics(server):
    code, body = server.http_get("/metrics")
    out = {}
    for line in body.splitlines():
        if line and not line.startswith("#"):
            name, val = line.rsplit(" ", 1)
            out[name] = float(val)
    return out


@test()
async def metrics_count_checkpoints_and_restores(ri):
    s = Server(ri)
    m0 = metrics(s)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await checkpoint(sess.client)
    m1 = metrics(s)
    check_eq(m1["ri_server_checkpoints_total"] - m0["ri_server_checkpoints_total"], 1,
             "ri_server_checkpoints_total after one checkpoint")
    check_eq(m1["ri_server_sandboxes_live"], 0, "live sandboxes after the checkpoint")
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    m2 = metrics(s)
    check_eq(m2["ri_server_restores_total"] - m1["ri_server_restores_total"], 1,
             "ri_server_restores_total after one restore")
    check_eq(m2["ri_server_sandboxes_live"], 1, "live sandboxes after the restore")
    await checkpoint(c)
    garbage(s.ckpt, sess.id, os.path.join(s.ckpt, sess.id, "checkpoints", latest(s.ckpt, sess.id)))
    c = await attach(s, sess.id, sess.token)
    await c.until_closed(10)
    m3 = metrics(s)
    check_eq(m3["ri_server_restore_failures_total"] - m2["ri_server_restore_failures_total"], 1,
             "ri_server_restore_failures_total after a corrupt image")
    check_eq(m3["ri_server_sandboxes_live"], 0, "live sandboxes after a failed restore")


@test()
async def keep_checkpoints_prunes_old_images(ri):
    s = Server(ri, args=["--keep-checkpoints", "2"])
    sess = await create(s, module="counter", enable_checkpoint=True)
    c = sess.client
    names = []
    for i in range(4):
        await value_of(c, "increment")
        await checkpoint(c)
        names.append(latest(s.ckpt, sess.id))
        time.sleep(0.01)
        c = await attach_running(s, sess.id, sess.token, restoring=True)
    imgs = await settled(lambda: sorted(f for f in os.listdir(os.path.join(s.ckpt, sess.id, "checkpoints"))
                                        if IMG_RE.match(f)), sorted(names[-2:]))
    check_eq(imgs, sorted(names[-2:]), "images kept with --keep-checkpoints 2")
    check_eq(await value_of(c, "get"), 4, "counter after four checkpoints")


@test()
async def checkpoint_during_execution_in_progress_error(ri):
    s = Server(ri)
    sess = await create(s, enable_checkpoint=True)
    c = sess.client
    await c.send({"language": "wasm", "code": b64("echo")})
    await c.until(lambda f: f.get("event") == "stdout", 10, "ready")
    await c.send({"action": "checkpoint"})
    got = await c.until_event("error", 10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_CHECKPOINTING", "SANDBOX_EXECUTION_IN_PROGRESS_ERROR", "error"],
             "checkpoint during an execution")
    check_eq(got[-1]["message"], "Cannot checkpoint while an execution is in progress.", "message")
    check_eq(await c.quiet(0.3), [], "frames after the refusal")
    check(c.close_code is None, "the socket was closed")
    check(not os.path.exists(os.path.join(s.ckpt, sess.id, "checkpoints", "latest")),
          "an image was written during an execution")
    await c.send({"event": "stdin", "data": "done"})
    got = await c.until_status("SANDBOX_EXECUTION_DONE", 10)
    check_eq(texts(got, "stdout"), "got:done", "the execution went on")
    await checkpoint(c)


@test()
async def checkpoint_refused_without_enable(ri):
    s = Server(ri)
    sess = await create(s, module="counter")
    await value_of(sess.client, "add", [7])
    await sess.client.send({"action": "checkpoint"})
    got = await sess.client.until_closed(10)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_CHECKPOINTING", "SANDBOX_CHECKPOINT_ERROR", "error"], "refused checkpoint")
    check_eq(sess.client.close_code, 4000, "close code")
    check(not os.path.exists(os.path.join(s.ckpt, sess.id, "checkpoints")), "files written")
    # The failed checkpoint did not delete the sandbox (a flaw of the original).
    c = await attach_running(s, sess.id, sess.token, restoring=False)
    check_eq(await value_of(c, "get"), 7, "state after a failed checkpoint")


async def corrupt_case(ri, damage, what):
    s = Server(ri)
    sess = await create(s, module="counter", enable_checkpoint=True)
    await value_of(sess.client, "add", [9])
    await checkpoint(sess.client)
    name = latest(s.ckpt, sess.id)
    img = os.path.join(s.ckpt, sess.id, "checkpoints", name)
    damage(s.ckpt, sess.id, img)
    before = tree(s.ckpt)
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(15)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_RESTORING", "SANDBOX_RESTORE_ERROR", "error"], f"attach to {what}")
    check(got[-1].get("message"), "empty error message")
    check_eq(c.close_code, 4000, f"close code for {what}")
    after = tree(s.ckpt)
    # lease files may come and go; the images, latest and metadata may not change.
    keep = lambda t: {k: v for k, v in t.items() if not os.path.basename(k).startswith("lease")}
    check_eq(keep(after), keep(before), f"files after a failed restore of {what}")
    check(s.status_ok(), "server down after a corrupt image")
    # Still failing the same way the second time (nothing half-restored stays live).
    c = await attach(s, sess.id, sess.token)
    got = await c.until_closed(15)
    check_eq(statuses(got), ["SANDBOX_RESTORING", "SANDBOX_RESTORE_ERROR"], "second attempt")


def flip_middle(ckpt, sid, img):
    with open(img, "r+b") as f:
        data = bytearray(f.read())
        for i in range(len(data) // 2, min(len(data), len(data) // 2 + 16)):
            data[i] ^= 0xA5
        f.seek(0)
        f.write(data)


def truncate(ckpt, sid, img):
    size = os.path.getsize(img)
    os.truncate(img, size // 2)


def garbage(ckpt, sid, img):
    with open(img, "wb") as f:
        f.write(os.urandom(4096))


def latest_missing(ckpt, sid, img):
    with open(os.path.join(ckpt, sid, "checkpoints", "latest"), "w") as f:
        f.write("checkpoint_1111111111111.img\n")


def latest_traversal(ckpt, sid, img):
    os.makedirs(os.path.join(ckpt, "..", "elsewhere"), exist_ok=True)
    with open(os.path.join(ckpt, "..", "elsewhere", "stolen.img"), "wb") as f:
        with open(img, "rb") as g:
            f.write(g.read())
    with open(os.path.join(ckpt, sid, "checkpoints", "latest"), "w") as f:
        f.write("../../../elsewhere/stolen.img\n")


@test()
async def corrupt_image_flipped_bytes(ri):
    await corrupt_case(ri, flip_middle, "an image with flipped bytes")


@test()
async def corrupt_image_truncated(ri):
    await corrupt_case(ri, truncate, "a truncated image")


@test()
async def corrupt_image_garbage(ri):
    await corrupt_case(ri, garbage, "an image of random bytes")


@test()
async def corrupt_latest_names_missing_file(ri):
    await corrupt_case(ri, latest_missing, "latest naming a missing image")


@test()
async def corrupt_latest_path_traversal(ri):
    await corrupt_case(ri, latest_traversal, "latest naming ../../../elsewhere/stolen.img")


@test(90)
async def checkpoint_disk_full_keeps_last_image(ri):
    # A 3 MiB tmpfs as the volume: a 1 MiB image fits, a 2 MiB one next to it does not.
    mnt = tempdir("ri-srv-tmpfs-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", mnt],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise Skip(f"cannot mount a tmpfs here ({r.stderr.strip()})")
    try:
        await disk_full_case(ri, mnt)
    finally:
        for srv in harness._SERVERS:
            srv.stop(graceful=False)
        subprocess.run(["umount", "-l", mnt])


async def disk_full_case(ri, vol):
    s = Server(ri, ckpt=vol, args=["--lease-seconds", "1"])
    sess = await create(s, module="big", enable_checkpoint=True)
    await value_of(sess.client, "setup", [16, 1])
    sum1 = await value_of(sess.client, "sum")
    await checkpoint(sess.client)
    first = latest(vol, sess.id)
    ck = os.path.join(vol, sess.id, "checkpoints")
    before = tree(ck)
    c = await attach_running(s, sess.id, sess.token, restoring=True)
    await value_of(c, "setup", [32, 2])
    sum2 = await value_of(c, "sum")
    await c.send({"action": "checkpoint"})
    got = await c.until_closed(20)
    check_eq([f.get("status") or f.get("event") for f in got],
             ["SANDBOX_CHECKPOINTING", "SANDBOX_CHECKPOINT_ERROR", "error"], "checkpoint on a full disk")
    check_eq(c.close_code, 4000, "close code")
    check_eq(latest(vol, sess.id), first, "latest after the failed checkpoint")
    check_eq(tree(ck), before, "checkpoints/ after the failed checkpoint (no temp files left)")
    # The sandbox stayed live with its newer state ...
    c = await attach_running(s, sess.id, sess.token, restoring=False)
    check_eq(await value_of(c, "sum"), sum2, "live state after the failed checkpoint")
    await c.close()
    # ... and the last good image still restores, on another server process.
    s.stop(graceful=False)
    s2 = Server(ri, ckpt=vol, args=["--lease-seconds", "1"])
    for _ in range(10):  # the SIGKILLed server's lease (1 s) runs out; a client retries
        c = await attach(s2, sess.id, sess.token)
        got = await c.until(lambda f: f.get("status") in ("SANDBOX_RUNNING", "SANDBOX_IN_USE",
                                                          "SANDBOX_RESTORE_ERROR", "SANDBOX_NOT_FOUND"), 20)
        if statuses(got)[-1] != "SANDBOX_IN_USE":
            break
        await asyncio.sleep(0.5)
    check_eq(statuses(got), ["SANDBOX_RESTORING", "SANDBOX_RUNNING"], "restore of the last good image")
    check_eq(await value_of(c, "sum"), sum1, "state of the last good image")


if __name__ == "__main__":
    main()
