;; tests/unit/test_slot_repr.c: i32 and f32 values in every place the engine keeps one in a
;; 64-bit slot (globals, constant expressions, arguments and results of calls in both
;; directions), each written one way and read another.
(module
  (import "env" "off" (global $off i32))
  (import "env" "mg" (global $mg (mut i32)))
  (import "env" "host" (func $host (param i32 f32) (result i32)))
  (memory (export "memory") 1)
  (global $g (export "g") (mut i32) (i32.const -2))
  (global $f (export "f") (mut f32) (f32.const -0x1.000002p-126))
  (global $c (export "c") i32 (global.get $off))
  (table (export "t") 8 funcref)
  (elem (i32.const 5) $id)
  (data (global.get $off) "\2a")
  (data (i32.const 0x2345) "\2b")
  (func $id (export "id") (param i32) (result i32) (local.get 0))
  (func (export "set_g") (param i32) (global.set $g (local.get 0)))
  (func (export "get_g") (result i32) (global.get $g))
  (func (export "get_f_bits") (result i32) (i32.reinterpret_f32 (global.get $f)))
  (func (export "get_mg") (result i32) (global.get $mg))
  (func (export "call_host") (param i32 f32) (result i32) (call $host (local.get 0) (local.get 1)))
  (func (export "call_5") (param i32) (result i32) (call_indirect (param i32) (result i32) (local.get 0) (i32.const 5)))
)
