;; The cross-architecture determinism check (scripts/check-cross.sh): every kind of value in
;; every place a value is kept -- mutable globals of the four types (an i32 and an f32 with
;; the high bit set, NaN payloads), segments at non-zero constant offsets, a funcref table
;; that grows and is written, memory of every access width, loads and stores -- so that a
;; value read through the wrong half of a 64-bit slot, a byte-order slip or float arithmetic
;; at another precision changes the result, the snapshot bytes or both. No imports: any
;; sandbox runs it. `mix N` runs N rounds (long enough to pause in, many times).
(module
  (memory (export "memory") 1 4)
  (global $gi (mut i32) (i32.const -123456789))
  (global $gl (mut i64) (i64.const 0x0123456789ABCDEF))
  (global $gf (mut f32) (f32.const -1.5))
  (global $gd (mut f64) (f64.const 3.25))
  (global $k i32 (i32.const 0x8000_0001))
  (global $nanf (mut f32) (f32.const nan:0x200001))
  (type $ii (func (param i32) (result i32)))
  (table $t 4 16 funcref)
  (elem (i32.const 1) $sq $tri $rot)
  (data (i32.const 0x1234) "\01\02\03\04\05\06\07\08 wasm, big and little")
  (data (i32.const 0xFFF0) "\ff\fe\fd\fc")
  (func $sq (type $ii) (param $x i32) (result i32)
    (i32.add (i32.mul (local.get $x) (local.get $x)) (global.get $k)))
  (func $tri (type $ii) (param $x i32) (result i32)
    (if (result i32) (i32.le_s (local.get $x) (i32.const 0))
      (then (i32.const 0))
      (else (i32.add (local.get $x) (call $tri (i32.sub (local.get $x) (i32.const 1)))))))
  (func $rot (type $ii) (param $x i32) (result i32)
    (i32.xor (i32.rotl (local.get $x) (i32.const 13)) (i32.load16_s (i32.const 0x1236))))
  ;; f32 arithmetic that differs when evaluated in double and rounded once (a*b+c, a/b*c)
  (func $fstep (param $a f32) (param $b f32) (result f32)
    (f32.add
      (f32.mul (local.get $a) (local.get $b))
      (f32.div (f32.sqrt (f32.abs (local.get $a))) (f32.add (local.get $b) (f32.const 3.0)))))
  (func (export "mix") (param $n i32) (result i64)
    (local $i i32) (local $acc i64) (local $f f32) (local $d f64) (local $x i32)
    (local.set $f (f32.const 0.1))
    (local.set $d (f64.const 0.7))
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        ;; a table entry written, and called through
        (if (i32.eqz (i32.and (local.get $i) (i32.const 31)))
          (then (drop (table.grow $t (ref.func $sq) (i32.const 1)))
                (table.set $t (i32.const 0) (table.get $t (i32.add (i32.const 1) (i32.rem_u (local.get $i) (i32.const 3)))))))
        (local.set $x
          (call_indirect (type $ii) (i32.and (local.get $i) (i32.const 15))
            (i32.rem_u (local.get $i) (table.size $t))))
        ;; globals of every type, both halves of their slot in play
        (global.set $gi (i32.sub (i32.mul (global.get $gi) (i32.const -7)) (local.get $x)))
        (global.set $gl (i64.xor (i64.rotl (global.get $gl) (i64.const 5)) (i64.extend_i32_s (global.get $gi))))
        (local.set $f (call $fstep (local.get $f) (f32.convert_i32_s (i32.and (local.get $x) (i32.const 255)))))
        (global.set $gf (f32.sub (global.get $gf) (f32.demote_f64 (f64.promote_f32 (local.get $f)))))
        (local.set $d (f64.add (f64.mul (local.get $d) (f64.const 1.0000001)) (f64.convert_i64_s (i64.shr_s (global.get $gl) (i64.const 40)))))
        (global.set $gd (f64.nearest (f64.div (local.get $d) (f64.const 3.0))))
        (global.set $nanf (f32.copysign (global.get $nanf) (global.get $gf)))
        ;; memory at every width
        (i32.store (i32.add (i32.const 0x100) (i32.shl (i32.and (local.get $i) (i32.const 63)) (i32.const 2))) (global.get $gi))
        (i64.store (i32.add (i32.const 0x400) (i32.shl (i32.and (local.get $i) (i32.const 63)) (i32.const 3))) (global.get $gl))
        (i32.store16 (i32.add (i32.const 0x800) (i32.and (local.get $i) (i32.const 127))) (local.get $x))
        (i32.store8 (i32.add (i32.const 0x900) (i32.and (local.get $i) (i32.const 127))) (local.get $x))
        (f32.store (i32.const 0xA00) (global.get $gf))
        (f64.store (i32.const 0xA08) (global.get $gd))
        (f32.store (i32.const 0xA10) (global.get $nanf))
        (if (i32.eq (local.get $i) (i32.const 50))
          (then (drop (memory.grow (i32.const 1)))
                (memory.copy (i32.const 0x10000) (i32.const 0x1234) (i32.const 40))))
        (local.set $acc
          (i64.add
            (i64.rotl (local.get $acc) (i64.const 7))
            (i64.add
              (i64.load (i32.add (i32.const 0x1230) (i32.and (local.get $i) (i32.const 7))))
              (i64.add
                (i64.extend_i32_u (i32.load16_u (i32.add (i32.const 0x800) (i32.and (local.get $i) (i32.const 63)))))
                (i64.add (i64.reinterpret_f64 (global.get $gd))
                         (i64.extend_i32_u (i32.reinterpret_f32 (local.get $f))))))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (i64.xor (local.get $acc) (i64.extend_i32_u (i32.load (i32.const 0xFFF0)))))
  ;; the globals' values, as the API reads them
  (func (export "gi") (result i32) (global.get $gi))
  (func (export "gl") (result i64) (global.get $gl))
  (func (export "gf") (result f32) (global.get $gf))
  (func (export "gd") (result f64) (global.get $gd))
)
