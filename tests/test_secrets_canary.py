"""One canary per place a secret lives, followed through everything a session leaves behind.

A key may come from the OS keyring, the provider's environment variable, or the user info of
an `--api-base` URL (`http://user:secret@host/v1`, common for self-hosted servers behind basic
auth). Each gets its own canary, deliberately not key-shaped (no `sk-` prefix), so only the app
keeping secrets out of what it writes, not the pattern redactor, can pass. One headless session
of each family runs against the fake OpenAI server with `--out`; each session is exported in
every format; the sessions are listed and shown; then every byte the app could have written is
read: stdout and stderr of every command, the `--out` files, the exports, and every file under
the temporary data and config dirs (the store database and its WAL, memories, anything else).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conftest import ROOT
from family_runs import RUNS, cli, export_all, run_family, session_id_of
from proactive_tui.store.db import default_path
from proactive_tui.testing.fake_openai import FakeOpenAIServer

KEYRING_CANARY = "kr-canary-3b9d17e2c4"
ENV_CANARY = "env-canary-8f0a6c5e1d"
URL_CANARY = "url-canary-5e2c7a9b0f"
CANARIES = (KEYRING_CANARY, ENV_CANARY, URL_CANARY)


def with_userinfo(base_url: str) -> str:
    """`http://127.0.0.1:port/v1` -> `http://proxyuser:<URL_CANARY>@127.0.0.1:port/v1`."""
    scheme, rest = base_url.split("://", 1)
    return f"{scheme}://proxyuser:{URL_CANARY}@{rest}"


@pytest.fixture
def secrets_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The child processes' environment: the fake keyring holding KEYRING_CANARY (its file kept
    outside the scanned dirs) and OPENAI_API_KEY holding ENV_CANARY."""
    keyring_dir = tmp_path_factory.mktemp("keyring")
    (keyring_dir / "keys.json").write_text(json.dumps({"proactive-tui/openai": KEYRING_CANARY}), encoding="utf-8")
    return {"PYTHON_KEYRING_BACKEND": "fake_keyring.FileKeyring", "FAKE_KEYRING_FILE": str(keyring_dir / "keys.json"),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "OPENAI_API_KEY": ENV_CANARY}


def assert_clean(data: bytes, where: object) -> None:
    """No canary, in UTF-8 or in the JSON/URL spellings that would hide it from a plain search."""
    for canary in CANARIES:
        for spelling in (canary, canary.replace("-", "\\u002d"), canary.replace("-", "%2D")):
            assert spelling.encode() not in data, (canary, where)


def test_no_secret_reaches_any_output_file_or_the_store(secrets_env: dict[str, str], isolated_dirs: Path,
                                                         tmp_path: Path) -> None:
    outputs: list[tuple[str, bytes]] = []
    authorizations: list[str] = []
    with FakeOpenAIServer() as server:  # `responder` set per family below
        for family, run in RUNS.items():
            server.responder = run.responder
            proc = run_family(run, server.base_url, tmp_path / f"{family}.json", env=secrets_env)
            outputs += [(f"run {family} stdout", proc.stdout), (f"run {family} stderr", proc.stderr)]
            assert proc.returncode == 0, proc.stderr.decode(errors="replace")
            # the same with the key in the URL's user info: refused before any call, the URL
            # named without it (the client cannot send URL credentials beside its key header)
            refused = run_family(run, with_userinfo(server.base_url), tmp_path / f"{family}-url.json", env=secrets_env)
            outputs += [(f"url run {family} stdout", refused.stdout), (f"url run {family} stderr", refused.stderr)]
            assert refused.returncode == 1 and b"has credentials in it" in refused.stderr, refused.stderr
            assert server.base_url.encode() in refused.stderr and not (tmp_path / f"{family}-url.json").exists()
        # once more with no environment variable, so the keyring's key is the one in use
        keyring_only = {k: v for k, v in secrets_env.items() if k != "OPENAI_API_KEY"}
        server.responder = RUNS["proactiveeval"].responder
        proc = run_family(RUNS["proactiveeval"], server.base_url, tmp_path / "keyring.json", env=keyring_only)
        outputs += [("keyring run stdout", proc.stdout), ("keyring run stderr", proc.stderr)]
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        authorizations = [r.headers.get("authorization", "") for r in server.requests]
    # the canaries were really in use: the environment's key, then the keyring's
    assert f"Bearer {ENV_CANARY}" in authorizations and f"Bearer {KEYRING_CANARY}" in authorizations

    for family, run in RUNS.items():
        session_id = session_id_of(tmp_path / f"{family}.json")
        export_all(run, session_id, tmp_path / "exports" / family, env=secrets_env)
        for args in (["sessions", "show", session_id], ["sessions", "show", "--json", session_id]):
            done = cli(args, env=secrets_env)
            assert done.returncode == 0, done.stderr
            outputs += [(" ".join(args), done.stdout + done.stderr)]
    for args in (["sessions", "list"], ["sessions", "list", "--json"], ["keys", "list"]):
        done = cli(args, env=secrets_env)
        assert done.returncode == 0, done.stderr
        outputs += [(" ".join(args), done.stdout + done.stderr)]

    for where, data in outputs:
        assert_clean(data, where)
    written = [p for root in (isolated_dirs, tmp_path) for p in root.rglob("*") if p.is_file()]
    assert default_path() in written, "the session store was not written where the test looks"
    assert len([p for p in written if p.is_relative_to(tmp_path / "exports")]) >= len(RUNS) * 5
    for path in written:
        assert_clean(path.read_bytes(), path)


def test_an_api_base_with_credentials_is_refused_without_echoing_them() -> None:
    """Regression: a URL with user info reached httpx, which refuses URL credentials beside the
    client's Authorization header; that came back as a server error (500) retried five times.
    Now the gateway (and the run preflight) refuse it at once, naming the URL without them."""
    from proactive_tui.llm.preflight import model_problem
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings

    url = f"http://proxyuser:{URL_CANARY}@127.0.0.1:9/v1"
    with pytest.raises(ModelError) as info:
        Gateway()._request(ModelSettings(model="openai/m", api_base=url), [{"role": "user", "content": "hi"}])
    assert not info.value.retryable and "has credentials in it" in info.value.message
    assert URL_CANARY not in info.value.message and "http://127.0.0.1:9/v1" in info.value.message
    problem = model_problem("openai/m", url)
    assert problem is not None and URL_CANARY not in problem and "has credentials in it" in problem
    assert model_problem("openai/m", "http://127.0.0.1:9/v1") is None
