;; Memory-heavy sandbox for checkpoint tests and benchmarks.
;;   setup(pages, seed): grows memory to `pages` 64 KiB pages and fills it all with an LCG
;;                       stream from seed (incompressible-ish content); returns the page count
;;   touch(bytes, seed): overwrites the first `bytes` bytes (multiple of 4) with an LCG stream
;;   sum(): a checksum of the whole memory (rotate-xor-add of every 32-bit word)
(module
  (import "env" "memory" (memory 1))
  (func $lcg_fill (param $end i32) (param $x i32)
    (local $p i32)
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $x (i32.add (i32.mul (local.get $x) (i32.const 1664525)) (i32.const 1013904223)))
        (i32.store (local.get $p) (local.get $x))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $each))))
  (func (export "setup") (param $pages i32) (param $seed i32) (result i32)
    (if (i32.gt_u (local.get $pages) (memory.size))
      (then (drop (memory.grow (i32.sub (local.get $pages) (memory.size))))))
    (call $lcg_fill (i32.shl (memory.size) (i32.const 16)) (local.get $seed))
    (memory.size))
  (func (export "touch") (param $bytes i32) (param $seed i32) (result i32)
    (call $lcg_fill (local.get $bytes) (local.get $seed))
    (local.get $bytes))
  (func (export "sum") (result i32)
    (local $p i32) (local $end i32) (local $h i32)
    (local.set $end (i32.shl (memory.size) (i32.const 16)))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $h (i32.add (i32.rotl (local.get $h) (i32.const 5)) (i32.load (local.get $p))))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $each)))
    (local.get $h)))
