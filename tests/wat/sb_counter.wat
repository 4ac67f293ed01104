;; Sandbox fixture: a counter kept in a mutable global (state a v1 snapshot cannot hold).
(module
  (global $count (mut i32) (i32.const 0))
  (func (export "increment") (result i32)
    global.get $count
    i32.const 1
    i32.add
    global.set $count
    global.get $count)
  (func (export "get") (result i32) global.get $count))
