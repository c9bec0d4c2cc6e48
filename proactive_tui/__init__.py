"""proactive-tui: a terminal playground for proactive LLM agents.

Importing this package is deliberately cheap: it pulls in neither Textual nor litellm, so the
headless commands (`envs`, `keys`, `locate`) start fast and the TUI can paint before the model
layer loads.
"""

__version__ = "0.1.0"
