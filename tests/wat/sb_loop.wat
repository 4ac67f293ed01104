;; Sandbox fixture: loops for gas and timeout tests.
(module
  (import "env" "__get_time" (func $tick (result i32)))
  ;; Never returns; makes a host call every iteration.
  (func (export "loop")
    (loop $forever
      call $tick
      drop
      br $forever))
  ;; Never returns; makes no host calls at all.
  (func (export "spin")
    (loop $forever
      br $forever))
  ;; Counts $n down to zero without host calls; returns the iterations.
  (func (export "countdown") (param $n i32) (result i32)
    (local $iters i32)
    (block $done
      (loop $again
        local.get $n
        i32.eqz
        br_if $done
        local.get $n
        i32.const 1
        i32.sub
        local.set $n
        local.get $iters
        i32.const 1
        i32.add
        local.set $iters
        br $again))
    local.get $iters))
