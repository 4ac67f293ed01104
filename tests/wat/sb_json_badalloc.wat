;; Sandbox fixture: an __alloc that hands out a pointer too close to the end of memory,
;; so the payload cannot be written there.
(module
  (import "env" "memory" (memory 1))
  (func (export "__alloc") (param $len i32) (result i32)
    i32.const 65530)
  (func (export "echo") (param $ptr i32) (param $len i32) (result i32)
    local.get $len
    i32.const 16
    i32.shl
    local.get $ptr
    i32.or))
