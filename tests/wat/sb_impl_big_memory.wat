;; Fixture: declares 300 pages (19,660,800 bytes), above the default 16 MiB limit.
(module (memory 300))
