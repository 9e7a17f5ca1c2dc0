"""A small JSON-over-HTTP poller shared by the smart-plug drivers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import MeterError

if TYPE_CHECKING:  # httpx is imported where a meter connects: every `iowatt-agent` command
    import httpx  # imports the drivers, most never read one (tests/agent/test_startup_imports.py)


class JsonHttp:
    def __init__(self, base_url: str, *, timeout_s: float, auth: httpx.Auth | None = None) -> None:
        import httpx

        self.base_url = base_url
        self.http = httpx.Client(base_url=base_url, timeout=timeout_s, auth=auth)

    def get(self, path: str, params: dict[str, str] | None = None, *, missing_ok: bool = False) -> Any:
        import httpx

        try:
            response = self.http.get(path, params=params)
        except httpx.HTTPError as exc:
            raise MeterError(f"{self.base_url}{path}: {exc or type(exc).__name__}") from None
        if response.status_code == 404 and missing_ok:
            return None
        if response.status_code in (401, 403):
            raise MeterError(f"{self.base_url}{path}: {response.status_code}, check user= and password=")
        if response.status_code >= 400:
            raise MeterError(f"{self.base_url}{path}: HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            raise MeterError(f"{self.base_url}{path}: the answer is not JSON") from None

    def close(self) -> None:
        self.http.close()


def number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MeterError(f"{where}: expected a number, got {value!r}")
    return float(value)
