"""The engine: events, the session runner, participants, the spec, the run record and the family
contract and registry. No store, no UI, no CLI, no Textual or Rich (`.importlinter` checks it).

A regular package (not a namespace one) so import-linter's graph sees its modules."""
