;; An identity constant as the FIRST operand of a commutative operation, the other
;; operand computed by an instruction (spec: f(0) = 32, g(0) = 32, h(0) = 64, m(0) = 3).
(module
  (func (export "f") (param i32) (result i32)
    (i32.add (i32.const 0) (i32.clz (local.get 0))))
  (func (export "g") (param i32) (result i32)
    (drop (i32.add (local.get 0) (i32.const 7)))
    (i32.or (i32.const 0) (i32.clz (local.get 0))))
  (func (export "h") (param i32) (result i64)
    (i64.add (i64.const 0) (i64.clz (i64.extend_i32_u (local.get 0)))))
  (func (export "m") (param i32) (result i32)
    (i32.mul (i32.const 1) (i32.add (local.get 0) (i32.const 3)))))
