"""Named views: a set of runs laid out as a seed presents them (docs/views.md)."""
