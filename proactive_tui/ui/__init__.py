"""The Textual front end: screens, widgets, themes and the app that ties them together.

Nothing here is imported by the headless commands; `proactive_tui.cli.app_cmd` imports it only
when the playground opens, and nothing here imports the model layer at import time (litellm is
preloaded in a background thread after the first screen paints).
"""
