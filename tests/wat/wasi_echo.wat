;; A WASI command for the stdin pause/resume and snapshot tests (tests/unit/test_wasi.c):
;; writes "saved" to the file pre.txt, prints "ready\n", then echoes each read of stdin
;; as "got:<bytes>" until end of input, and exits with code 7.
(module
  (import "wasi_snapshot_preview1" "fd_read" (func $read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open"
    (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "pre.txt")
  (data (i32.const 110) "saved")
  (data (i32.const 120) "ready\n")
  (data (i32.const 130) "got:")
  ;; iovec at 0 (buf, len) -> fd_write(fd, 0, 1, 8)
  (func $out (param $fd i32) (param $buf i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $buf))
    (i32.store (i32.const 4) (local.get $len))
    (if (call $write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8)) (then (call $exit (i32.const 2)))))
  (func (export "_start") (local $n i32)
    ;; path_open(3, follow, "pre.txt", creat, fd_write, 0, 0, &fd@12)
    (if (call $open (i32.const 3) (i32.const 1) (i32.const 100) (i32.const 7) (i32.const 1)
                    (i64.const 64) (i64.const 0) (i32.const 0) (i32.const 12))
      (then (call $exit (i32.const 3))))
    (call $out (i32.load (i32.const 12)) (i32.const 110) (i32.const 5))
    (drop (call $close (i32.load (i32.const 12))))
    (call $out (i32.const 1) (i32.const 120) (i32.const 6))
    (loop $more
      ;; iovec at 16: buf 1024, len 256; nread at 24
      (i32.store (i32.const 16) (i32.const 1024))
      (i32.store (i32.const 20) (i32.const 256))
      (if (call $read (i32.const 0) (i32.const 16) (i32.const 1) (i32.const 24)) (then (call $exit (i32.const 4))))
      (local.set $n (i32.load (i32.const 24)))
      (if (i32.eqz (local.get $n)) (then (call $exit (i32.const 7))))
      (call $out (i32.const 1) (i32.const 130) (i32.const 4))
      (call $out (i32.const 1) (i32.const 1024) (local.get $n))
      (br $more)))
)
