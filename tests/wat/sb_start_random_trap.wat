;; Sandbox fixture: the start function draws a random number, then traps, so the load
;; fails after having used the PRNG.
(module
  (import "env" "__get_random" (func $random (result i32)))
  (func $start
    call $random
    drop
    unreachable)
  (start $start))
