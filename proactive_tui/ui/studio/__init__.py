"""The studio: watch, steer and hand-finish a family's data pipeline (`proactive-tui synth`) in
the playground. It writes the same run folder as the headless command (`synth.setup.prepare`),
so either resumes the other; a family draws its items with its own `StudioItemView`.
"""
