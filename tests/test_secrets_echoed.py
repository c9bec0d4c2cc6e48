"""Secrets a provider or a server hands back, and secrets from every place the app reads them.

Issue 33, points 1, 2 and 8. A key kept in the OS keyring (here the fake file keyring, the app's
own keyring code unchanged) leaked when a provider echoed it in an error: only the environment's
keys were known to the redactor. Every secret the app knows is now masked by exact value, in every
spelling, wherever text is written: stderr and stdout, `--out`, the store, `sessions show`, each
export format. The messages that name an endpoint name it without credentials; an api base in
`OPENAI_API_BASE` is checked before any call like the flag's; bytes that are not UTF-8 are
reported as what arrived.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from conftest import ROOT
from family_runs import EXPORT_FORMATS, RUNS, cli, run_family, session_id_of, with_text
from proactive_tui.testing.fake_openai import FakeOpenAIServer, Reply, UnacceptingPort

KEYRING_CANARY = "kr-echo-canary-71c4e09a5b"
"""Deliberately not key-shaped (no `sk-`): only exact-value masking can hide it."""
SPELLINGS = (KEYRING_CANARY, KEYRING_CANARY.replace("-", "\\u002d"), KEYRING_CANARY.replace("-", "%2D"))


def echoes(status_or_page: str) -> Reply:
    """The provider's answer that quotes the key it was sent, as real ones do ("Incorrect API key
    provided: ..."): a JSON error body with this status, or an HTML page."""
    quoted = f"Incorrect API key provided: {KEYRING_CANARY}. You can find your API key at https://example.test"
    if status_or_page == "html-200":
        return Reply.page(200, f"<html><body><h1>Sign in</h1><p>key {KEYRING_CANARY} is not valid</p></body></html>")
    if status_or_page == "html-502":
        return Reply.page(502, f"<html><head><title>502</title></head><body>upstream refused {KEYRING_CANARY}</body></html>")
    return Reply.error(int(status_or_page), quoted)


def assert_clean(data: bytes, where: object) -> None:
    for spelling in SPELLINGS:
        assert spelling.encode() not in data, (spelling, where)


