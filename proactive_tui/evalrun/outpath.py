"""Check an output file path before any work is done, so a session or a batch is never run only
to find at the end that its record cannot be written (with `--no-store`, that lost the session).

Beside the batch runner, below the CLI, so `synth`'s setup (which the studio runs too) can use it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def unwritable_reason(path: str | Path | None) -> str | None:
    """Why `path` cannot be written as a file, or None if it can. Creates missing parent folders
    (as writing would) and probes the folder with a temporary file, removed at once."""
    if not path:
        return None
    target = Path(path).expanduser()
    if target.is_dir():
        return f"{target} is a folder; give a file path, e.g. {target / 'run.json'}"
    if target.exists() and not os.access(target, os.W_OK):
        return f"{target} exists and is not writable"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"cannot create the folder {target.parent}: {exc.strerror or exc}"
    try:
        with tempfile.NamedTemporaryFile(dir=target.parent, prefix=".proactive-tui-probe-"):
            pass
    except OSError as exc:
        return f"cannot write in {target.parent}: {exc.strerror or exc}"
    return None
