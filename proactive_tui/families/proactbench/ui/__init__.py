"""The family's screens (its UI part, loaded by the family object at first use).

A regular package so import-linter's graph sees it: the layers contract keeps the family's engine
from importing it."""