@pytest.fixture
def keyring_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Children read the key from the fake keyring only (no OPENAI_API_KEY), retry nothing (each
    error is final at once), and find the test helpers on their path."""
    keyring_dir = tmp_path_factory.mktemp("keyring")
    (keyring_dir / "keys.json").write_text(json.dumps({"proactive-tui/openai": KEYRING_CANARY}), encoding="utf-8")
    return {"PYTHON_KEYRING_BACKEND": "fake_keyring.FileKeyring", "FAKE_KEYRING_FILE": str(keyring_dir / "keys.json"),
            "PYTHONPATH": os.pathsep.join([str(ROOT / "tests"), str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "OPENAI_API_KEY": "", "PROACTIVE_TUI_MAX_RETRIES": "0"}


ECHOES = ("403", "400", "500", "html-200", "html-502")
"""The error answers (each ends the session at its first call)."""


def test_a_keyring_key_a_provider_echoes_is_masked_in_every_output(keyring_env: dict[str, str],
                                                                     isolated_dirs: Path, tmp_path: Path) -> None:
    """Each error answer ends a ProactiveEval session; then one session of every family runs to
    its end with every seat's free text quoting the key (a proxy answering 200 with it, streamed
    word by word to the terminal, parsed from a judge's JSON). Then everything is exported, shown
    and listed, and every byte written is read."""
    outputs: list[tuple[str, bytes]] = []
    ids: dict[str, list[str]] = {family: [] for family in RUNS}
    runs = [("proactiveeval", kind) for kind in ECHOES] + [(family, "reply") for family in RUNS]
    with FakeOpenAIServer() as server:
        for family, kind in runs:
            run = RUNS[family]
            server.responder = (with_text(run.responder, f"(key {KEYRING_CANARY})") if kind == "reply"
                                else lambda body, kind=kind: echoes(kind))
            out = tmp_path / f"{family}-{kind}.json"
            proc = run_family(run, server.base_url, out, env=keyring_env)
            outputs += [(f"run {family} {kind} stdout", proc.stdout), (f"run {family} {kind} stderr", proc.stderr)]
            if kind == "reply":
                assert proc.returncode == 0 and b"(key [redacted])" in proc.stdout, proc.stderr
            else:
                assert proc.returncode != 0 or b"failed" in proc.stderr, proc.stderr
            if kind not in ("html-502", "reply"):  # (an error page with an error status is named by its status alone)
                # the provider's words reached the person, with the key masked in them
                assert b"[redacted]" in proc.stderr, (kind, proc.stderr.decode(errors="replace"))
            ids[family].append(session_id_of(out))
        authorizations = {r.headers.get("authorization", "") for r in server.requests}
    assert f"Bearer {KEYRING_CANARY}" in authorizations, "the keyring's key was not the one in use"

    every = [session_id for family_ids in ids.values() for session_id in family_ids]
    exports = [(fmt, every) for fmt in EXPORT_FORMATS] + [(RUNS[f].dataset_format, ids[f]) for f in RUNS]
    for fmt, chosen in exports:
        done = cli(["export", *chosen, "--format", fmt, "--out", str(tmp_path / "exports" / fmt)], env=keyring_env)
        assert done.returncode == 0, done.stderr
        outputs.append((f"export {fmt}", done.stdout + done.stderr))
    for session_id in every:
        for args in (["sessions", "show", session_id], ["sessions", "show", "--json", session_id]):
            done = cli(args, env=keyring_env)
            assert done.returncode == 0, done.stderr
            outputs.append((" ".join(args), done.stdout + done.stderr))
    done = cli(["sessions", "list", "--json"], env=keyring_env)
    outputs.append(("sessions list --json", done.stdout + done.stderr))

    for where, data in outputs:
        assert_clean(data, where)
    written = [p for root in (isolated_dirs, tmp_path) for p in root.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".db") or ".db-" in p.name for p in written), "no session store to look in"
    assert len([p for p in written if p.is_relative_to(tmp_path / "exports")]) >= len(exports)
    for path in written:
        assert_clean(path.read_bytes(), path)


def test_every_secret_the_app_knows_is_masked_by_exact_value(monkeypatch: pytest.MonkeyPatch,
                                                            isolated_dirs: Path) -> None:
    """Keyring, environment (any *_API_KEY / *_TOKEN), config, an api base's user info and its
    `api_key=` parameter, OPENAI_API_BASE: each masked as it is and as JSON, a URL or HTML spell it."""
    from types import SimpleNamespace

    from proactive_tui.config import load_config
    from proactive_tui.llm import keys
    from proactive_tui.redact import redact
    from proactive_tui.llm.settings import ModelSettings
    from proactive_tui.textsafe import json_text

    # the OS keyring, as `keys` reaches it (no backend class is defined here: keyring registers
    # every subclass it sees, process-wide)
    stored = {"anthropic": "kr-plain-4d1e8b20"}
    monkeypatch.setattr(keys, "_keyring", lambda: SimpleNamespace(get_password=lambda service, user: stored.get(user)))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    assert keys.get_key("anthropic") == "kr-plain-4d1e8b20"
    monkeypatch.setenv("HF_TOKEN", "hf-envtoken-93b1a7")
    monkeypatch.setenv("OPENAI_API_BASE", "http://proxy:envbase-pw-5521@127.0.0.1:9/v1")
    monkeypatch.setenv("PROACTIVE_TUI_API_BASE", "http://127.0.0.1:9/v1?api_key=ptenv-qkey-7742")
    Path(os.environ["PROACTIVE_TUI_CONFIG"]).write_text(
        '[roles.judge]\nmodel = "openai/j"\napi_base = "https://cfguser:cfg-pw-66e1@judge.test/v1"\n', encoding="utf-8")
    load_config()
    ModelSettings(model="openai/m", api_base="http://127.0.0.1:9/v1?key=flag-qkey-0c3d&x=1")

    secrets = ("kr-plain-4d1e8b20", "hf-envtoken-93b1a7", "envbase-pw-5521", "ptenv-qkey-7742", "cfg-pw-66e1",
               "flag-qkey-0c3d")
    for secret in secrets:
        for spelling in (secret, secret.replace("-", "\\u002d"), secret.replace("-", "%2D")):
            text = f"provider said: bad key ({spelling}) - try again"
            assert redact(text) == "provider said: bad key ([redacted]) - try again", spelling
        written = json_text({"error": f"key {secret} refused", "nested": [{"k": secret}]})
        assert secret not in written and json.loads(written)["error"] == "key [redacted] refused"
    assert redact("the judge said: fine") == "the judge said: fine"  # ordinary text is left alone


def test_an_api_key_in_the_api_base_query_is_never_named(isolated_dirs: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """`--api-base 'http://host/?api_key=...'` against a server with no API there: the "no
    OpenAI-compatible API at ..." line names the base without its query, on stderr, in `--out`
    and in the store."""
    from proactive_tui.cli.main import main
    from proactive_tui.store.db import default_path

    secret = "qs-canary-0b5e61d2f9"
    with FakeOpenAIServer(flavor="llama_cpp") as server:  # routes only under /v1: a route miss elsewhere
        root = server.root_url
        base = f"{root}/api?api_key={secret}"
        out = tmp_path / "run.json"
        code = main(["run", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--user", "openai/u",
                     "--judge", "openai/j", "--max-turns", "2", "--api-base", base, "--out", str(out)])
    err = capsys.readouterr().err
    assert "no OpenAI-compatible API at" in err, err
    assert f"{root}/api" in " ".join(err.split()), err
    assert code != 0 or out.exists()
    for data, where in ((err.encode(), "stderr"), (out.read_bytes() if out.exists() else b"", "--out"),
                        (default_path().read_bytes(), "store")):
        assert secret.encode() not in data, where
    wal = default_path().with_name(default_path().name + "-wal")
    assert not wal.exists() or secret.encode() not in wal.read_bytes()


def test_an_endpoint_is_named_without_credentials_in_every_gateway_message() -> None:
    """Each wording that names the endpoint (no API there, cannot reach, no first token) names it
    as `public_api_base` shows it: the same query key never reaches a message."""
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings

    secret = "qs-msg-secret-7d21"
    messages: list[str] = []

    async def ask(settings: ModelSettings) -> None:
        try:
            await Gateway().complete(settings, [{"role": "user", "content": "hi"}])
        except ModelError as exc:
            messages.append(exc.message)

    with FakeOpenAIServer(flavor="llama_cpp") as server:  # a route miss outside /v1
        asyncio.run(ask(ModelSettings(model="openai/m", api_base=f"{server.root_url}/x?api_key={secret}",
                                      max_retries=0)))
    with UnacceptingPort() as port:  # connections never complete
        asyncio.run(ask(ModelSettings(model="openai/m", api_base=f"{port.base_url}?key={secret}", max_retries=0,
                                      connect_timeout=0.3)))
        gone = port.base_url
    asyncio.run(ask(ModelSettings(model="openai/m", api_base=f"{gone}?token={secret}", max_retries=0)))  # closed now
    assert len(messages) == 3, messages
    for message, wording in zip(messages, ("no OpenAI-compatible API at", "could not connect to", "cannot reach")):
        assert wording in message and secret not in message and "127.0.0.1" in message, message


def test_openai_api_base_with_credentials_is_refused_before_any_call(monkeypatch: pytest.MonkeyPatch,
                                                                     isolated_dirs: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """litellm reads OPENAI_API_BASE when a seat sets no base; with `user:pass@` in it every call
    failed as a 500, retried five times. Now the run's preflight and the gateway refuse it up
    front, naming the variable and the URL without its credentials; no request is sent."""
    from proactive_tui.cli.main import main
    from proactive_tui.llm.preflight import model_problem
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings

    secret = "envurl-canary-2f9c"
    with FakeOpenAIServer() as server:
        root = server.base_url.split("://", 1)[1]
        monkeypatch.setenv("OPENAI_API_BASE", f"http://proxyuser:{secret}@{root}")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used-0000")
        problem = model_problem("openai/m", None)
        assert problem is not None and "OPENAI_API_BASE" in problem and "has credentials in it" in problem
        assert secret not in problem and server.base_url in problem

        retries: list[object] = []
        with pytest.raises(ModelError) as info:
            asyncio.run(Gateway(on_retry=retries.append).complete(ModelSettings(model="openai/m"),
                                                                  [{"role": "user", "content": "hi"}]))
        assert "OPENAI_API_BASE" in info.value.message and secret not in info.value.message
        assert not info.value.retryable and not retries

        code = main(["run", "proactiveeval/persuasion/fair/0", "--agent", "openai/a", "--user", "openai/u",
                     "--judge", "openai/j", "--max-turns", "2", "--no-store"])
        err = capsys.readouterr().err
        assert code == 1 and "OPENAI_API_BASE" in err and secret not in err, err
        assert not server.chat_requests(), "a request was sent with the credentials in the URL"
        # a seat's own base wins over the variable, so it is not refused for it
        assert model_problem("openai/m", server.base_url) is None


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_bytes_that_are_not_utf8_are_reported_as_what_arrived(streamed: bool) -> None:
    """A server writing Latin-1: litellm reports it as a stream cut before any text (which the
    gateway worded "no content at all") or as a 500. Said now as what it is, with the bytes
    around the first bad one, and not asked again (the same server encodes the same way)."""
    from proactive_tui.llm.errors import ModelError
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.llm.settings import ModelSettings

    async def no_wait(seconds: float) -> None:
        return None

    with FakeOpenAIServer(responder=lambda body: Reply("Voilà un café crème", fault="bad_utf8")) as server:
        gateway = Gateway(sleep=no_wait)
        with pytest.raises(ModelError) as info:
            asyncio.run(gateway.complete(ModelSettings(model="openai/m", api_base=server.base_url),
                                         [{"role": "user", "content": "hi"}],
                                         on_delta=(lambda delta: None) if streamed else None))
        requests = len(server.chat_requests())
    message = info.value.message
    assert "no content" not in message and "(500)" not in message, message
    assert "not UTF-8" in message and "0xe0" in message and "Voil\\xe0" in message, message
    assert info.value.kind == "bad_encoding" and requests == 1


def test_a_url_with_credentials_typed_as_the_model_is_named_without_them(capsys: pytest.CaptureFixture[str]) -> None:
    """`--agent 'http://me:pw@host/v1'`: refused as a URL in the model field, the URL shown
    without its user info (it is the same secret the api base would hold)."""
    from proactive_tui.cli.main import main

    secret = "model-url-pw-61a0"
    code = main(["run", "proactiveeval/persuasion/fair/0", "--agent", f"http://me:{secret}@127.0.0.1:9/v1",
                 "--user", "openai/u", "--judge", "openai/j", "--no-store"])
    err = capsys.readouterr().err
    assert code == 1 and "is a URL, not a model string" in err and "http://127.0.0.1:9/v1" in err, err
    assert secret not in err


def test_the_store_masks_a_known_secret_in_whatever_it_writes(tmp_path: Path) -> None:
    """A reply or an error that holds a key the app read from the keyring is stored with the key
    masked (an event, a session's summary, its title), the JSON still valid and the rest exact;
    text without a secret is stored byte for byte as it was given."""
    from proactive_tui.redact import remember_secret
    from proactive_tui.store.db import SessionRow, Store

    secret = 'kr-store-"canary"-5e0f'  # a quote in it: masked in the data, never in the JSON text
    remember_secret(secret)
    payload = json.dumps({"text": f"your key {secret} expired", "other": "kept exactly \u00e9"})
    store = Store(tmp_path / "s.db")
    try:
        store.create_session(SessionRow(id="s1", env_id="e", family="f", title=f"t {secret}"))
        store.append("s1", 1, "message", payload, "2026-01-01T00:00:00")
        store.append("s1", 2, "message", '{"text": "nothing secret"}', "2026-01-01T00:00:01")
        store.update_session("s1", "2026-01-01T00:00:02", summary={"error": f"403: {secret}"})
        rows = store.event_rows("s1")
        row = store.session("s1")
    finally:
        store.close()
    assert json.loads(rows[0][2]) == {"text": "your key [redacted] expired", "other": "kept exactly \u00e9"}
    assert rows[1][2] == '{"text": "nothing secret"}'
    assert row is not None and row.title == "t [redacted]" and row.summary == {"error": "403: [redacted]"}
    data = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"canary" not in data


def test_a_secret_split_across_streamed_pieces_is_masked_whole() -> None:
    """What a seat streams is masked as it is shown: an ending that could start a known secret
    waits for the next piece, so the key never reaches the screen in two halves."""
    from proactive_tui.redact import StreamMasker, remember_secret

    remember_secret("kr-split-canary-99e1")
    masker = StreamMasker()
    pieces = ["your key is kr-sp", "lit-can", "ary-99e1 ok k", "r-", "x end k"]
    shown = [masker.feed(p) for p in pieces] + [masker.flush()]
    assert "".join(shown) == "your key is [redacted] ok kr-x end k"
    assert not any("kr-sp" in piece or "canary" in piece for piece in shown), shown
    assert StreamMasker().feed("plain text ") == "plain text "


@pytest.mark.parametrize("streamed", [True, False], ids=["streamed", "whole"])
def test_a_reply_quoting_a_known_key_is_masked_by_the_gateway(streamed: bool) -> None:
    """Every model call goes through the gateway (seats, ProactiveBench's own calls, judges,
    `synth`), so a reply that quotes a key the app read is masked there: in what streams, in the
    completion and in the call's trace."""
    from proactive_tui.llm import trace
    from proactive_tui.llm.gateway import Gateway
    from proactive_tui.redact import remember_secret
    from proactive_tui.llm.settings import ModelSettings

    remember_secret("kr-gateway-canary-4b7d")
    pieces: list[str] = []
    traces: list[trace.CallTrace] = []
    with FakeOpenAIServer(responder=lambda body: "your key kr-gateway-canary-4b7d is old") as server:
        with trace.listening(lambda call, label: traces.append(call)):
            completion = asyncio.run(Gateway().complete(ModelSettings(model="openai/m", api_base=server.base_url),
                                                        [{"role": "user", "content": "hi"}],
                                                        on_delta=pieces.append if streamed else None))
    assert completion.text == "your key [redacted] is old"
    assert "".join(pieces) == (completion.text if streamed else "")
    assert traces and traces[0].reply == completion.text
