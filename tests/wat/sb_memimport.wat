;; Sandbox fixture: uses the sandbox's memory (env.memory) and grows it on request.
(module
  (import "env" "memory" (memory 1))
  (func (export "getMemSize") (result i32) memory.size)
  ;; Returns memory.grow's result: the old size in pages, or -1.
  (func (export "allocate") (param $pages i32) (result i32)
    local.get $pages
    memory.grow)
  (func (export "store8") (param $addr i32) (param $val i32)
    local.get $addr
    local.get $val
    i32.store8)
  (func (export "load8") (param $addr i32) (result i32)
    local.get $addr
    i32.load8_u)
  ;; Writes $val to $len bytes from $addr.
  (func (export "fill") (param $addr i32) (param $val i32) (param $len i32)
    local.get $addr
    local.get $val
    local.get $len
    memory.fill))
