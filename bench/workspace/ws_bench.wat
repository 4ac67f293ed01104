;; ri-bench-workspace's module (bench/workspace_bench.c): 16 MiB of memory that fill writes
;; whole (every page non-zero, as a busy sandbox's).
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "env" "nop" (func $nop (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 256)
  ;; n calls of fd_write(1, one iovec of 16 bytes) and of a host function with the same
  ;; signature: the cost of a WASI call against a plain host call
  (func (export "writes") (param $n i32)
    (i32.store (i32.const 16) (i32.const 64)) (i32.store (i32.const 20) (i32.const 16))
    (loop $l
      (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 32)))
      (local.tee $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l)))
  (func (export "nops") (param $n i32)
    (loop $l
      (drop (call $nop (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 32)))
      (local.tee $n (i32.sub (local.get $n) (i32.const 1)))
      (br_if $l)))
  (func (export "fill") (param $seed i32) (local $i i32)
    (loop $l
      (i32.store (local.get $i) (i32.add (i32.mul (local.get $i) (i32.const 2654435761)) (local.get $seed)))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 16777216)))))
  ;; touch: one word in every 100th page (1% of the 256 pages written since the last checkpoint)
  (func (export "touch") (param $seed i32) (local $p i32)
    (loop $l
      (i32.store (i32.mul (local.get $p) (i32.const 65536)) (local.get $seed))
      (local.set $p (i32.add (local.get $p) (i32.const 100)))
      (br_if $l (i32.lt_u (local.get $p) (i32.const 256))))))
