;; ri-bench-workspace's module (bench/workspace_bench.c): 16 MiB of memory that fill writes
;; whole (every page non-zero, as a busy sandbox's).
(module
  (memory (export "memory") 256)
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
