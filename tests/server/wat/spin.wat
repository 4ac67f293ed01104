;; Writes "spinning\n", then loops forever without any host call: only an interrupt stops it.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "spinning\n")
  (func (export "_start")
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 9)))
    (loop $forever (br $forever))))
