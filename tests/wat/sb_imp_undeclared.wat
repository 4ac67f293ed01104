;; Import isolation fixture: an env function no one declared.
(module
  (import "env" "undeclared_fn" (func)))
