;; The module of the embedding example (examples/embed.c, docs/GUIDE.md): a counter in
;; linear memory that reports each new value to a host function of the embedder.
(module
  (import "env" "memory" (memory 1))
  (import "env" "report" (func $report (param i32)))
  ;; step() -> the counter after adding 1; the host hears of it first
  (func (export "step") (result i32)
    (i32.store (i32.const 0) (i32.add (i32.load (i32.const 0)) (i32.const 1)))
    (call $report (i32.load (i32.const 0)))
    (i32.load (i32.const 0)))
  ;; spin(): never ends on its own (the gas limit ends it)
  (func (export "spin") (loop $l (br $l))))
