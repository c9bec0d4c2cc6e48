"""The built-in benchmark families, one folder each; found through the `proactive_tui.families`
entry points (see core.registry). No family imports another."""
