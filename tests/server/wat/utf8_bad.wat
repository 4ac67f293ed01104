;; Invalid UTF-8 on stdout: "a\ff" "b" (a byte that never starts a character), "c\80d" (a lone
;; continuation byte), then "\e2\82" (a character cut off by the end of the execution).
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "a\ffbc\80d\e2\82")
  (func (export "_start")
    (drop (call $write (i32.const 1) (i32.const 16) (i32.const 2)))
    (drop (call $write (i32.const 1) (i32.const 18) (i32.const 1)))
    (drop (call $write (i32.const 1) (i32.const 19) (i32.const 3)))
    (drop (call $write (i32.const 1) (i32.const 22) (i32.const 2)))))
