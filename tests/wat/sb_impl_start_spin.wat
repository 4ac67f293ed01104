;; Fixture: a start function that never ends (load must still time out).
(module (func $spin (loop $l br $l)) (start $spin))
