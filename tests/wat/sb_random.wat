;; Sandbox fixture: deterministic randomness through env.__get_random.
(module
  (import "env" "__get_random" (func $random (result i32)))
  (func (export "getRandom") (result i32) call $random)
  ;; Draws $n values and returns the last one (0 when $n is 0).
  (func (export "randN") (param $n i32) (result i32)
    (local $last i32)
    (block $done
      (loop $draw
        local.get $n
        i32.eqz
        br_if $done
        call $random
        local.set $last
        local.get $n
        i32.const 1
        i32.sub
        local.set $n
        br $draw))
    local.get $last))
