(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "ri" "read" (func $read (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start") (local $n i32)
    (block $done
      (loop $l
        (local.set $n (call $read (i32.const 0) (i32.const 1024)))
        (br_if $done (i32.le_s (local.get $n) (i32.const 0)))
        (drop (call $write (i32.const 1) (i32.const 0) (local.get $n)))
        (br $l)))))
