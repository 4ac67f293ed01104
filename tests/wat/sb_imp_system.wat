;; Import isolation fixture: all three system imports together (accepted).
(module
  (import "env" "memory" (memory 1))
  (import "env" "__get_time" (func $time (result i32)))
  (import "env" "__get_random" (func $random (result i32)))
  (func (export "both") (result i32)
    call $time
    call $random
    i32.xor))
