"""The NVMe purge done for real on an emulated NVMe device (issue 29): QEMU's NVMe controller with two
namespaces in a virtual machine (tests/agent/nvme_guest.py), where the agent's own purge code
(iowatt_agent.pts, in the guest's Python) plans from nvme-cli's real output and runs its commands.

`make nvme-purge-check` runs this (IOWATT_NVME_GUEST_CHECK=1); `make test` does not: the guest is
emulated by TCG (this machine's /dev/kvm is PVM, which boots no stock kernel), ~38 CPU-s a run.

What it proves, reading the namespaces back with O_DIRECT:
- `auto` on a controller without Sanitize (QEMU 7.2's SANICAP is 0) plans NVMe Format with user
  data erase, then blkdiscard; the format leaves zeros where the pattern was on namespace 1, and
  namespace 2 (FNA 0: a format acts on one namespace) keeps its pattern;
- the purge `blkdiscard` on namespace 1 leaves it reading zeros (the drive passes discards on),
  namespace 2 untouched;
- the sanitize commands as the purge sends them (`--sanact=4|2|3 --ause`, the overwrite's
  `--owpass=1 --ovrpat=0`), on a second controller's only namespace whose id-ctrl read is made to
  offer each action (the one value changed: QEMU's SANICAP is 0): nvme-cli 2.3 takes them and the
  controller refuses them (Invalid Command Opcode), and the purge falls back to the format, which
  erases the namespace, its note naming the refusal;
- a whole PTS run as the agent starts it (PtsRunner's job, its child `python -m iowatt_agent.pts`
  with the real engine): a Write Saturation trial over namespace 1's first MiB, purged by the
  format (the document's `pts.purge`), stopped at 4 x the region; the rest of namespace 1 reads
  zeros, namespace 2 keeps its pattern;
- the device is not in use (pts.device_in_use) and nvme-cli's id-ctrl output is read by
  iowatt_agent.nvme (it is also kept as tests/agent/data/nvme/qemu-7.2-id-ctrl.json for the unit
  tests). QEMU 7.2 answers the Sanitize Status log with Invalid Field: no sanitize can be proved
  here (tests/agent/test_nvme.py tests it against nvme-cli's documented output). Nor with
  QEMU 10.0.2 (Debian 12's backports, tried in this guest in session 26: SANICAP 0, the Sanitize
  command an Invalid Command Opcode): ADR 0055's update.
"""

import json
import os
from pathlib import Path

import pytest

from tests.agent import nvme_guest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        os.environ.get("IOWATT_NVME_GUEST_CHECK") != "1",
        reason="make nvme-purge-check runs it (IOWATT_NVME_GUEST_CHECK=1): an emulated machine, ~38 CPU-s",
    ),
]

PROGRAM = Path(__file__).with_name("nvme_guest_program.py")


def test_the_agents_purge_erases_an_emulated_nvme_namespace_and_nothing_else(tmp_path: Path) -> None:
    missing = nvme_guest.missing_tools()
    if missing:
        pytest.fail(f"make nvme-purge-check installs them: missing {', '.join(missing)}")
    root = nvme_guest.packages()
    image = nvme_guest.initramfs(root, PROGRAM.read_text(), tmp_path / "initrd")
    disks = []
    for name in ("ns1", "ns2", "solo"):
        disk = tmp_path / f"{name}.img"
        with open(disk, "wb") as f:
            f.truncate(64 << 20)
        disks.append(disk)
    done = nvme_guest.boot(root, image, disks[:2], solo=disks[2])
    console = done.stdout
    found = dict(nvme_guest.lines(console))
    assert found.get("exit") == "0", f"the guest's program failed:\n{console[-4000:]}\n{done.stderr[-1000:]}"
    doc = {tag: json.loads(rest) for tag, rest in found.items() if tag != "exit"}
    first, second, solo = (doc["devices"][k] for k in ("first", "second", "solo"))

    assert doc["controller"]["sanicap"] == 0 and doc["controller"]["oacs"] >> 1 & 1
    # QEMU 10.0's controller reports CMIC 2 (the subsystem may have other controllers), on which
    # the agent plans no sanitize: the refused-sanitize cases below need 7.2's CMIC 0 (ADR 0055)
    assert doc["controller"]["cmic"] == 0, f"CMIC {doc['controller']['cmic']}: Debian 12's QEMU 7.2 expected"
    assert doc["namespaces"] == [os.path.basename(second)]
    assert doc["sanitize-log"]["rc"] != 0  # QEMU 7.2 has no Sanitize Status log
    both = {"pattern": 3, "zero": 0, "other": 0}
    for method in ("auto", "blkdiscard"):
        assert doc[f"{method}-before"] == {"first": both, "second": both}
        assert doc[f"{method}-in-use"] is None
    assert doc["auto-plans"] == ["nvme-format", "blkdiscard"]
    assert doc["auto-purge"]["method"] == "nvme-format"
    assert doc["auto-purge"]["commands"] == [f"nvme format {first} --ses=1 --force --timeout=21600000"]
    assert doc["blkdiscard-plans"] == ["blkdiscard"]
    assert doc["blkdiscard-purge"]["method"] == "blkdiscard"
    erased = {"pattern": 0, "zero": 3, "other": 0}
    for method in ("auto", "blkdiscard"):
        assert doc[f"{method}-after"] == {"first": erased, "second": both}, method
    # the sanitize commands as the purge sends them reach the real controller through nvme-cli
    # 2.3 (its arguments accepted), which refuses them (no Sanitize in QEMU); the purge then
    # formats, and says why. The status log read before each is refused too (Invalid Field).
    for name in ("crypto", "block", "overwrite"):
        assert doc[f"refused-{name}-plans"] == [f"nvme-sanitize-{name}", "nvme-format", "blkdiscard"]
        record = doc[f"refused-{name}-purge"]
        assert record["method"] == "nvme-format", record
        assert record["commands"] == [f"nvme format {solo} --ses=1 --force --timeout=21600000"]
        assert record["note"].startswith(
            f"nvme-sanitize-{name} failed (NVMe status: Invalid Command Opcode"
        ), record["note"]
        assert "(0x4001)); NVMe Format, user data erase" in record["note"], record["note"]
        assert doc[f"refused-{name}-before"] == {"pattern": 3, "zero": 0, "other": 0}
        assert doc[f"refused-{name}-after"] == erased, name
    # a whole Write Saturation trial as the agent runs it: purged by format (its record in the
    # document), then 4 x the first MiB written by the engine: the rest of namespace 1 reads zeros
    assert doc["run-exit"]["code"] == 0, doc["run-exit"]["stderr"]
    run = doc["run-pts"]
    assert run["purge"]["method"] == "nvme-format", run["purge"]
    assert (
        run["purge"]["note"]
        == "NVMe Format, user data erase; no sanitize: the controller offers none (SANICAP 0)"
    )
    assert run["region_bytes"] == 1 << 20 and run["stop"]["rule"] == "capacity" and run["rounds"] >= 1
    assert run["bytes_written"] >= 4 << 20
    assert doc["run-after"] == {"first": {"pattern": 0, "zero": 2, "other": 1}, "second": both}
    # the real output, kept for the unit tests' parser cases (the same each run but the serial)
    kept = Path(__file__).with_name("data") / "nvme" / "qemu-7.2-id-ctrl.json"
    assert json.loads(kept.read_text())["sanicap"] == json.loads(doc["id-ctrl"]["text"])["sanicap"]
