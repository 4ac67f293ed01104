;; ri-bench-store's module (issue 6): a memory of up to 256 pages (16 MiB) whose pages
;; are filled with pseudo-random bytes (the worst case for compression) one at a time.
(module
  (memory (export "memory") 1 256)
  (global $g (mut i32) (i32.const 0))
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0)))
  ;; Page p := xorshift32 stream from seed s (distinct seeds, distinct pages).
  (func (export "fillPage") (param $p i32) (param $s i32)
    (local $a i32) (local $end i32) (local $x i32)
    (local.set $a (i32.mul (local.get $p) (i32.const 65536)))
    (local.set $end (i32.add (local.get $a) (i32.const 65536)))
    (local.set $x (i32.or (i32.shl (local.get $s) (i32.const 1)) (i32.const 1)))
    (loop $l
      (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 13))))
      (local.set $x (i32.xor (local.get $x) (i32.shr_u (local.get $x) (i32.const 17))))
      (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 5))))
      (i32.store (local.get $a) (local.get $x))
      (local.set $a (i32.add (local.get $a) (i32.const 4)))
      (br_if $l (i32.lt_u (local.get $a) (local.get $end)))))
  (func (export "setG") (param i32) (global.set $g (local.get 0))))
