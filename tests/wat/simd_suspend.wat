;; A SIMD loop for the pause/snapshot/resume test (test_simd_suspend.c): v128 locals,
;; parameters, results and operands below a call, memory, lanes of every width, and v128
;; globals (one mutable, changed every iteration; one immutable, checked on restore).
(module
  (memory (export "memory") 1)
  (global $g (export "g") (mut v128) (v128.const i32x4 5 6 7 8))
  (global $k v128 (v128.const i64x2 0x1111222233334444 0x5555666677778888))
  (func $mix (param $a v128) (param $b v128) (param $k i32) (result v128)
    (local $t v128)
    (local.set $t (i8x16.shuffle 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 (local.get $a) (local.get $b)))
    (i16x8.add_sat_u
      (i32x4.mul (local.get $t) (i32x4.splat (i32.add (local.get $k) (i32.const 0x9e3779b9))))
      (f32x4.convert_i32x4_u (i32x4.shr_u (local.get $b) (i32.const 3)))))
  (func (export "simd") (param $n i32) (result i64)
    (local $acc v128) (local $x v128) (local $i i32)
    (local.set $acc (v128.const i32x4 1 2 3 4))
    (local.set $x (v128.const i64x2 0x0123456789abcdef 0x7fedcba987654321))
    (loop $l
      ;; an operand below the call: acc stays on the stack while $mix runs
      (local.set $acc
        (v128.xor
          (local.get $acc)
          (call $mix (local.get $x) (local.get $acc) (local.get $i))))
      (v128.store offset=16 (i32.and (i32.mul (local.get $i) (i32.const 8)) (i32.const 1023)) (local.get $acc))
      (local.set $x
        (i64x2.add (local.get $x)
          (v128.load32x2_u offset=20 (i32.and (i32.mul (local.get $i) (i32.const 8)) (i32.const 1023)))))
      (local.set $x (f64x2.add (local.get $x) (f64x2.splat (f64.const 1.5))))
      (global.set $g (i32x4.add (v128.xor (global.get $g) (global.get $k)) (local.get $acc)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (local.get $n))))
    (i64.xor
      (i64x2.extract_lane 1 (global.get $g))
      (i64.xor
        (i64x2.extract_lane 0 (i16x8.max_s (local.get $acc) (local.get $x)))
        (i64.add (i64x2.extract_lane 1 (local.get $acc)) (i64x2.extract_lane 0 (local.get $x))))))
  ;; select on v128 (untyped and typed): 100 * lane 0 of the chosen vector + lane 1 of the other
  (func (export "sel") (param $c i32) (result i64)
    (local $a v128) (local $b v128)
    (local.set $a (v128.const i64x2 11 22))
    (local.set $b (v128.const i64x2 33 44))
    (i64.add
      (i64.mul (i64x2.extract_lane 0 (select (local.get $a) (local.get $b) (local.get $c))) (i64.const 100))
      (i64x2.extract_lane 1 (select (result v128) (local.get $b) (local.get $a) (local.get $c))))))
