"""Content-Disposition for downloads whose name carries the team's text (RFC 6266 + RFC 8187).

HTTP headers are Latin-1 on the wire, so a team called "Команда 東京" cannot go into a plain
`filename="…"` (Starlette raised UnicodeEncodeError: a 500). Every download names its file through
`attachment()`: an ASCII `filename=` (unsafe characters become `-`) for old clients and
`filename*=UTF-8''…` (percent-encoded) that current browsers prefer."""

import os
import re
import unicodedata
from urllib.parse import quote

_UNSAFE_ASCII = re.compile(r"[^A-Za-z0-9._-]+")
_UNSAFE = re.compile(r'[\x00-\x1f\x7f"\\/:*?<>|]+')
MAX_NAME = 150


def ascii_name(name: str) -> str:
    """A plain-ASCII version of `name`: accents dropped, every run of anything else one `-`."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"-{2,}", "-", _UNSAFE_ASCII.sub("-", folded)).strip("-.")[:MAX_NAME]


def attachment(name: str, fallback: str) -> str:
    """`attachment; filename="<ascii>"; filename*=UTF-8''<utf-8, percent-encoded>` for `name`
    (control characters, quotes, slashes and the like replaced by `-`); `fallback` is the ASCII
    name when too little of `name` is ASCII to name the file."""
    stem, ext = os.path.splitext(_UNSAFE.sub("-", name).strip() or fallback)
    stem, ext = stem[:MAX_NAME], ext[:16]  # a long name keeps its extension
    clean = stem + ext
    plain = ascii_name(stem)
    if len(plain) < 3:
        plain = fallback
    elif ascii_name(ext):
        plain = f"{plain}.{ascii_name(ext)}"
    if plain == clean:
        return f'attachment; filename="{plain}"'
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(clean, safe='')}"
