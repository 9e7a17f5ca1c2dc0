"""Liveness and dependencies (router.py). The worker's liveness key is here, apart from the
router, so the worker writes it without importing FastAPI (tests/backend/test_startup_imports.py)."""

WORKER_SEEN_KEY = "iowatt:worker:last_seen"
