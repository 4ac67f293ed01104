;; Issue 5's benchmark module (bench/snapshot_bench.c): a memory that grows to 4096
;; pages, filled with part pseudo-random, part repetitive bytes (so that compression
;; has something to do and something to find), and a way to write a few pages.
(module
  (memory (export "memory") 1 65536)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  ;; Every page: 16 KiB of LCG words, then 48 KiB of one byte value.
  (func (export "fill") (param $pages i32) (param $seed i32)
    (local $p i32) (local $a i32) (local $end i32) (local $x i32)
    (local.set $x (local.get $seed))
    (block $done
      (loop $page
        (br_if $done (i32.ge_u (local.get $p) (local.get $pages)))
        (local.set $a (i32.mul (local.get $p) (i32.const 65536)))
        (local.set $end (i32.add (local.get $a) (i32.const 16384)))
        (block $wdone
          (loop $word
            (br_if $wdone (i32.ge_u (local.get $a) (local.get $end)))
            (local.set $x (i32.add (i32.mul (local.get $x) (i32.const 1664525)) (i32.const 1013904223)))
            (i32.store (local.get $a) (local.get $x))
            (local.set $a (i32.add (local.get $a) (i32.const 4)))
            (br $word)))
        (memory.fill (local.get $a) (i32.and (local.get $p) (i32.const 255)) (i32.const 49152))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $page))))
  ;; Stores val at the start of `count` pages: first, first + stride, ...
  (func (export "touch") (param $first i32) (param $count i32) (param $stride i32) (param $val i32)
    (local $k i32)
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $k) (local.get $count)))
        (i32.store
          (i32.mul (i32.add (local.get $first) (i32.mul (local.get $k) (local.get $stride))) (i32.const 65536))
          (local.get $val))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $next)))))
