"""Passwords (Argon2id, argon2-cffi) and bearer tokens (random, stored as sha256).

Hashes written before Argon2id (`scrypt$salt$digest`, the standard library's scrypt) still verify;
`verify_password` says when a stored hash should be replaced, and login rehashes it then.
"""

import hashlib
import hmac
import secrets
from functools import lru_cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from backend.config import get_settings

_SCRYPT = {"n": 2**14, "r": 8, "p": 1, "dklen": 32}

USER_TOKEN_PREFIX = "iwu_"
AGENT_TOKEN_PREFIX = "iwa_"
ENROLLMENT_TOKEN_PREFIX = "iwe_"


def _hasher() -> PasswordHasher:
    s = get_settings()
    return _hasher_for(s.argon2_time_cost, s.argon2_memory_kib, s.argon2_parallelism)


@lru_cache
def _hasher_for(time_cost: int, memory_kib: int, parallelism: int) -> PasswordHasher:
    # argon2-cffi's PasswordHasher is Argon2id by default; the parameters come from settings
    # (RFC 9106's second recommendation by default: t=3, m=64 MiB, p=4)
    return PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=parallelism)


def hash_password(password: str) -> str:
    return _hasher().hash(password)


def verify_password(password: str, stored: str) -> tuple[bool, bool]:
    """(matches, needs_rehash): needs_rehash is True for a matching hash that is not Argon2id with
    the current parameters (an older scheme or weaker settings)."""
    if stored.startswith("$argon2"):
        ph = _hasher()
        try:
            ph.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False, False
        return True, ph.check_needs_rehash(stored)
    if stored.startswith("scrypt$"):
        return _verify_scrypt(password, stored), True
    return False, False


def _verify_scrypt(password: str, stored: str) -> bool:
    try:
        _, salt_hex, digest_hex = stored.split("$")
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
    return hmac.compare_digest(digest.hex(), digest_hex)


def legacy_scrypt_hash(password: str) -> str:
    """A hash as iowatt stored it before Argon2id (for tests of the transparent rehash)."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, **_SCRYPT)
    return f"scrypt${salt.hex()}${digest.hex()}"


_DUMMY_HASHES: dict[tuple[int, int, int], str] = {}


def prepare_password_check() -> str:
    """The hash no password matches (made once per process and parameters: one Argon2id hash, a
    quarter to half a CPU-second): made at start-up, so even the first burn_password_check costs
    exactly one verification."""
    s = get_settings()
    key = (s.argon2_time_cost, s.argon2_memory_kib, s.argon2_parallelism)
    dummy = _DUMMY_HASHES.get(key)
    if dummy is None:
        dummy = _DUMMY_HASHES.setdefault(key, hash_password(secrets.token_urlsafe(24)))
    return dummy


def burn_password_check(password: str) -> None:
    """Do the work of a password check against a hash no password matches, so an unknown e-mail
    costs as much time as a known one with a wrong password."""
    verify_password(password, prepare_password_check())


def new_token(prefix: str) -> str:
    return prefix + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
