"""primbench: a benchmark harness for GPU parallel primitives."""

__version__ = "0.1.0"
