;; ri-bench-startup's module: one exported function that does nothing, so `ri run` costs only
;; its own start-up.
(module (func (export "_start")))
