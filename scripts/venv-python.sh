#!/usr/bin/env bash
# Prints the Python 3.11 interpreter the project's virtualenv is made from (make deps-py), by
# preference: $PY when set; the distribution's /usr/bin/python3.11 (Debian builds it with
# profile-guided and link-time optimisation and links libpython statically: the suite's in-process
# tests cost ~14 % less CPU than under a source build such as pyenv's default, and a pure-Python
# loop ~20 % less; docs/adr/0048-the-distributions-python.md); then python3.11 and python3 on PATH.
# It prints the interpreter's real path (pyvenv.cfg's `executable`). Each candidate must be 3.11 and able to make a virtualenv (Debian: python3.11-venv).
set -uo pipefail
usable() {
  "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info[:2] != (3, 11))' >/dev/null 2>&1
}
# the interpreter itself, not a shim or link to it (what the virtualenv's pyvenv.cfg names)
real() { "$1" -c 'import os, sys; print(os.path.realpath(sys.executable))'; }
if [ -n "${PY:-}" ]; then
  command -v "$PY" >/dev/null || { echo "venv-python: PY=$PY not found" >&2; exit 2; }
  usable "$PY" || { echo "venv-python: PY=$PY is not a Python 3.11 with venv and ensurepip" >&2; exit 2; }
  real "$PY"
  exit
fi
for p in /usr/bin/python3.11 python3.11 python3; do
  if command -v "$p" >/dev/null && usable "$p"; then
    real "$p"
    exit
  fi
done
echo "venv-python: no Python 3.11 with venv and ensurepip (Debian: apt-get install python3.11-venv)" >&2
exit 2
