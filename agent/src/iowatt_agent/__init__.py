"""iowatt-agent: the on-host agent of the iowatt storage benchmarking platform."""

__version__ = "0.1.0"
