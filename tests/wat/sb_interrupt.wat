;; Sandbox fixture: tells the host it is running (env.started), then spins forever
;; without host calls; only an interrupt, gas or the timeout stops it.
(module
  (import "env" "started" (func $started))
  (func (export "run")
    call $started
    (loop $forever
      br $forever)))
