;; Writes "é€😀\n" (2-, 3- and 4-byte UTF-8 characters) ONE BYTE PER write call, to stdout
;; and then to stderr: the server must never send a split character.
(module
  (import "ri" "write" (func $write (param i32 i32 i32) (result i32)))
  (import "env" "memory" (memory 1))
  (data (i32.const 16) "\c3\a9\e2\82\ac\f0\9f\98\80\0a")
  (func $bytewise (param $fd i32)
    (local $i i32)
    (loop $each
      (drop (call $write (local.get $fd) (i32.add (i32.const 16) (local.get $i)) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $each (i32.lt_u (local.get $i) (i32.const 10)))))
  (func (export "_start")
    (call $bytewise (i32.const 1))
    (call $bytewise (i32.const 2))))
