"""The built-in variants: one Python module per kernel family, each beside its CUDA source.

Installed, this folder is the package `primbench.kernels`. Each module declares its variants with
primbench.api (the same API a plugin uses; docs/extending.md) and registers them on import;
primbench.registry imports every module here on first use, so a new op's kernels/<op>.py needs no
list. Standard library only: this is imported with primbench itself.
"""
