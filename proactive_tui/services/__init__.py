"""The services: what the front ends (the TUI, the CLI) do with stored sessions, built on the
engine and the store. Compare, regrade, labels and the demo live here rather than in core/ so the
engine stays free of the store (and of the UI and the CLI): core/ runs a session; a service finds
sessions in the store, runs the engine on them and records what came of it.

Layering (checked by import-linter, see `.importlinter`): services import the engine, the
families' engines and the store; never the UI, the CLI or Textual."""
