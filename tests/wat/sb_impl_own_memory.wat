;; Fixture: a module with its own memory (not env.memory), a mutable global, a table
;; and a passive data segment: state WSNP v1 cannot hold once changed.
(module
  (memory (export "mem") 2 10)
  (global $counter (mut i32) (i32.const 0))
  (table $t 1 10 funcref)
  (data $d "abc")
  (func (export "grow") (param i32) (result i32) local.get 0 memory.grow)
  (func (export "pages") (result i32) memory.size)
  (func (export "poke") (param i32 i32) local.get 0 local.get 1 i32.store)
  (func (export "peek") (param i32) (result i32) local.get 0 i32.load)
  (func (export "gincr") (result i32)
    global.get $counter i32.const 1 i32.add global.set $counter global.get $counter)
  (func (export "tgrow") (result i32) ref.null func i32.const 2 table.grow $t)
  (func (export "drop_data") data.drop $d)
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add))
