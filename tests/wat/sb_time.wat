;; Sandbox fixture: deterministic time through env.__get_time.
(module
  (import "env" "__get_time" (func $time (result i32)))
  (func (export "getTime") (result i32) call $time)
  ;; Two reads in one execution: they must agree.
  (func (export "timeTwiceEqual") (result i32)
    call $time
    call $time
    i32.eq))
