;; Sandbox fixture: the direct calling convention with every number type.
(module
  (memory (export "mem") 1)
  (global (export "g") i32 (i32.const 1))
  (func (export "add") (param i32 i32) (result i32)
    local.get 0
    local.get 1
    i32.add)
  (func (export "add3") (param i32 i32 i32) (result i32)
    local.get 0
    local.get 1
    i32.add
    local.get 2
    i32.add)
  (func (export "negI32") (result i32) i32.const -7)
  (func (export "id64") (param i64) (result i64) local.get 0)
  (func (export "add64") (param i64 i64) (result i64)
    local.get 0
    local.get 1
    i64.add)
  ;; 2^53 + 1: not representable as a double.
  (func (export "pow53plus1") (result i64) i64.const 9007199254740993)
  (func (export "minI64") (result i64) i64.const -9223372036854775808)
  (func (export "addF32") (param f32 f32) (result f32)
    local.get 0
    local.get 1
    f32.add)
  (func (export "mulF64") (param f64 f64) (result f64)
    local.get 0
    local.get 1
    f64.mul)
  ;; i32 + i64 + f32 + f64, as f64.
  (func (export "mixed") (param i32 i64 f32 f64) (result f64)
    local.get 0
    f64.convert_i32_s
    local.get 1
    f64.convert_i64_s
    f64.add
    local.get 2
    f64.promote_f32
    f64.add
    local.get 3
    f64.add)
  (func (export "pair") (result i32 i32)
    i32.const 1
    i32.const 2)
  (func (export "nothing")))
