"""Replaces PyInstaller's hook-pygments (a user hook takes precedence over a built-in one), which
lists every lexer, formatter and style as a hidden import: ~330 modules, a quarter of the bundle's
modules, each scanned and compiled by the analysis. The agent reaches pygments only through the
imports at the top of rich.syntax (typer's rich help imports rich.markdown, which imports it); it
never highlights code (its help is in rich markup mode, not markdown, and typer's pretty
exceptions are off), so no lexer, formatter or style is ever loaded by name. The modules those
imports name are still found by the analysis."""

hiddenimports: list[str] = []
