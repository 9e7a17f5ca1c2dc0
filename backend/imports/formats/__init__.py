"""One module per outside tool's output format (ADR to come with the registry): each turns the
tool's own text into `base.ParsedFile`, with no database, HTTP or server code."""
