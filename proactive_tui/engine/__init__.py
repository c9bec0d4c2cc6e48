"""The session engine: pure asyncio, no Textual or Rich imports (a test checks).

A session is an async stream of typed events; the UI, the store, the headless `run` command and
export all consume the same stream. Who sits in a seat (a model or a person) is a participant.
"""
