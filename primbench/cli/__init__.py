"""The command line: the grammar (parser), one module per command family, and dispatch (main).
Handlers turn arguments into plain values and call the stages; nothing else imports this package.
"""
