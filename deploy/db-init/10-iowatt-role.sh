#!/bin/sh
# Run once by the postgres image when its data volume is new: the application's role `iowatt`,
# a plain login role (not a superuser, cannot create roles or databases) that owns its database.
# The password is read by psql from the environment (\getenv), so it is on no command line and,
# with statement logging off, in no server log.
set -eu
: "${IOWATT_DB_PASSWORD:?set IOWATT_DB_PASSWORD}"
psql -v ON_ERROR_STOP=1 -X --username "$POSTGRES_USER" --dbname postgres <<'SQL'
SET log_statement = 'none';
SET log_min_error_statement = 'panic';
\getenv app_password IOWATT_DB_PASSWORD
CREATE ROLE iowatt LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :'app_password';
CREATE DATABASE iowatt OWNER iowatt;
REVOKE ALL ON DATABASE iowatt FROM PUBLIC;
SQL
