"""Named views: a set of runs laid out as a published report presents them (docs/views.md)."""
