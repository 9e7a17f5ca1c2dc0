"""What the server serves of the agent for other hosts: the bundles in `agent_dist_dir` (built by
`make agent-dist`), their SHA-256 (computed here, of the file served), the glibc each tarball needs
(its MANIFEST.json, read here from the file served), and the install script.

A file is served only when its name is one the build makes (strict patterns below, no path
separator can match) and it is a regular file directly in the directory (a symbolic link is not
served), so no request names anything else on the server.
"""

import base64
import hashlib
import json
import os
import re
import stat
import tarfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from backend.agent_dist.schemas import AgentDist, Bundle, BundleKind, ServerCa, ServerTls
from backend.config import get_settings
from backend.errors import NotFound
from backend.logs import log

API_BASE = "/api/v1/agent-dist"
# POSIX sh; the server fills in one `case` arm per tarball (name and SHA-256, both checked against
# the fixed patterns below before they are written, single-quoted) and the version; nothing a
# client sends reaches the script
INSTALL_SH = Path(__file__).with_name("install.sh")
BUNDLES_MARK = "    # @BUNDLES@ (the server writes one arm per architecture here)\n"
VERSION_MARK = "@VERSION@"
_VER = r"(?P<version>[0-9][0-9A-Za-z.+~]{0,40})"
PATTERNS: dict[BundleKind, re.Pattern[str]] = {
    "tar": re.compile(rf"iowatt-agent-{_VER}-linux-(?P<arch>x86_64|aarch64)\.tar\.gz"),
    "deb": re.compile(rf"iowatt-agent_{_VER}_(?P<arch>amd64|arm64)\.deb"),
    "rpm": re.compile(rf"iowatt-agent-{_VER}-1\.(?P<arch>x86_64|aarch64)\.rpm"),
}
_ARCH = {"amd64": "x86_64", "arm64": "aarch64"}
_HEX64 = re.compile(r"[0-9a-f]{64}")
# MANIFEST.json (agent/packaging/bundle_check.py writes it; build.sh packs it first in the tarball)
MANIFEST = "MANIFEST.json"
_GLIBC = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}")
MEDIA_TYPES: dict[BundleKind, str] = {
    "tar": "application/gzip",
    "deb": "application/vnd.debian.binary-package",
    "rpm": "application/x-rpm",
}


@dataclass(frozen=True)
class ServedFile:
    path: Path
    media_type: str


def _classify(name: str) -> tuple[BundleKind, str, str] | None:
    for kind, pattern in PATTERNS.items():
        m = pattern.fullmatch(name)
        if m:
            return kind, m["version"], _ARCH.get(m["arch"], m["arch"])
    return None


def version_key(version: str) -> tuple[tuple[int, int | str], ...]:
    """Orders versions as numbers where they are numbers: 0.1.10 after 0.1.9 (not as text)."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in re.split(r"[.+~]", version))


def _regular(path: Path) -> os.stat_result | None:
    try:
        st = path.lstat()
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


@lru_cache(maxsize=32)
def _sha256(path: str, size: int, mtime_ns: int) -> str:
    """Keyed by size and mtime: a rebuilt bundle is hashed again."""
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@lru_cache(maxsize=32)
def _glibc_floor(path: str, top: str, size: int, mtime_ns: int) -> str | None:
    """The glibc a tarball's bundle needs: `glibc` of TOP/MANIFEST.json, the file's second member
    (after TOP/), so only the head of the tarball is read. None when the bundle states none (built
    before the manifest) or states it in any other form (logged); keyed like `_sha256`."""
    try:
        with tarfile.open(path, mode="r|gz") as tar:
            for i, member in enumerate(tar):
                if i >= 2:
                    break
                if member.name == f"{top}/{MANIFEST}" and member.isfile() and member.size <= 4096:
                    f = tar.extractfile(member)
                    record = json.loads(f.read()) if f else None
                    floor = record.get("glibc") if isinstance(record, dict) else None
                    if isinstance(floor, str) and _GLIBC.fullmatch(floor):
                        return floor
                    raise ValueError(f"{MANIFEST} states no glibc version")
    except (OSError, tarfile.TarError, ValueError, EOFError) as exc:
        log.warning("agent_dist.manifest_unreadable", path=path, error=str(exc)[:200])
    return None


def list_bundles() -> list[Bundle]:
    root = get_settings().agent_dist_dir
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    bundles = []
    for name in names:
        info = _classify(name)
        st = _regular(root / name) if info else None
        if info is None or st is None:
            continue
        kind, version, arch = info
        path = str(root / name)
        bundles.append(
            Bundle(
                name=name,
                kind=kind,
                arch=arch,
                version=version,
                size_bytes=st.st_size,
                sha256=_sha256(path, st.st_size, st.st_mtime_ns),
                glibc_floor=(
                    _glibc_floor(path, name.removesuffix(".tar.gz"), st.st_size, st.st_mtime_ns)
                    if kind == "tar"
                    else None
                ),
                url=f"{API_BASE}/files/{name}",
            )
        )
    return bundles


@lru_cache(maxsize=4)
def _tls_of(path: str, mtime_ns: int) -> ServerTls:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    cert = x509.load_pem_x509_certificate(Path(path).read_bytes())
    spki = cert.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
    return ServerTls(
        fingerprint_sha256=_fingerprint(cert.public_bytes(Encoding.DER)),
        pubkey_pin="sha256//" + base64.b64encode(hashlib.sha256(spki).digest()).decode(),
    )


def server_tls() -> ServerTls | None:
    """The configured certificate's pins; None without one (unset, missing, not a regular file), or
    when it is not a readable PEM certificate (logged): the install line then trusts the host's CA
    store, never a 500."""
    cert = get_settings().agent_tls_cert_file
    if cert is None:
        return None
    try:
        st = cert.stat()
        if not stat.S_ISREG(st.st_mode):  # compose mounts /dev/null there when none is given
            return None
        return _tls_of(str(cert), st.st_mtime_ns)
    except (OSError, ValueError) as exc:
        log.warning("agent_dist.tls_cert_unreadable", path=str(cert), error=str(exc)[:200])
        return None


def _fingerprint(der: bytes) -> str:
    fp = hashlib.sha256(der).hexdigest().upper()
    return "SHA256:" + ":".join(fp[i : i + 2] for i in range(0, len(fp), 2))


@dataclass(frozen=True)
class CaFile:
    pem: bytes
    info: ServerCa


@lru_cache(maxsize=4)
def _ca_of(path: str, size: int, mtime_ns: int) -> CaFile:
    """Only the file's certificates are served, each written out again from its parsed form (a key
    or any other text in the file is never served), and only CA certificates: a leaf pinned as a
    CA would break at its renewal (ValueError names what is wrong)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import Encoding

    certs = x509.load_pem_x509_certificates(Path(path).read_bytes())
    for cert in certs:
        try:
            ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
        except x509.ExtensionNotFound:
            ca = False
        if not ca:
            raise ValueError(f"not a CA certificate: {cert.subject.rfc4514_string()}")
    pem = b"".join(cert.public_bytes(Encoding.PEM) for cert in certs)
    first = certs[0]
    return CaFile(
        pem=pem,
        info=ServerCa(
            sha256=hashlib.sha256(pem).hexdigest(),
            fingerprint_sha256=_fingerprint(first.public_bytes(Encoding.DER)),
            subject=first.subject.rfc4514_string(),
            url=f"{API_BASE}/ca.pem",
        ),
    )


