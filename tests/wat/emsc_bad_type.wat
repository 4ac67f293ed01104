;; invoke_ii with a type its name does not spell (test_emsc_profile.c: refused at load).
(module
  (import "env" "invoke_ii" (func (param i32) (result i32))))
