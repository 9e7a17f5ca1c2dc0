"""Operating an instance: schema migrations with clear refusals (migrate.py) and backups
(backup.py), run by `iowatt-server migrate | backup | restore` (backend/cli.py)."""
