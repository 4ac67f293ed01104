;; Import isolation fixture: a namespace other than env (undeclared).
(module
  (import "custom_ns" "something" (func)))
