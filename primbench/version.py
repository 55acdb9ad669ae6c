"""primbench's version, in a module of its own: the stages that stamp it on what they write (the run
header, exports, the page cache) import it from here, never the package's __init__, which imports
the stages lazily (an import back up the stack otherwise)."""

__version__ = "0.2.0"
