;; Sandbox fixture (test_sandbox_threads.c): a loop that calls an import once every
;; 1,024 rounds. Interrupts and time slices must stop it although the host calls
;; come often enough to keep the engine's gas chunk topped up.
(module
  (import "env" "tick" (func $tick (param i32) (result i32)))
  ;; n rounds of an LCG; every 1,024th round passes the state through env.tick
  (func (export "run") (param $n i32) (result i32)
    (local $i i32) (local $x i32)
    (local.set $x (i32.const 1))
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $x (i32.add (i32.mul (local.get $x) (i32.const 1103515245)) (i32.const 12345)))
        (if (i32.eqz (i32.and (local.get $i) (i32.const 1023)))
          (then (local.set $x (call $tick (local.get $x)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $x)))
