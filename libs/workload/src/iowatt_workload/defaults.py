"""Defaults a run has when nobody chose a value, known to the agent and the server alike."""

from __future__ import annotations

# Seconds of idle baseline before and after the load when neither the run (`idle_s`) nor the
# host's meter entry names one. The agent waits this long; the server, which cannot see the
# host's meter entries, assumes it when it sizes a lease's timeout (twice: before and after).
DEFAULT_IDLE_S = 30.0

# The short-run rule: a job that ran (or, before a result, a time-based job that asks to run)
# under MIN_RUNTIME_S seconds is flagged `short_run` (the server's compare/validity.py): caches
# and bursts weigh more in a short job. A 10 s time-based job may report 9,999 ms: TIMER_SLACK_S.
# Custom jobs default to MIN_RUNTIME_S (the UI's new-run form), so a default is never flagged; a
# preset shorter by design names why (backend/workload/builtin.py SHORT_BY_DESIGN).
MIN_RUNTIME_S = 10.0
TIMER_SLACK_S = 0.05
