;; Snapshot fixture for the snapshot layer on the bare engine: a memory, an externref
;; table and an imported function placed in a funcref table.
(module
  (import "host" "f" (func $f (result i32)))
  (memory (export "memory") 1 4)
  (table (export "refs") 2 externref)
  (table (export "funcs") 3 funcref)
  (global (export "g") (mut i32) (i32.const 0))
  (elem (table 1) (i32.const 0) func $f $own)
  (func $own (result i32) i32.const 42)
  (func (export "grow") (param i32) (result i32) (memory.grow (local.get 0))))
