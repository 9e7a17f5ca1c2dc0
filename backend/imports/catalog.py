"""What each importer reads, for people choosing a file: the tool's versions and the kinds of file
(GET /api/v1/imports/formats, `iowatt import --list-formats`, the UI's Import page read this one
list). The format keys, tools and aliases come from the registry; the versions and file kinds are
written here from each module's docstring (docs/imports.md § Formats).
tests/client/test_import_multipart.py's test_formats_list_is_the_registry fails when a registry
format has no entry here, or the reverse.

`STANDS_FOR` is the one place that says which built-in preset a format's runs stand for in the
views (docs/imports.md § In the views): a CrystalDiskMark or KDiskMark text result is a
CrystalDiskMark grid run. Only the equivalence is here; the rows come from the preset's own
definition (backend/views/builders/crystaldiskmark.py maps each imported test to the preset's test
of the same pattern, block size, queue depth and threads)."""

from backend.imports.formats import registry
from backend.imports.schemas import ImportFormat

# format -> (versions, file kinds)
READS: dict[str, tuple[list[str], list[str]]] = {
    "fio-json": (["2.x", "3.x"], ["--output-format=json", "--output-format=json+", "client/server JSON"]),
    "fio-terse": (["terse v2", "v3", "v4", "v5"], ["--output-format=terse (--minimal) lines"]),
    "fio-normal": (["2.x", "3.x"], ["normal text output"]),
    "crystaldiskmark": (["5", "6", "7", "8", "9"], ["text export (File > Save text, Ctrl+C)"]),
    "kdiskmark": (["2", "3"], ["text export"]),
    "diskspd-xml": (["2.x"], ["XML report (-Rxml)"]),
    "diskspd-text": (["2.x"], ["text report"]),
    "vdbench-summary": (["5.x"], ["summary.html", "totals.html"]),
    "vdbench-flatfile": (["5.x"], ["flatfile.html"]),
    "elbencho-text": (["1.x", "2.x", "3.x"], ["console output", "--resfile"]),
    "elbencho-csv": (["1.x", "2.x", "3.x"], ["--csvfile CSV"]),
    "sysbench-fileio": (["0.4", "0.5", "1.0", "1.1"], ["fileio console output"]),
    "postmark": (["1.5"], ["verbose report"]),
    "bonnie-csv": (["1.93-1.96", "1.97+", "2.0x"], ["CSV lines (bonnie++ -q)"]),
    "iozone": (["3.2xx", "3.3xx", "3.4xx"], ["report table (-a, -i N)"]),
}

# format -> the built-in preset its imported runs stand for in the views (backend/views/loading.py)
STANDS_FOR: dict[str, str] = {
    "crystaldiskmark": "crystaldiskmark",
    "kdiskmark": "crystaldiskmark",
}


def preset_of(fmt: str) -> str | None:
    """The built-in preset an imported run of this format stands for in the views; None: none."""
    return STANDS_FOR.get(fmt)


def formats() -> list[ImportFormat]:
    out = []
    for key, imp in sorted(registry.importers().items()):
        versions, kinds = READS.get(key, ([], []))
        out.append(
            ImportFormat(
                format=key,
                tool=imp.tool,
                aliases=list(getattr(imp, "aliases", ())),
                versions=versions,
                file_kinds=kinds,
            )
        )
    return out
