;; Sandbox fixture: a host function that reads the caller's memory (env.log(ptr, len)).
(module
  (import "env" "memory" (memory 1))
  (import "env" "log" (func $log (param i32 i32)))
  (data (i32.const 100) "hello from wasm")
  (func (export "callLog")
    i32.const 100
    i32.const 15
    call $log))
