"""Bounds several modules share that need no web framework (schemas import them; backend.cli and
the worker must start without FastAPI: tests/backend/test_startup_imports.py)."""

# offset bounded so a huge one is a 422, not a bigint overflow in PostgreSQL
MAX_OFFSET = 1_000_000
