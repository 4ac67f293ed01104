"""No leak: 2,000 cycles of create, load, snapshot (v1 and v2), execute (a JSON result),
checkpoint, fork and close must not grow the C heap (glibc's mallinfo2: the bytes malloc has
handed out), the process's memory or its file descriptors. Per cycle, a leaked v1 snapshot
buffer is 64 KB, a leaked result text 4 KB, a leaked sandbox its memory and a descriptor."""

import ctypes
import os

import ri

CYCLES = 2000
WARMUP = 200


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def heap_in_use():
    """Bytes malloc has handed out and not had back (None without glibc's mallinfo2)."""
    try:
        fn = ctypes.CDLL(None).mallinfo2
    except AttributeError:
        return None
    fn.restype = _Mallinfo2
    info = fn()
    return info.uordblks + info.hblkhd or None


def test_no_leak(wasm):
    module = wasm("echo")
    payload = {"data": "x" * 4000}

    def cycle():
        with ri.Sandbox() as sb:
            sb.load(module)
            assert len(sb.snapshot(format="v1")) > 65536
            assert sb.execute("echo", payload) == payload
            assert len(sb.snapshot()) > 0
            with sb.checkpoint():
                sb.fork().close()
    for _ in range(WARMUP):
        cycle()
    rss, heap, nfds = rss_bytes(), heap_in_use(), len(os.listdir("/proc/self/fd"))
    for _ in range(CYCLES):
        cycle()
    if heap is not None:
        grown = heap_in_use() - heap
        assert grown < 1024 * 1024, f"the C heap grew by {grown} bytes over {CYCLES} cycles"
    grown = rss_bytes() - rss
    assert grown < 24 * 1024 * 1024, f"RSS grew by {grown} bytes over {CYCLES} cycles"
    assert len(os.listdir("/proc/self/fd")) <= nfds + 5
