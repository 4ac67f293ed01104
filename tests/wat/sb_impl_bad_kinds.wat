;; Fixture: env.__get_time imported with the wrong signature.
(module (import "env" "__get_time" (func (result i64))))
