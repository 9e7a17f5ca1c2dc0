"""Series: what a team tracks over time (a workload on a target in an environment), their
history and the changes found in it (stats.py: pure; service.py: the database side)."""
