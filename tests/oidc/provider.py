"""A real OpenID Connect provider for tests: panva's oidc-provider (tests/oidc/provider/,
installed by `make deps`) as a Node process on a free port, with one client and the accounts of
a JSON file the test may rewrite between sign-ins (provider.mjs says how)."""

import contextlib
import json
import os
import secrets
import shutil
import ssl
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.services import free_port
from tests.waiting import wait_until

HERE = Path(__file__).resolve().parent / "provider"
# one TLS context for the clients that speak http:// to the provider: httpx builds one per Client and
# per httpx.get() otherwise (~30 ms of CPU each), and the wait for the provider asks every 0.1 s
TLS = ssl.create_default_context()


@dataclass
class OidcProvider:
    issuer: str
    client_id: str
    client_secret: str
    users_file: Path
    log_file: Path

    def set_users(self, users: dict[str, dict[str, Any]]) -> None:
        """{login: {email, email_verified, name}}; a login not listed has the verified e-mail
        <login>@example.test; email_verified None leaves the claim out."""
        tmp = self.users_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(users))
        tmp.replace(self.users_file)

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")[-3000:]


@contextlib.contextmanager
def oidc_provider(redirect_uris: list[str]) -> Iterator[OidcProvider]:
    node = shutil.which("node")
    if node is None or not (HERE / "node_modules" / "oidc-provider").is_dir():
        raise RuntimeError("the test OIDC provider is not installed: run `make deps` (tests/oidc/provider)")
    root = Path(tempfile.mkdtemp(prefix="iowatt-test-oidc-"))
    port = free_port()
    provider = OidcProvider(
        issuer=f"http://127.0.0.1:{port}",
        client_id="iowatt-test",
        client_secret=secrets.token_urlsafe(24),
        users_file=root / "users.json",
        log_file=root / "provider.log",
    )
    provider.set_users({})
    env = {
        **os.environ,
        "OIDC_PORT": str(port),
        "OIDC_CLIENT_ID": provider.client_id,
        "OIDC_CLIENT_SECRET": provider.client_secret,
        "OIDC_REDIRECT_URIS": ",".join(redirect_uris),
        "OIDC_USERS_FILE": str(provider.users_file),
    }
    with provider.log_file.open("wb") as log:
        proc = subprocess.Popen([node, str(HERE / "provider.mjs")], env=env, stdout=log, stderr=log, cwd=HERE)
    try:
        discovery = f"{provider.issuer}/.well-known/openid-configuration"
        wait_until(
            lambda: proc.poll() is None and httpx.get(discovery, timeout=2, verify=TLS).status_code == 200,
            timeout=60,
            interval=0.1,
            ignore=(httpx.HTTPError,),
            message=lambda: f"oidc-provider did not answer on {provider.issuer}: {provider.log()}",
        )
        yield provider
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(root, ignore_errors=True)
