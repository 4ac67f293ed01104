;; Fixture: imports from a namespace other than env.
(module (import "js" "log" (func (param i32))))
