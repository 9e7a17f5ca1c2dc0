"""TPC-H-derived workload on a private DBMS instance on the device under test.

`iowatt-agent bench --preset tpch --dbms postgresql|mariadb --scale-factor SF [--streams S]
--target DIR --json` creates a new directory inside DIR, starts a private PostgreSQL or MariaDB
there (unix socket only; the whole run as an unprivileged TPC-H user: isolation.py), generates the data with
DuckDB's dbgen, bulk-loads it, runs the power test (RF1, Q1..Q22, RF2) and the throughput test
(S query streams plus a refresh stream), computes Power@Size, Throughput@Size and QphH@Size with
the spec's formulas, checks every answer, and removes the instance and its directory, also on
error or Ctrl-C. Not an audited TPC-H result: every output says "TPC-H-derived, not audited".
See docs/tpch.md and docs/adr/0023-tpch-data-generation.md. The label is libs/workload's
TPCH_LABEL."""
