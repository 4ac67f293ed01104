;; Sandbox fixture: mutable and immutable globals, a table and a passive data segment,
;; whose changes WSNP v1 cannot hold.
(module
  (import "env" "memory" (memory 1))
  (data $greeting "xyz")
  (global $fixed i32 (i32.const 5))
  (global $count (mut i32) (i32.const 0))
  (table $t 2 funcref)
  (elem (i32.const 0) $one $two)
  (func $one (result i32) i32.const 1)
  (func $two (result i32) i32.const 2)
  (func (export "increment") (result i32)
    global.get $count
    i32.const 1
    i32.add
    global.set $count
    global.get $count)
  (func (export "resetCount")
    i32.const 0
    global.set $count)
  (func (export "get") (result i32) global.get $count)
  (func (export "fixed") (result i32) global.get $fixed)
  ;; table[0] = $two
  (func (export "swap")
    i32.const 0
    ref.func $two
    table.set $t)
  ;; table[0] = $one again
  (func (export "unswap")
    i32.const 0
    ref.func $one
    table.set $t)
  (func (export "callSlot0") (result i32)
    i32.const 0
    call_indirect (result i32))
  (func (export "growTable") (result i32)
    ref.null func
    i32.const 1
    table.grow $t)
  (func (export "store8") (param $addr i32) (param $val i32)
    local.get $addr
    local.get $val
    i32.store8)
  (func (export "load8") (param $addr i32) (result i32)
    local.get $addr
    i32.load8_u)
  ;; Copies the passive segment to 200 (traps once it is dropped).
  (func (export "initData")
    i32.const 200
    i32.const 0
    i32.const 3
    memory.init $greeting)
  (func (export "dropData")
    data.drop $greeting))
