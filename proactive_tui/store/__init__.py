"""Sessions that survive anything: an SQLite event log, history queries, resume.

- `db`: the connection, schema and migrations; `StoreError` carries a plain message.
- `recorder`: `record_events(store, spec, session)` commits each event as the engine emits it.
- `queries`: list sessions with headline scores, load events and run records, delete, resume.

No UI imports here: the TUI, the CLI and export all read sessions through these functions.
"""

from proactive_tui.store.db import SCHEMA_VERSION, SessionRow, Store, StoreError, default_path, open_store
from proactive_tui.store.queries import (
    ResumePlan, SessionSummary, delete_session, effective_status, list_sessions, load_events, load_record,
    resolve_id, resume_spec,
)
from proactive_tui.store.recorder import SessionRecorder, record_events

__all__ = [
    "SCHEMA_VERSION", "ResumePlan", "SessionRecorder", "SessionRow", "SessionSummary", "Store", "StoreError",
    "default_path", "delete_session", "effective_status", "list_sessions", "load_events", "load_record",
    "open_store", "record_events", "resolve_id", "resume_spec",
]
