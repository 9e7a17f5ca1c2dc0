"""Liveness and dependencies (router.py). The worker's liveness key is here, apart from the
router, so the worker writes it without importing FastAPI (tests/backend/test_startup_imports.py)."""

WORKER_SEEN_KEY = "iowatt:worker:last_seen"
# each worker process's own beat (field: "host/pid", value: the time), for /metrics' count of live
# workers; a field older than WORKERS_FORGET_S is dropped (a worker scaled away or restarted)
WORKERS_SEEN_KEY = "iowatt:workers:seen"
WORKERS_FORGET_S = 600
