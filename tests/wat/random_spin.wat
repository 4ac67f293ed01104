;; CLI fixture (tests/cli/test_resume.sh): a long loop that calls env.__get_random once
;; every 1,024 rounds; time slices (--pause-on interrupt --timeout) must pause it.
(module
  (import "env" "__get_random" (func $random (result i32)))
  ;; n rounds of an LCG; every 1,024th round mixes in a random value
  (func (export "spin") (param $n i32) (result i32)
    (local $i i32) (local $x i32)
    (local.set $x (i32.const 1))
    (block $done
      (loop $top
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $x (i32.add (i32.mul (local.get $x) (i32.const 1103515245)) (i32.const 12345)))
        (if (i32.eqz (i32.and (local.get $i) (i32.const 1023)))
          (then (local.set $x (i32.xor (local.get $x) (call $random)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $top)))
    (local.get $x)))
