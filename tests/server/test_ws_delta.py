"""Delta checkpoints of a sandbox's workspace: after a full image of a sandbox holding 200
files (4 MiB), a process that changes a few bytes of one file and removes another is
checkpointed as a delta that stores only those changes (far below the workspace's size),
and an attach on a second server sees exactly the files the process left (each file's size
and hash, checked against the bytes the program writes)."""
import base64
import os
import re
import struct

from harness import Server, Skip, attach_running, check, check_eq, checkpoint, create, main, tempdir, test, texts

IMG_RE = re.compile(r"^checkpoint_(\d{13})\.img$")
TAIL = 16 + 48 + 20  # PRNT header + content, then the CSUM trailer
NFILES, FILE_BYTES = 200, 20480


def exec_msg(name):
    path = os.path.join(os.environ.get("RI_C_WASI_DIR", ""), name + ".wasm")
    if not os.path.exists(path):
        raise Skip(f"{path} not built (clang-19 and wasi-libc needed; RI_C_WASI_DIR)")
    with open(path, "rb") as f:
        return {"language": "wasm", "code": base64.b64encode(f.read()).decode()}


def fnv(data):
    h = 2166136261
    for b in data:
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def expected(step):
    files = {}
    for i in range(NFILES):
        files[f"f{i:03d}"] = bytearray(((i * 31 + k * 7 + (k >> 8)) & 0xFF) for k in range(FILE_BYTES))
    if step >= 1:
        files["f007"][1000:1007] = b"changed"
        del files["f123"]
    lines = [f"step {step}"] + [f"{n} {len(d)} {fnv(d):08x}" for n, d in sorted(files.items())]
    return "\n".join(lines) + "\n"


def newest(s, sid):
    d = os.path.join(s.ckpt, sid, "checkpoints")
    with open(os.path.join(d, "latest")) as f:
        name = f.read().strip()
    with open(os.path.join(d, name), "rb") as f:
        return name, f.read()


def is_delta(data):
    return len(data) > TAIL and data[-TAIL:-TAIL + 4] == b"PRNT"


async def run(client):
    await client.send(exec_msg("srv_files"))
    got = await client.until_status("SANDBOX_EXECUTION_DONE", 120)
    done = [f for f in got if f.get("status") == "SANDBOX_EXECUTION_DONE"][-1]
    check_eq(done.get("exit_code"), 0, "exit code")
    return texts(got, "stdout")


@test(240)
async def workspace_changes_only_in_a_delta_checkpoint(ri):
    vol = tempdir()
    a, b = Server(ri, ckpt=vol), Server(ri, ckpt=vol)
    sess = await create(a, enable_checkpoint=True)
    check_eq(await run(sess.client), expected(0), "the files made")
    await checkpoint(sess.client)
    full_name, full = newest(a, sess.id)
    check(not is_delta(full), "the first checkpoint is a full image")
    check(len(full) > NFILES * FILE_BYTES, f"the full image holds the 4 MiB of files ({len(full)} bytes)")
    c = await attach_running(a, sess.id, sess.token, restoring=True)
    check_eq(await run(c), expected(1), "the files after the change")
    await checkpoint(c)
    name, delta = newest(a, sess.id)
    check(name != full_name and is_delta(delta), "the second checkpoint is a delta")
    # the process's memory (a new instance each run: all its pages) and the changes, not
    # the 4 MiB of files
    print(f"full image {len(full)} bytes, delta {len(delta)} bytes")
    check(len(delta) < len(full) // 4, f"the delta is {len(delta)} bytes, the full image {len(full)}")
    c2 = await attach_running(b, sess.id, sess.token, restoring=True)
    check_eq(await run(c2), expected(2), "the files on the second server")
    await checkpoint(c2)
    name3, delta3 = newest(b, sess.id)
    check(is_delta(delta3), "a checkpoint of the sandbox restored from the delta is a delta too")
    check_eq(struct.unpack("<Q", delta3[-TAIL + 16 + 32:-TAIL + 16 + 40])[0], len(full), "its parent: the full image")
    c3 = await attach_running(a, sess.id, sess.token, restoring=True)
    check_eq(await run(c3), expected(3), "the files after two deltas")


if __name__ == "__main__":
    main()
