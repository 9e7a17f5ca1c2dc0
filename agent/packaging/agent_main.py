"""Entry point of the frozen agent: the same `main` as the `iowatt-agent` console script.

It also runs one of the agent's own modules as a program, as `python -m MODULE ARGS` does: the
kinds whose work runs in a child of the agent (PTS, TPC-H, InnoDB flushing: their runner's program
is sys.executable with `-m iowatt_agent.X ...`) start the frozen agent that way, where
sys.executable is this program. Without it every such run failed on a host with the bundle
("No such option: -m"). Only modules of iowatt_agent are run."""

import runpy
import sys


def run_module(argv: list[str]) -> bool:
    if len(argv) >= 3 and argv[1] == "-m" and argv[2].startswith("iowatt_agent."):
        sys.argv = [argv[0], *argv[3:]]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
        return True
    return False


if __name__ == "__main__":
    if not run_module(sys.argv):
        from iowatt_agent.cli import main

        main()
