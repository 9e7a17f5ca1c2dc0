"""Two API processes on two ports from one import, for tests/backend/conftest.py's `pair`:

    python -m tests.backend.api_pair PORT_A PORT_B

The app's modules are imported here once and the second process is a fork of this one, as
`backend.serve` starts its processes (`_fork_from_here`): each then calls create_app() and runs the
lifespan itself, with its own connections, Redis subscription and Prometheus file. This process
serves PORT_A, its fork PORT_B; a SIGTERM to the process group stops both, and this one exits once
its fork has."""

import os
import sys


def _serve(port: int) -> None:
    import uvicorn

    uvicorn.run("backend.main:create_app", factory=True, host="127.0.0.1", port=port)


def main(argv: list[str]) -> int:
    port_a, port_b = (int(p) for p in argv)
    import backend.main  # noqa: F401 - what both processes inherit (~2 CPU-s of imports, once)

    child = os.fork()
    if child == 0:
        code = 1
        try:
            _serve(port_b)
            code = 0
        finally:
            os._exit(code)
    _serve(port_a)
    os.waitpid(child, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
