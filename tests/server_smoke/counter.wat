(module
  (global $c (mut i32) (i32.const 0))
  (memory 1)
  (func (export "inc") (result i32)
    (global.set $c (i32.add (global.get $c) (i32.const 1)))
    (global.get $c))
  (func (export "add") (param i32 i32) (result i32) (i32.add (local.get 0) (local.get 1)))
  (func (export "_start") (drop (call 0)))
  (func (export "boom") unreachable))
