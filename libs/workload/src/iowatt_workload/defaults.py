"""Defaults a run has when nobody chose a value, known to the agent and the server alike."""

from __future__ import annotations

# Seconds of idle baseline before and after the load when neither the run (`idle_s`) nor the
# host's meter entry names one. The agent waits this long; the server, which cannot see the
# host's meter entries, assumes it when it sizes a lease's timeout (twice: before and after).
DEFAULT_IDLE_S = 30.0
