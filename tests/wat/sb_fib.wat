;; Sandbox fixture: iterative Fibonacci with one host call (env.__get_time) per step:
;; fib(n) makes n + 1 import calls, so fib(20) = 6765 costs 21 gas.
(module
  (import "env" "__get_time" (func $tick (result i32)))
  (func (export "fib") (param $n i32) (result i32)
    (local $a i32) (local $b i32) (local $i i32) (local $t i32)
    i32.const 1
    local.set $b
    (block $done
      (loop $step
        call $tick
        drop
        local.get $i
        local.get $n
        i32.ge_s
        br_if $done
        local.get $a
        local.get $b
        i32.add
        local.set $t
        local.get $b
        local.set $a
        local.get $t
        local.set $b
        local.get $i
        i32.const 1
        i32.add
        local.set $i
        br $step))
    local.get $a))
