"""Entry point of the frozen agent: the same `main` as the `iowatt-agent` console script."""

from iowatt_agent.cli import main

if __name__ == "__main__":
    main()
