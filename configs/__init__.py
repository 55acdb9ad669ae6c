"""Package data: configs/ installed as primbench.configs (found through importlib.resources)."""
