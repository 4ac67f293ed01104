;; Sandbox fixture: defines its own memory (1 page, no maximum) instead of importing one.
(module
  (memory (export "memory") 1)
  (func (export "getMemSize") (result i32) memory.size)
  (func (export "allocate") (param $pages i32) (result i32)
    local.get $pages
    memory.grow)
  (func (export "store8") (param $addr i32) (param $val i32)
    local.get $addr
    local.get $val
    i32.store8)
  (func (export "load8") (param $addr i32) (result i32)
    local.get $addr
    i32.load8_u))
