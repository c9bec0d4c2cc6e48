"""Batch evaluation: plan sessions (selectors x agents x settings grid x repeats), run a shard of
them, keep one run record per finished session in an output folder, and compute the report from
those records alone (so `report show` and `report merge` recompute it, and shards merge into
exactly the report one machine would give).

Engine side only: nothing here imports Textual or Rich. The terminal tables live in
`cli/eval_batch.py`; each family's numbers come from its own folder (`BatchPart.tables`).
"""
