"""The agent's transport against real TLS servers (issue 9, "Transport"): certificates made here
with `cryptography`, a real HTTPS server (the fake API's stdlib server wrapped in TLS) in a
thread, and the real CLI and client doing real handshakes. Pinned OK, a different certificate
refused with the re-pin command, CA file OK, hostname checked, http:// only to loopback."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import ipaddress
import json
import os
import ssl
import stat
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from iowatt_agent import cli, enrol
from iowatt_agent.client import ApiClient, ServerCertificateRejected
from iowatt_agent.credentials import load_config, server_ssl_context
from iowatt_agent.schemas import HeartbeatRequest
from iowatt_agent.spool import Delivery, Spool
from iowatt_agent.transport import (
    TransportError,
    check_plain_http,
    format_fingerprint,
    is_loopback_host,
    parse_fingerprint,
    pinned_context,
)
from typer.testing import CliRunner

from tests.agent.fakes import ENROLL_TOKEN, FakeApi
from tests.agent.test_spool import make_upload

runner = CliRunner()


# --- certificates ------------------------------------------------------------------------------


@dataclass
class Cert:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.cert.public_bytes(serialization.Encoding.DER)).hexdigest()

    def write(self, directory: Path, name: str, chain: tuple[Cert, ...] = ()) -> tuple[Path, Path]:
        cert_path, key_path = directory / f"{name}.pem", directory / f"{name}.key"
        cert_path.write_bytes(self.pem + b"".join(c.pem for c in chain))
        key_path.write_bytes(
            self.key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        return cert_path, key_path


def make_cert(
    common_name: str,
    *,
    issuer: Cert | None = None,
    ca: bool = False,
    names: tuple[str, ...] = ("localhost", "127.0.0.1"),
) -> Cert:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer.cert.subject if issuer else subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=30))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        sans: list[x509.GeneralName] = []
        for n in names:
            try:
                sans.append(x509.IPAddress(ipaddress.ip_address(n)))
            except ValueError:
                sans.append(x509.DNSName(n))
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    else:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    signer = issuer.key if issuer else key
    return Cert(builder.sign(signer, hashes.SHA256()), key)


@pytest.fixture(scope="module")
def certs() -> dict[str, Cert]:
    ca = make_cert("iowatt test CA", ca=True)
    other_ca = make_cert("someone else's CA", ca=True)
    return {
        "self_signed": make_cert("iowatt server"),
        "self_signed_2": make_cert("iowatt server (rotated)"),
        "ca": ca,
        "leaf": make_cert("iowatt server", issuer=ca),
        "other_ca": other_ca,
        "other_leaf": make_cert("iowatt server", issuer=other_ca),
        "wrong_name": make_cert("elsewhere", names=("other.example",)),
    }


@dataclass
class TlsServer:
    api: FakeApi
    url: str
    context: ssl.SSLContext
    directory: Path

    def use(self, cert: Cert, chain: tuple[Cert, ...] = ()) -> None:
        """Present `cert` (plus `chain`) from the next handshake on, as a server whose
        certificate was replaced would."""
        cert_path, key_path = cert.write(self.directory, uuid.uuid4().hex, chain)
        self.context.load_cert_chain(cert_path, key_path)


@pytest.fixture
def tls_server(tmp_path: Path, certs: dict[str, Cert]) -> Iterator[TlsServer]:
    api = FakeApi()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    directory = tmp_path / "server-certs"
    directory.mkdir()
    server = TlsServer(api, "", context, directory)
    server.use(certs["self_signed"])
    httpd, url = api.serve(tls=context)
    server.url = url
    yield server
    httpd.shutdown()
    httpd.server_close()


# --- helpers -----------------------------------------------------------------------------------


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "enroll-token"
    path.write_text(ENROLL_TOKEN + "\n")
    path.chmod(0o600)
    return path


def enroll(state: Path, token_file: Path, *args: str):
    return runner.invoke(
        cli.app,
        ["enroll", "--token-file", str(token_file), "--state-dir", str(state), "--name", "box", *args],
    )


def heartbeat(state: Path) -> None:
    config = load_config(state)
    with ApiClient(
        config.server_url,
        config.agent_token,
        verify=server_ssl_context(state, config) or True,
        pinned_sha256=config.tls.fingerprint_sha256 if config.tls else None,
        sleep=lambda s: None,
    ) as client:
        client.heartbeat(
            config.agent_id,
            HeartbeatRequest(state="idle", current_run_id=None, agent_version="t"),
            attempts=1,
        )


def mode_of(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


# --- pinning -----------------------------------------------------------------------------------


def test_pinned_self_signed_certificate_enrols_and_every_later_connection_verifies(
    tls_server, certs, tmp_path, token_file
):
    state = tmp_path / "state"
    fp = format_fingerprint(certs["self_signed"].sha256)
    result = enroll(state, token_file, "--server", tls_server.url, "--fingerprint", fp)
    assert result.exit_code == 0, result.output
    assert fp in result.output  # the fingerprint is printed
    pinned = state / "server-cert.pem"
    assert mode_of(pinned) == 0o600 and mode_of(state / "agent.json") == 0o600
    assert pinned.read_bytes().strip() == certs["self_signed"].pem.strip()
    stored = json.loads((state / "agent.json").read_text())
    assert stored["tls"] == {
        "mode": "pin",
        "file": "server-cert.pem",
        "fingerprint_sha256": certs["self_signed"].sha256,
        "verify_hostname": True,
    }
    assert stored["insecure_http"] is False
    heartbeat(state)
    assert len(tls_server.api.heartbeats) == 1


def test_a_ca_signed_leaf_can_be_pinned_on_its_own(tls_server, certs, tmp_path, token_file):
    # the server sends only its leaf: the pin is the only anchor (VERIFY_X509_PARTIAL_CHAIN)
    tls_server.use(certs["leaf"])
    state = tmp_path / "state"
    fp = "sha256:" + certs["leaf"].sha256  # lower case, no colons: accepted too
    result = enroll(state, token_file, "--server", tls_server.url, "--fingerprint", fp)
    assert result.exit_code == 0, result.output
    heartbeat(state)
    assert tls_server.api.heartbeats
    # and the same leaf fails without the flag: the flag is what makes leaf pinning work
    strict = pinned_context(certs["leaf"].pem.decode())
    strict.verify_flags &= ~ssl.VERIFY_X509_PARTIAL_CHAIN
    config = load_config(state)
    with pytest.raises(ServerCertificateRejected):
        ApiClient(config.server_url, config.agent_token, verify=strict).heartbeat(
            config.agent_id, HeartbeatRequest(state="idle", current_run_id=None, agent_version="t")
        )


def test_a_changed_server_certificate_fails_closed_and_repin_restores(
    tls_server, certs, tmp_path, token_file, monkeypatch
):
    state = tmp_path / "state"
    old_fp = format_fingerprint(certs["self_signed"].sha256)
    assert enroll(state, token_file, "--server", tls_server.url, "--fingerprint", old_fp).exit_code == 0
    tls_server.use(certs["self_signed_2"])  # same host and port, another certificate
    new_fp = format_fingerprint(certs["self_signed_2"].sha256)
    calls_before = len(tls_server.api.calls)

    with pytest.raises(ServerCertificateRejected) as refused:
        heartbeat(state)
    message = str(refused.value)
    assert old_fp in message and new_fp in message and "iowatt-agent repin" in message

    # a result waiting in the spool is kept (RETRY), never moved to rejected/
    config = load_config(state)
    spool = Spool(state)
    entry = spool.put_result(make_upload(), uuid.uuid4())
    client = ApiClient(
        config.server_url,
        config.agent_token,
        verify=server_ssl_context(state, config) or True,
        pinned_sha256=config.tls.fingerprint_sha256 if config.tls else None,
        sleep=lambda s: None,
    )
    assert spool.deliver(entry, client, attempts=3) is Delivery.RETRY
    assert entry.path.exists() and spool.rejected() == []

    # `run` refuses to start, with the same message, before any request (exit 2: no restart loop)
    started = runner.invoke(cli.app, ["run", "--state-dir", str(state), "--engine", "/bin/true"])
    assert started.exit_code == 2, started.output
    assert "iowatt-agent repin" in started.output and new_fp in started.output
    assert len(tls_server.api.calls) == calls_before  # not one request reached the server

    # re-pin without a terminal needs the fingerprint; a wrong one changes nothing
    bad = runner.invoke(
        cli.app, ["repin", "--state-dir", str(state), "--fingerprint", format_fingerprint("ab" * 32)]
    )
    assert bad.exit_code == 2 and "does not match" in bad.output
    assert load_config(state).tls.fingerprint_sha256 == certs["self_signed"].sha256
    ok = runner.invoke(cli.app, ["repin", "--state-dir", str(state), "--fingerprint", new_fp])
    assert ok.exit_code == 0, ok.output
    assert old_fp in ok.output  # shows what was pinned before
    again = load_config(state)
    assert again.tls is not None and again.tls.fingerprint_sha256 == certs["self_signed_2"].sha256
    assert again.agent_token == config.agent_token and again.agent_id == config.agent_id
    heartbeat(state)
    assert tls_server.api.heartbeats


def test_enroll_refuses_a_certificate_that_does_not_match_and_sends_nothing(
    tls_server, certs, tmp_path, token_file
):
    state = tmp_path / "state"
    wrong = format_fingerprint(certs["self_signed_2"].sha256)
    result = enroll(state, token_file, "--server", tls_server.url, "--fingerprint", wrong)
    assert result.exit_code == 2
    assert "does not match --fingerprint" in result.output and "nothing was sent" in result.output
    assert tls_server.api.calls == [] and not (state / "agent.json").exists()
    assert not (state / "server-cert.pem").exists()


def test_enroll_without_a_terminal_needs_fingerprint_or_ca_file(tls_server, tmp_path, token_file):
    result = enroll(tmp_path / "state", token_file, "--server", tls_server.url)
    assert result.exit_code == 2
    assert "--fingerprint" in result.output and "--ca-file" in result.output
    assert "SHA256:" in result.output  # the fingerprint to check was printed
    assert tls_server.api.calls == []


def test_enroll_on_a_terminal_asks_before_trusting(tls_server, certs, tmp_path, token_file, monkeypatch):
    monkeypatch.setattr(enrol, "interactive", lambda: True)
    state = tmp_path / "state"
    no = runner.invoke(
        cli.app,
        ["enroll", "--server", tls_server.url, "--state-dir", str(state), "--token-file", str(token_file)],
        input="n\n",
    )
    assert no.exit_code == 2 and "not trusted" in no.output and tls_server.api.calls == []
    yes = runner.invoke(
        cli.app,
        ["enroll", "--server", tls_server.url, "--state-dir", str(state), "--token-file", str(token_file)],
        input="y\n",
    )
    assert yes.exit_code == 0, yes.output
    assert format_fingerprint(certs["self_signed"].sha256) in yes.output
    assert load_config(state).tls.fingerprint_sha256 == certs["self_signed"].sha256


def test_hostname_is_checked_unless_no_verify_hostname(tls_server, certs, tmp_path, token_file):
    tls_server.use(certs["wrong_name"])  # names other.example only
    fp = format_fingerprint(certs["wrong_name"].sha256)
    refused = enroll(tmp_path / "a", token_file, "--server", tls_server.url, "--fingerprint", fp)
    assert refused.exit_code == 2
    assert "--no-verify-hostname" in refused.output and tls_server.api.calls == []
    state = tmp_path / "b"
    ok = enroll(state, token_file, "--server", tls_server.url, "--fingerprint", fp, "--no-verify-hostname")
    assert ok.exit_code == 0, ok.output
    assert load_config(state).tls.verify_hostname is False
    heartbeat(state)
    assert tls_server.api.heartbeats


# --- CA file -----------------------------------------------------------------------------------


def test_ca_file_verifies_the_server_instead_of_a_pin(tls_server, certs, tmp_path, token_file):
    tls_server.use(certs["leaf"], chain=(certs["ca"],))
    ca_file = tmp_path / "team-ca.pem"
    ca_file.write_bytes(certs["ca"].pem)
    state = tmp_path / "state"
    result = enroll(state, token_file, "--server", tls_server.url, "--ca-file", str(ca_file))
    assert result.exit_code == 0, result.output
    stored = state / "server-ca.pem"
    assert mode_of(stored) == 0o600 and stored.read_bytes() == certs["ca"].pem
    assert load_config(state).tls.mode == "ca"
    heartbeat(state)
    # the server re-issued by its CA: still trusted (that is what a CA file is for)
    tls_server.use(make_cert("iowatt server", issuer=certs["ca"]))
    heartbeat(state)
    assert len(tls_server.api.heartbeats) == 2
    # a certificate from another CA is refused, and says how to re-pin
    tls_server.use(certs["other_leaf"], chain=(certs["other_ca"],))
    with pytest.raises(ServerCertificateRejected, match="repin"):
        heartbeat(state)


def test_ca_file_of_another_ca_is_refused_at_enroll(tls_server, certs, tmp_path, token_file):
    tls_server.use(certs["leaf"], chain=(certs["ca"],))
    ca_file = tmp_path / "other-ca.pem"
    ca_file.write_bytes(certs["other_ca"].pem)
    result = enroll(tmp_path / "state", token_file, "--server", tls_server.url, "--ca-file", str(ca_file))
    assert result.exit_code == 2 and "does not verify" in result.output
    assert tls_server.api.calls == []
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    result = enroll(tmp_path / "state", token_file, "--server", tls_server.url, "--ca-file", str(garbage))
    assert result.exit_code == 2 and "no PEM certificate" in result.output


# --- http:// -----------------------------------------------------------------------------------


def test_plain_http_to_loopback_is_allowed(tmp_path, token_file):
    api = FakeApi()
    httpd, url = api.serve()
    try:
        for host in ("127.0.0.1", "localhost"):
            state = tmp_path / host
            result = enroll(state, token_file, "--server", url.replace("127.0.0.1", host), "--replace")
            assert result.exit_code == 0, result.output
            config = load_config(state)
            assert config.tls is None and config.insecure_http is False
            assert not (state / "server-cert.pem").exists()
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert len(api.calls_to("POST /api/v1/agents/enroll")) == 2


def test_plain_http_to_another_host_needs_insecure_http(tmp_path, token_file, monkeypatch):
    api = FakeApi()
    monkeypatch.setattr(
        enrol, "ApiClient", functools.partial(ApiClient, transport=api.transport(), sleep=lambda s: None)
    )
    refused = enroll(tmp_path / "state", token_file, "--server", "http://192.0.2.10:8000")
    assert refused.exit_code == 2
    assert "refusing plain http:// to 192.0.2.10" in refused.output and "--insecure-http" in refused.output
    assert api.calls == [] and not (tmp_path / "state" / "agent.json").exists()

    monkeypatch.setattr(
        enrol, "ApiClient", functools.partial(ApiClient, transport=api.transport(), sleep=lambda s: None)
    )
    state = tmp_path / "state"
    ok = enroll(state, token_file, "--server", "http://192.0.2.10:8000", "--insecure-http")
    assert ok.exit_code == 0, ok.output
    assert "--insecure-http" in ok.output  # warned at enrolment
    assert load_config(state).insecure_http is True

    # `run` warns on every start
    class Loop:
        def __init__(self, *a, **k) -> None:
            pass

        def request_drain(self, reason: str) -> None:
            pass

        def run(self) -> int:
            return 0

    monkeypatch.setattr(cli, "AgentLoop", Loop)
    for _ in range(2):
        started = runner.invoke(cli.app, ["run", "--state-dir", str(state), "--engine", "/bin/true"])
        assert started.exit_code == 0, started.output
        assert "transport.insecure_http server=http://192.0.2.10:8000" in started.output

    # an agent.json edited to a remote http:// server without the flag does not start
    raw = json.loads((state / "agent.json").read_text())
    raw["insecure_http"] = False
    (state / "agent.json").write_text(json.dumps(raw))
    started = runner.invoke(cli.app, ["run", "--state-dir", str(state), "--engine", "/bin/true"])
    assert started.exit_code == 2 and "refusing plain http://" in started.output


def test_https_config_without_a_trust_anchor_does_not_start(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir()
    (state / "agent.json").write_text(
        json.dumps(
            {
                "server_url": "https://iowatt.example:8443",
                "agent_id": str(uuid.uuid4()),
                "agent_token": "t",
                "name": "old",
            }
        )
    )
    started = runner.invoke(cli.app, ["run", "--state-dir", str(state), "--engine", "/bin/true"])
    assert started.exit_code == 2 and "iowatt-agent repin" in started.output


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.5.6.7", True),
        ("::1", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        ("10.0.0.1", False),
        ("192.168.1.2", False),
        ("localhost.evil.example", False),
        ("127.0.0.1.nip.io", False),
        ("::ffff:10.0.0.1", False),
    ],
)
def test_loopback_hosts(host, loopback):
    assert is_loopback_host(host) is loopback
    url = f"http://[{host}]:8000" if ":" in host else f"http://{host}:8000"
    if loopback:
        check_plain_http(url, insecure_http=False)
    else:
        with pytest.raises(TransportError, match="--insecure-http"):
            check_plain_http(url, insecure_http=False)
        check_plain_http(url, insecure_http=True)


def test_fingerprint_forms():
    hexd = "0123456789abcdef" * 4
    colon = ":".join(hexd[i : i + 2] for i in range(0, 64, 2)).upper()
    for form in (f"SHA256:{hexd}", f"SHA256:{colon}", colon, f"sha256 Fingerprint={colon}", hexd.upper()):
        assert parse_fingerprint(form) == hexd
    assert format_fingerprint(hexd) == f"SHA256:{colon}"
    for bad in ("SHA256:abc", "MD5:" + hexd, "SHA256:" + "g" * 64, ""):
        with pytest.raises(TransportError, match="64 hex digits"):
            parse_fingerprint(bad)
