"""The `synth` engine: a family's data pipeline run over any models, kept stage by stage in a folder.

Pure (no Textual, Rich, store or CLI imports; `tests/test_synth_engine.py` keeps it so): the CLI
(`cli/synth_cmd.py`) renders its progress, the families provide the pipelines
(`GeneratePart.pipeline`).
"""
