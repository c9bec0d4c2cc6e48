"""The model layer: one gateway over litellm for every call, keys, config and the embedded model.

Nothing here imports litellm at module import time; the gateway imports it on first use.
"""
