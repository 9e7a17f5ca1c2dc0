#!/usr/bin/env bash
# Installs the Debian packages iowatt needs when they are missing (idempotent, quiet when done).
#   install-system-deps.sh run    what the platform needs to run (`make up`)
#   install-system-deps.sh test   that and the test tools (`make test`)
#   install-system-deps.sh all    that and the benchmarks' full Chromium (`make deps`; the default)
#
# run:
#   python:  python3.11-venv (the project's virtualenv is made from Debian's Python 3.11:
#            scripts/venv-python.sh, docs/adr/0048-the-distributions-python.md)
#   server:  postgresql-15, redis-server; chromium-headless-shell (Debian's headless Chromium: the review
#            PDFs, backend/review/pdf.py; the browser tests' Chromium too, tests/browser/lib.mjs);
#            fonts-wqy-microhei (CJK glyphs for the share preview PNG: backend/sharing/preview.py)
#   engine:  liburing-dev, libaio-dev, pkg-config (io_uring and libaio ioengines)
#   agent bundles: mmdebstrap (make up's background build of the bundle for other hosts freezes the
#            agent in a Debian 11 root file system it makes with mmdebstrap: glibc 2.28;
#            scripts/agent-dist-background.sh; tests/agent_dist's minimal root file systems too)
# test:
#   engine:  clang + libclang-rt-14-dev (the libFuzzer targets, make -C agent/engine fuzzers),
#            ccache (make test-builds: sources compiled before are not compiled again),
#            binutils (readelf: tests/engine/test_hardening.py)
#   tests:   rpm (tests/agent_dist/test_bare_host.py installs the agent's .rpm into a bare Debian root
#            with rpm --root: its scriptlets, upgrade and removal; no RPM distribution's root is reachable here),
#            fio, postmark and sysbench (engine comparisons), util-linux (losetup; setpriv: tests/netns.py),
#            e2fsprogs (mkfs.ext4, chattr), strace (engine tests observe offsets and system calls),
#            libfaketime (tests/faults skews the agent's clock by ±10 min),
#            (not Debian's docker-compose: that is Compose v1, which checks docker-compose.yml against an
#            older schema; scripts/install-ops-test-tools.sh installs v2 for the tests: ADR 0049)
#            btrfs-progs (mkfs.btrfs: tests/agent/test_topology.py builds btrfs RAID 1 / RAID 10 on loop devices),
#            mariadb-server (TPC-H and heap/B-tree runs on MariaDB in the agent's tests),
#            sshfs + openssh-server + iproute2 (tests/netns.py: the group-run tests' hosts, each in a
#            network namespace of its own, on one store, a directory exported by an sshd on a private
#            port and mounted over FUSE on each; no sshd service is started: the rig runs its own)
# bench (all):
#   chromium (the full browser: bench/pages and bench/compare time pages in it; no test uses it, they
#            run in the headless shell, so make test installs no full browser: with GTK 3, which
#            only it needs, 88 MB to download and ~9 CPU-s to download and unpack on a fresh machine)
set -euo pipefail
RUN_PACKAGES=(python3.11-venv postgresql-15 redis-server chromium-headless-shell fonts-wqy-microhei liburing-dev libaio-dev pkg-config
  mmdebstrap)
TEST_PACKAGES=(clang libclang-rt-14-dev ccache binutils fio postmark sysbench util-linux e2fsprogs strace
  libfaketime mariadb-server btrfs-progs sshfs openssh-server iproute2 rpm)
BENCH_PACKAGES=(chromium)
case ${1:-all} in
  run) wanted=("${RUN_PACKAGES[@]}") ;;
  test) wanted=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}") ;;
  all) wanted=("${RUN_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${BENCH_PACKAGES[@]}") ;;
  *) echo "usage: $0 [run|test|all]" >&2; exit 2 ;;
esac
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in "${wanted[@]}"; do
  have_pkg "$p" || need+=("$p")
done
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "iowatt: missing Debian packages: ${need[*]} — run as root or: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
echo "iowatt: installing Debian packages: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
# CI (CI=true: a machine used for one run): man-db's trigger leaves the manual pages' index as it is
# (mandb ~4 CPU-s after a fresh machine's install); the flag it reads is put back afterwards
flag=/var/lib/man-db/auto-update
if [ "${CI:-}" = true ] && [ -e "$flag" ]; then
  mv "$flag" "$flag.iowatt" && trap 'mv -f "$flag.iowatt" "$flag"' EXIT
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# Debian's postgresql package may start a cluster on 5432; iowatt runs its own and leaves that alone.