def server_ca() -> CaFile | None:
    """The configured CA (`agent_tls_ca_file`); None without one (unset, missing, not a regular
    file: compose mounts /dev/null) or when it holds no readable CA certificate (logged), never a
    500: the line then trusts the host's CA store."""
    path = get_settings().agent_tls_ca_file
    if path is None:
        return None
    try:
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            return None
        return _ca_of(str(path), st.st_size, st.st_mtime_ns)
    except (OSError, ValueError) as exc:
        log.warning("agent_dist.tls_ca_unreadable", path=str(path), error=str(exc)[:200])
        return None


def ca_pem() -> bytes:
    ca = server_ca()
    if ca is None:
        raise NotFound(
            "this server names no CA for agents (IOWATT_AGENT_TLS_CA_FILE)", code="agent_ca_not_configured"
        )
    return ca.pem


def describe() -> AgentDist:
    bundles = list_bundles()
    versions = sorted({b.version for b in bundles}, key=version_key)
    return AgentDist(
        version=versions[-1] if versions else None,
        bundles=bundles,
        install_script_url=f"{API_BASE}/install.sh",
        tls=server_tls(),
        tls_ca=ca.info if (ca := server_ca()) else None,
    )


def install_script() -> str:
    """The script with one `case` arm per architecture: the newest tarball of each."""
    newest: dict[str, Bundle] = {}
    for b in sorted(list_bundles(), key=lambda b: version_key(b.version)):
        if b.kind == "tar":
            newest[b.arch] = b  # the last of each architecture is its highest version
    arms = []
    for arch, b in sorted(newest.items()):
        # both match fixed patterns (no quote, space or `$` can be in them): checked again here,
        # where they are written into shell text
        if _classify(b.name) is None or not _HEX64.fullmatch(b.sha256):
            continue
        floor = b.glibc_floor if b.glibc_floor and _GLIBC.fullmatch(b.glibc_floor) else ""
        arms.append(
            f"  {arch}) bundle_name='{b.name}'; bundle_sha256='{b.sha256}'; bundle_glibc='{floor}' ;;\n"
        )
    versions = sorted({b.version for b in newest.values()}, key=version_key)
    text = INSTALL_SH.read_text().replace(BUNDLES_MARK, "".join(arms))
    return text.replace(VERSION_MARK, versions[-1] if versions else "none")


def bundle_file(name: str) -> ServedFile:
    """A bundle or its `.sha256` file; anything else is 404, whatever the name holds."""
    base = name.removesuffix(".sha256")
    info = _classify(base)
    path = get_settings().agent_dist_dir / name
    if info is None or "/" in name or _regular(path) is None:
        raise NotFound("no such agent bundle", code="agent_bundle_not_found")
    media = "text/plain" if name.endswith(".sha256") else MEDIA_TYPES[info[0]]
    return ServedFile(path=path, media_type=media)
