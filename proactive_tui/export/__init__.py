"""Export: pure functions from run records to files, shared by the TUI, the CLI and batch runs.

The generic formats (run-record, markdown, html, svg) live in `export/formats/` and register
themselves when imported; each family contributes its dataset format through
`Family.exporters()`. `load_formats()` gathers both.
"""

from __future__ import annotations


def load_formats() -> dict:
    """Every export format: the generic ones, then each installed family's; returns the registry."""
    from proactive_tui.core import registry as families
    from proactive_tui.export import registry
    from proactive_tui.export.formats import html, markdown, run_record, svg  # noqa: F401  (each registers itself)

    for family in families.families().values():
        for exporter in family.exporters():
            registry.register(exporter)
    return registry.EXPORTERS


