;; Calls started() and then loops forever: what an interrupt from another thread stops.
(module
  (import "env" "started" (func $started))
  (func (export "spin") (call $started) (loop $l (br $l))))
