;; Snapshot fixture: a module other than snap_state (for module mismatch tests), with
;; the same shape of memory.
(module
  (memory (export "memory") 1 300)
  (global $g (mut i32) (i32.const 0))
  (func (export "store") (param i32 i32) (i32.store (local.get 0) (local.get 1)))
  (func (export "load") (param i32) (result i32) (i32.load (local.get 0)))
  (func (export "bump") (result i32)
    (global.set $g (i32.add (global.get $g) (i32.const 10)))
    (global.get $g)))
