"""Package data: report_templates/ installed as primbench.report_templates (found through importlib.resources)."""
