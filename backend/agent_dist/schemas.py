from typing import Literal

from backend.kit.schema import OutputSchema

BundleKind = Literal["tar", "deb", "rpm"]


class Bundle(OutputSchema):
    name: str
    kind: BundleKind
    arch: str
    version: str
    size_bytes: int
    sha256: str
    # the oldest glibc a host may have to run it ("2.28"): the newest symbol version any of its
    # files needs, as the build's check found it (the bundle's MANIFEST.json). Tarballs only (the
    # .deb and .rpm of one build hold the same files and depend on that glibc); null for a tarball
    # that states none (built before the manifest)
    glibc_floor: str | None
    # relative to the API: /api/v1/agent-dist/files/{name}
    url: str


class ServerTls(OutputSchema):
    # the certificate's SHA-256 (`iowatt-agent enroll --fingerprint`) and its public key's, in
    # curl's --pinnedpubkey form (sha256//BASE64)
    fingerprint_sha256: str
    pubkey_pin: str


class ServerCa(OutputSchema):
    # the CA certificate(s) that sign the server's certificates, served at `url` (PEM): `sha256` is
    # of the bytes served (what the install line checks with sha256sum before trusting them),
    # `fingerprint_sha256` the first certificate's (`openssl x509 -fingerprint -sha256`)
    sha256: str
    fingerprint_sha256: str
    subject: str
    url: str


class AgentDist(OutputSchema):
    version: str | None
    bundles: list[Bundle]
    install_script_url: str
    tls: ServerTls | None
    tls_ca: ServerCa | None
