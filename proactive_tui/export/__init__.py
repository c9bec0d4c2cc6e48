"""Export: pure functions from run records to files, shared by the TUI, the CLI and batch runs.

Every format registers itself in `registry.EXPORTERS` when its module is imported;
`load_builtin_formats()` imports the built-in ones. A family with a dataset format of its own adds
its module under `export/formats/` and one import line below.
"""

from __future__ import annotations


def load_builtin_formats() -> dict:
    """Import every built-in format module (each registers itself); returns the registry."""
    from proactive_tui.export import registry
    from proactive_tui.export.formats import html, markdown, proactiveeval, run_record, svg  # noqa: F401
    from proactive_tui.export.formats import proactivebench  # noqa: F401
    from proactive_tui.export.formats import chronos  # noqa: F401

    return registry.EXPORTERS
