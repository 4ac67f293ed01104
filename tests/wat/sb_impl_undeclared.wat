;; Fixture: imports an env function no one declared.
(module (import "env" "mystery" (func)))
