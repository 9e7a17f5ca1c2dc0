"""The agent for other hosts: the bundles `make agent-dist` builds and the script that installs
them (docs/adr/0036-agent-bundles.md)."""
