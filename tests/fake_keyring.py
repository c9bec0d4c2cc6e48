"""A keyring backend for subprocess tests: `PYTHON_KEYRING_BACKEND=fake_keyring.FileKeyring`.

The app's own keyring code (proactive_tui.llm.keys) runs unchanged; only the OS backend is
replaced, by a JSON file named in FAKE_KEYRING_FILE. The file lives outside the app's data and
config dirs, so a suite that scans those dirs for a key finds only what the app itself wrote.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1

    def _path(self) -> Path:
        return Path(os.environ["FAKE_KEYRING_FILE"])

    def _data(self) -> dict[str, str]:
        path = self._path()
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._data().get(f"{service}/{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._data()
        data[f"{service}/{username}"] = password
        self._path().write_text(json.dumps(data), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        data = self._data()
        if data.pop(f"{service}/{username}", None) is None:
            raise PasswordDeleteError(username)
        self._path().write_text(json.dumps(data), encoding="utf-8")
