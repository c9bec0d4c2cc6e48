"""Export: pure functions from run records to files, shared by the TUI, the CLI and batch runs.

Every format registers itself in `registry.EXPORTERS`; `formats()` imports the built-in ones.
"""
