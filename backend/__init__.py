import sys

__version__ = "0.1.0"

# structlog's package imports its console helpers (structlog.dev, structlog.tracebacks), which import
# rich, and through it pygments and attrs, for coloured tracebacks whenever rich is installed (the
# virtualenv has it: the agent's CLI). The server writes JSON lines (backend/logs.py) and never uses
# them: ~85 ms of CPU in every process that imports it (its API processes, Celery workers and beat,
# `iowatt-server`). So structlog is imported here, first, while rich reads as absent; rich is
# importable again right after, for any code that asks for it later. An import of rich in a server
# process fails tests/backend/test_startup_imports.py.
if "structlog" not in sys.modules and "rich" not in sys.modules:
    sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]
