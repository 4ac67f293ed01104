;; ri-bench-workspace's module (bench/workspace_bench.c): 16 MiB of memory that fill writes
;; whole (every page non-zero, as a busy sandbox's).
(module
  (memory (export "memory") 256)
  (func (export "fill") (param $seed i32) (local $i i32)
    (loop $l
      (i32.store (local.get $i) (i32.add (i32.mul (local.get $i) (i32.const 2654435761)) (local.get $seed)))
      (local.set $i (i32.add (local.get $i) (i32.const 4)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 16777216))))))
