"""Package data: results/reference/ installed as primbench.reference (found through importlib.resources)."""
