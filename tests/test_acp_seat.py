"""An ACP agent program in the agent seat (issue 37), through the real stdio protocol.

Every test starts `tests/acp_fixtures/agent.py` (a small agent written with the SDK) as a
subprocess and talks to it as the seat does. Bounded by turns: the deadline tests set a small
`turn_timeout` and assert what happened (cancel sent, turn ended or process stopped), never how
long it took.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_fixtures import AGENT, agent_env, write_agent_config
from conftest import ROOT
from proactive_tui.core.participants import ReplyRequest
from proactive_tui.llm import trace
from proactive_tui.llm.acp import agents as acp_agents
from proactive_tui.llm.acp import client as acp_client
from proactive_tui.llm.acp.agents import AcpAgentConfig, AgentSpec
from proactive_tui.core.acp_seat import REDRIVEN, RESTORED, SILENCE_NOTE, AcpParticipant, recorded_restore_points
from proactive_tui.llm.errors import ModelError


def spec(mode: str, *flags: str, saved: Path | None = None, **config) -> AgentSpec:
    """The test agent in `mode`; `saved`: the folder it keeps its sessions in (`--load`)."""
    env = {**agent_env(), **({"ACP_TEST_SESSIONS": str(saved)} if saved else {})}
    cfg = AcpAgentConfig(command=sys.executable, args=[str(AGENT), mode, *flags], env=env, **config)
    return AgentSpec(seat="acp:test", name="test", config=cfg)


def ask(messages: list[dict[str, str]], system: str = "Be brief.", **kw) -> ReplyRequest:
    return ReplyRequest(seat="agent", system=system, messages=messages, purpose="agent message", **kw)


def stderr_of(p: AcpParticipant) -> str:
    return p.agent._stderr.decode() if p.agent is not None else ""


@pytest.fixture
def traces():
    calls: list[tuple[trace.CallTrace, trace.CallLabel | None]] = []
    with trace.listening(lambda call, label: calls.append((call, label))):
        yield calls


async def test_echo_streams_chunks_and_traces_the_agents_side(tmp_path: Path, traces) -> None:
    p = AcpParticipant(spec("echo"), workdir_root=tmp_path)
    deltas: list[str] = []
    try:
        reply = await p.reply(ask([{"role": "user", "content": "hello there"}], on_delta=deltas.append))
        err = stderr_of(p)
        workdir = p.workdir
    finally:
        await p.aclose()
    assert reply.text == "echo: hello there (turn 1)"
    assert len(deltas) == 2 and "".join(deltas) == reply.text  # streamed as the agent sent it
    assert reply.model == "acp:test (test-agent 1.2.3, ACP v1)"  # agent, version, protocol version
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens == len(reply.text)
    assert "CAPS fs_read=False fs_write=False terminal=False" in err
    assert f"cwd={workdir}" in err and workdir.parent == tmp_path
    assert not workdir.exists()  # the scratch folder goes with the seat (keep_workdir keeps it)
    [(call, label)] = traces
    assert call.finish_reason == "end_turn" and call.reply == reply.text and call.error is None
    sent = call.request["messages"][0]["content"]
    assert sent.index("Be brief.") < sent.index("hello there")  # instructions in the first prompt
    side = call.agent
    assert side["info"]["name"] == "test-agent" and side["info"]["version"] == "1.2.3"
    assert side["info"]["protocol_version"] == 1
    assert side["thoughts"] == "pondering turn 1"
    assert side["plans"] == [[{"content": "answer", "priority": "high", "status": "in_progress"}]]
    assert side["tool_calls"][0]["title"] == "look around"
    assert side["usage"]["used"] == 10 and side["usage"]["outputTokens"] == len(reply.text)
    assert label.seat == "agent" and label.purpose == "agent message"


NOISY = """
import asyncio, json, sys
from proactive_tui.core.participants import ReplyRequest
from proactive_tui.llm.acp.agents import AcpAgentConfig, AgentSpec
from proactive_tui.core.acp_seat import AcpParticipant

async def main():
    cfg = AcpAgentConfig.model_validate(json.loads(sys.argv[1]))
    p = AcpParticipant(AgentSpec(seat="acp:test", name="test", config=cfg))
    try:
        reply = await p.reply(ReplyRequest(seat="agent", system="", messages=[{"role": "user", "content": "hi"}]))
    finally:
        await p.aclose()
    print(reply.text)

asyncio.run(main())
"""


def test_a_banner_on_stdout_is_skipped_quietly(tmp_path: Path) -> None:
    """Not JSON-RPC on the agent's stdout: skipped, and no traceback reaches the terminal (run
    outside pytest, whose own log handlers would hide what a plain process prints)."""
    cfg = spec("echo", "--noisy").config.model_dump()
    proc = subprocess.run([sys.executable, "-c", NOISY, json.dumps(cfg)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PROACTIVE_TUI_CACHE": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "echo: hi (turn 1)"
    assert proc.stderr == ""


async def test_keep_workdir_keeps_the_sessions_scratch_folder(tmp_path: Path) -> None:
    p = AcpParticipant(spec("echo", keep_workdir=True), workdir_root=tmp_path)
    try:
        await p.reply(ask([{"role": "user", "content": "hi"}]))
    finally:
        await p.aclose()
    assert p.workdir.is_dir() and p.workdir.parent == tmp_path and p.workdir.name.startswith("test-")


async def test_each_user_turn_is_one_prompt_in_one_session(tmp_path: Path, traces) -> None:
    p = AcpParticipant(spec("echo"), workdir_root=tmp_path)
    try:
        first = await p.reply(ask([{"role": "user", "content": "one"}]))
        dialogue = [{"role": "user", "content": "one"}, {"role": "assistant", "content": "(reformatted by the family)"},
                    {"role": "user", "content": "two"}]
        second = await p.reply(ask(dialogue))
        err = stderr_of(p)
    finally:
        await p.aclose()
    assert first.text.endswith("(turn 1)") and second.text == "echo: two (turn 2)"
    assert err.count("NEW ") == 1  # the agent's own lines are in its session: no new one
    assert traces[1][0].request["messages"][0]["content"] == "two"  # only what the dialogue gained


async def test_a_crash_mid_turn_keeps_the_partial_text_and_says_how_it_ended(tmp_path: Path, traces) -> None:
    p = AcpParticipant(spec("crash"), workdir_root=tmp_path)
    try:
        with pytest.raises(ModelError) as caught:
            await p.reply(ask([{"role": "user", "content": "hi"}], on_delta=lambda t: None))
    finally:
        await p.aclose()
    error = caught.value
    assert error.partial_text == "I was about to"
    assert "ended during session/prompt (exit code 3)" in error.message and "crashing now" in error.message
    assert error.seat == "agent"
    assert traces[0][0].error == error.message and traces[0][0].reply == "I was about to"


async def test_stopping_mid_turn_sends_session_cancel_and_keeps_what_arrived(tmp_path: Path, traces) -> None:
    """The session stopped (its task cancelled) while the agent streams: session/cancel goes out,
    the agent ends the turn as cancelled, the trace keeps the half reply and says why it stopped."""
    import asyncio

    p = AcpParticipant(spec("slow"), workdir_root=tmp_path)
    arrived: list[str] = []
    first = asyncio.Event()

    def on_delta(text: str) -> None:
        arrived.append(text)
        first.set()

    try:
        task = asyncio.ensure_future(p.reply(ask([{"role": "user", "content": "take your time"}], on_delta=on_delta)))
        await first.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        err = stderr_of(p)
        alive = p.agent.alive
    finally:
        await p.aclose()
    assert arrived == ["echo: take you"] and "CANCEL " in err and alive  # it ended the turn: no need to stop it
    [(call, _label)] = traces
    assert call.reply == "echo: take you" and call.error == "cancelled before the turn ended (session/cancel sent)"


@pytest.mark.parametrize("deaf", [False, True])
async def test_a_turn_that_never_ends_is_cancelled_at_the_deadline(tmp_path: Path, deaf: bool) -> None:
    # 8 s: the deadline also bounds starting the agent program (initialize, session/new), which on a
    # loaded machine took longer than the 0.5 s this once had, before its first chunk came
    p = AcpParticipant(spec("never", *(["--deaf"] if deaf else []), turn_timeout=8), workdir_root=tmp_path)
    try:
        with pytest.raises(ModelError) as caught:
            await p.reply(ask([{"role": "user", "content": "go"}]))
        err = stderr_of(p)
        alive = p.agent.alive
    finally:
        await p.aclose()
    assert caught.value.kind == "timeout" and caught.value.partial_text == "thinking forever"
    assert "CANCEL " in err  # session/cancel reached the agent
    if deaf:
        assert "did not end the turn, so it was stopped" in caught.value.message and not alive
    else:
        assert "ended the turn as cancelled" in caught.value.message and alive


@pytest.mark.parametrize(("policy", "asker", "said", "how"), [
    ("deny", None, "permission: no", "deny"),
    ("allow_once", None, "permission: yes", "allow_once"),
    ("ask", "yes", "permission: yes", "asked the person"),
    ("ask", None, "permission: cancelled", "ask (nobody to ask: denied)"),
])
async def test_permission_requests_follow_the_policy(tmp_path: Path, traces, policy, asker, said, how) -> None:
    asked: list[acp_client.PermissionAsk] = []

    async def person(request: acp_client.PermissionAsk) -> str | None:
        asked.append(request)
        return asker

    acp_client.set_permission_asker(person if asker else None)
    p = AcpParticipant(spec("permission", permission=policy), workdir_root=tmp_path)
    try:
        reply = await p.reply(ask([{"role": "user", "content": "clean up"}]))
    finally:
        acp_client.set_permission_asker(None)
        await p.aclose()
    assert reply.text == said
    [record] = traces[0][0].agent["permissions"]
    assert record["policy"] == how and record["tool"]["title"] == "delete everything"
    if asker:
        assert asked[0].tool == "delete everything" and [o[0] for o in asked[0].options] == ["yes", "no"]


async def test_auth_required_is_one_line_saying_how_to_log_in(tmp_path: Path) -> None:
    p = AcpParticipant(spec("auth"), workdir_root=tmp_path)
    try:
        with pytest.raises(ModelError) as caught:
            await p.reply(ask([{"role": "user", "content": "hi"}]))
    finally:
        await p.aclose()
    message = caught.value.message
    assert caught.value.kind == "auth" and "\n" not in message and "Traceback" not in message
    assert "needs a login" in message and str(AGENT) in message
    assert "Log in with Example (oauth)" in message and "Use an API key (key)" in message


async def test_a_program_that_never_answers_initialize_is_refused_at_the_deadline(tmp_path: Path) -> None:
    cfg = AcpAgentConfig(command=sys.executable, args=["-c", "import sys; sys.stdin.read()"], turn_timeout=0.5)
    p = AcpParticipant(AgentSpec(seat="acp:mute", name="mute", config=cfg), workdir_root=tmp_path)
    try:
        with pytest.raises(ModelError, match=r"no answer to initialize within 0.5s \(turn_timeout\)") as caught:
            await p.reply(ask([{"role": "user", "content": "hi"}]))
        stopped = not p.agent.alive
    finally:
        await p.aclose()
    assert caught.value.kind == "timeout" and stopped  # stopped, not kept half-started
    assert not p.workdir.exists()


async def test_a_pinned_version_that_differs_is_refused(tmp_path: Path) -> None:
    p = AcpParticipant(spec("echo", "--version", "2.0.0", version="1.2.3"), workdir_root=tmp_path)
    try:
        with pytest.raises(ModelError, match="reports version 2.0.0, the config pins 1.2.3"):
            await p.reply(ask([{"role": "user", "content": "hi"}]))
    finally:
        await p.aclose()


async def test_an_empty_turn_is_no_reply(tmp_path: Path) -> None:
    p = AcpParticipant(spec("empty"), workdir_root=tmp_path)
    try:
        with pytest.raises(ModelError, match="no message text"):
            await p.reply(ask([{"role": "user", "content": "hi"}]))
    finally:
        await p.aclose()


def _rewound(p_reply_1: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": "one"}, {"role": "assistant", "content": p_reply_1},
            {"role": "user", "content": "another second"}]


async def _two_turns_then_rewind(p: AcpParticipant):
    """Turns "one" and "two", then the dialogue rewound to after turn one with a new second line:
    (the first reply, the reply after the rewind, the agent's stderr); the seat is closed."""
    try:
        first = await p.reply(ask([{"role": "user", "content": "one"}]))
        await p.reply(ask([{"role": "user", "content": "one"}, {"role": "assistant", "content": first.text},
                           {"role": "user", "content": "two"}]))
        again = await p.reply(ask(_rewound(first.text)))
        return first, again, stderr_of(p)
    finally:
        await p.aclose()


async def test_a_rewind_uses_the_agents_fork_when_advertised(tmp_path: Path, traces) -> None:
    _first, again, err = await _two_turns_then_rewind(AcpParticipant(spec("echo", "--fork"), workdir_root=tmp_path))
    assert err.count("NEW ") == 1 and err.count("FORK ") >= 3  # a snapshot per turn, one more to continue
    assert again.text == "echo: another second (turn 2)"  # the fork holds turn 1 only
    assert REDRIVEN not in again.model


async def test_without_fork_a_rewind_starts_a_session_given_the_dialogue_so_far(tmp_path: Path, traces) -> None:
    """Outside a branch (the family rebuilt the dialogue, or rewound it): a new session whose first
    prompt holds the dialogue so far as a transcript; nothing is re-driven, nothing marked."""
    first, again, err = await _two_turns_then_rewind(AcpParticipant(spec("echo"), workdir_root=tmp_path))
    assert err.count("NEW ") == 2 and "FORK" not in err
    assert again.text == "echo: another second (turn 1)" and REDRIVEN not in again.model
    sent = traces[-1][0].request["messages"][0]["content"]
    assert sent.index("Be brief.") < sent.index("The conversation so far:") < sent.index("[user] one")
    assert sent.index(f"[assistant] {first.text}") < sent.index("another second")


async def test_in_a_branch_the_first_call_re_drives_the_earlier_user_turns(tmp_path: Path, traces) -> None:
    from proactive_tui.llm import closers

    closers.open_scope(continues=True)  # as the session runner opens it for a branch or a resume
    p = AcpParticipant(spec("echo"), workdir_root=tmp_path)
    try:
        reply = await p.reply(ask(_rewound("a recorded reply")))
        err = stderr_of(p)
    finally:
        await p.aclose()
    assert err.count("NEW ") == 1 and reply.text == "echo: another second (turn 2)"
    assert reply.model.endswith(f"; {REDRIVEN}")
    redrive = [c for c, label in traces if "re-driving" in (label.purpose if label else "")]
    assert len(redrive) == 1 and redrive[0].request["messages"][0]["content"].endswith("one")
    assert traces[-1][0].agent["continued"] == {"how": "re-driven", "reason": "the agent does not offer session/load"}


def _dialogue(*lines: str) -> list[dict[str, str]]:
    """user, assistant, user... lines."""
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": line} for i, line in enumerate(lines)]


async def _recorded_two_turns(agent: AgentSpec, tmp_path: Path) -> tuple[list[str], dict]:
    """A first process of the agent answers "one" and "two" and ends; returns its replies and the
    restore points its traces recorded, as a branch or resume reads them from the events."""
    from proactive_tui.core.events import ModelCalled

    calls: list = []
    p = AcpParticipant(agent, workdir_root=tmp_path)
    with trace.listening(lambda call, label: calls.append(ModelCalled(seat=label.seat, purpose=label.purpose,
                                                                      turn=label.turn, call=call))):
        try:
            first = await p.reply(ask(_dialogue("one")))
            second = await p.reply(ask(_dialogue("one", first.text, "two")))
        finally:
            await p.aclose()
    return [first.text, second.text], recorded_restore_points(calls)


async def _continue(agent: AgentSpec, tmp_path: Path, recorded: dict, lines: list[str]):
    """A new process, in a continued session (a branch or resume), answers the dialogue `lines`."""
    from proactive_tui.llm import closers

    closers.open_scope(continues=True, recorded=recorded)  # as the session runner opens it
    p = AcpParticipant(agent, workdir_root=tmp_path)
    try:
        return await p.reply(ask(_dialogue(*lines))), stderr_of(p)
    finally:
        await p.aclose()


@pytest.mark.parametrize("fork", [True, False])
async def test_a_continued_dialogue_restores_the_agents_saved_session(tmp_path: Path, traces, fork: bool) -> None:
    """An agent that keeps its sessions (loadSession): the new process loads the one the record
    names (with fork: the snapshot taken after turn two, then forks it; without: the live session
    itself) and continues there; the new turn is the agent's third in that history."""
    saved = tmp_path / "saved"
    saved.mkdir()
    agent = spec("echo", "--load", *(["--fork"] if fork else []), saved=saved)
    (first, second), recorded = await _recorded_two_turns(agent, tmp_path)
    assert [p["messages"] for p in recorded["agent"] if not p.get("snapshot")] == [2, 4]
    traces.clear()
    reply, err = await _continue(agent, tmp_path, recorded, ["one", first, "two", second, "three"])
    assert reply.text == "echo: three (turn 3)"  # the two earlier prompts are in the loaded session
    assert reply.model == f"acp:test (test-agent 1.2.3, ACP v1); {RESTORED}"
    assert "NEW " not in err and "LOAD " in err and ("FORK " in err) == fork
    [(call, _label)] = traces  # nothing re-driven: one prompt, the new line only
    assert call.request["messages"][0]["content"] == "three"
    continued = call.agent["continued"]
    assert continued["how"] == "restored" and continued["via"] == ("session/load, session/fork" if fork else "session/load")
    live = next(p["session_id"] for p in recorded["agent"] if p["messages"] == 4 and not p.get("snapshot"))
    assert (continued["from_session"] == live) != fork  # with fork, the snapshot, never the live session
    from proactive_tui.llm.acp.inspect import sections

    shown = dict(sections(call.agent))["Agent program"]  # the call inspector says so
    assert f"restored from the agent's saved session {continued['from_session']}" in shown
    assert "session/load: advertised" in shown
    again, _ = await _continue(agent, tmp_path, recorded, ["one", first, "two", second, "three again"])
    if fork:  # the saved snapshot was not touched: a second branch from it restores as well
        assert again.text == "echo: three again (turn 3)" and again.model.endswith(RESTORED)
    else:  # the live session went on (turn 3): its replay no longer matches the record, so re-driven
        assert again.model.endswith(REDRIVEN) and again.text == "echo: three again (turn 3)"
        reason = traces[-1][0].agent["continued"]["reason"]
        assert "replayed 3 user messages, the record sent 2" in reason


async def test_a_resumed_chronos_session_restores_the_agents_saved_session(tmp_path: Path) -> None:
    """A Chronos session cut after two turns and resumed (the engine replays the recorded turns,
    the seat is asked from turn 3): the new agent process loads the snapshot its first process
    took after turn 2, as the record names it, though the family keeps the agent's replies as
    parsed JSON. (The uninterrupted run went on in its live session: without fork, its replay
    would not match the record, and the seat would re-drive.)"""
    from chronos_helpers import chronos_env
    from engine_helpers import collect
    from proactive_tui.core.run_record import fold
    from proactive_tui.families.chronos.protocol import ChronosSeats, ChronosSession, ChronosSettings
    from proactive_tui.families.chronos.testing import ScriptedPersona

    saved = tmp_path / "saved"
    saved.mkdir()

    def session(resume_from=None) -> ChronosSession:
        seats = ChronosSeats(agent=AcpParticipant(spec("echo", "--load", "--fork", saved=saved), workdir_root=tmp_path),
                             user=ScriptedPersona())
        models = {"agent": {"model": "acp:test", "acp": {"name": "test"}}}  # as the spec's summary names an ACP seat
        return ChronosSession(chronos_env("car-purchase/positive"), seats, ChronosSettings(max_turns=4),
                              models=models, resume_from=resume_from)

    full = await collect(session())
    judged = [i for i, e in enumerate(full) if e.type == "chronos.timeline_turn"]
    interrupted = fold(full[:judged[1] + 1])  # two complete turns
    assert interrupted.models["agent"]["acp"]["restore_points"]
    resumed = await collect(session(resume_from=interrupted))
    calls = [e for e in resumed if e.type == "model_called" and e.seat == "agent"]
    assert calls and calls[0].turn == 3 and calls[0].call.agent["continued"]["how"] == "restored"
    assert all(c.call.model.endswith(RESTORED) for c in calls)
    assert not any("re-driving" in c.purpose for c in calls)
    assert json.loads(calls[0].call.reply)["response_text"] == "turn 3"  # the agent's third prompt in that session
    assert "LOAD " in (saved / "log").read_text()


async def test_a_failed_load_falls_back_to_re_driving_and_says_why(tmp_path: Path, traces) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    agent = spec("echo", "--load-fails", saved=saved)
    (first, second), recorded = await _recorded_two_turns(agent, tmp_path)
    traces.clear()
    reply, err = await _continue(agent, tmp_path, recorded, ["one", first, "two", second, "three"])
    assert reply.text == "echo: three (turn 3)" and reply.model.endswith(f"; {REDRIVEN}")
    assert err.count("NEW ") == 1 and err.count("PROMPT ") == 3  # two earlier turns prompted again
    continued = traces[-1][0].agent["continued"]
    assert continued["how"] == "re-driven" and continued["reason"].startswith("restoring ")
    assert "session/load failed" in continued["reason"]
    from proactive_tui.llm.acp.inspect import sections

    assert f"(not restored: {continued['reason']})" in dict(sections(traces[-1][0].agent))["Agent program"]


async def test_an_edited_line_is_never_restored_from_a_session_that_holds_the_original(tmp_path: Path, traces) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    agent = spec("echo", "--load", "--fork", saved=saved)
    (first, _second), recorded = await _recorded_two_turns(agent, tmp_path)
    traces.clear()
    reply, err = await _continue(agent, tmp_path, recorded, ["one", first, "two", "EDITED reply", "three"])
    assert "LOAD " not in err and reply.model.endswith(REDRIVEN)
    assert traces[-1][0].agent["continued"]["reason"].startswith("no saved agent session holds the dialogue")


async def test_structured_replies_and_the_chronos_silence_convention(tmp_path: Path, traces) -> None:
    from proactive_tui.families.chronos.reply import AgentReply, agent_text_parser

    p = AcpParticipant(spec("echo"), workdir_root=tmp_path)
    parse = agent_text_parser(lambda: None)
    try:
        value, reply = await p.reply_structured(ask([{"role": "user", "content": "find me a car"}]), AgentReply, parse)
        quiet, _ = await p.reply_structured(ask([{"role": "user", "content": "find me a car"},
                                                 {"role": "assistant", "content": value.model_dump_json()},
                                                 {"role": "user", "content": "be quiet"}]), AgentReply, parse)
    finally:
        await p.aclose()
    assert value.proactive_action == "INFO_RETRIEVAL" and value.response_text == "turn 1"
    assert quiet.proactive_action == "KEEP_SILENT"
    first_prompt = traces[0][0].request["messages"][0]["content"]
    assert SILENCE_NOTE in first_prompt and '"proactive_action"' in first_prompt
    assert SILENCE_NOTE not in traces[1][0].request["messages"][0]["content"]


def test_seat_values_resolve_from_the_config_or_as_a_command_line() -> None:
    configured = {"gem": AcpAgentConfig(command="gemini", args=["--experimental-acp"], version="0.9.0")}
    named = acp_agents.resolve("acp:gem", configured)
    assert named.argv == ["gemini", "--experimental-acp"] and named.config.version == "0.9.0"
    line = acp_agents.resolve("acp:my-agent --flag 'two words'", configured)
    assert line.argv == ["my-agent", "--flag", "two words"] and line.config.permission == "deny"
    with pytest.raises(acp_agents.AcpSeatError, match="needs an agent"):
        acp_agents.resolve("acp:  ")
    problem = acp_agents.problem("acp:no-such-agent-program", configured)
    assert "no program 'no-such-agent-program' on PATH" in problem and "configured: gem" in problem
    assert acp_agents.problem(f"acp:{sys.executable} x", configured) is None


def test_the_config_file_keeps_acp_agents_through_a_save(isolated_dirs: Path) -> None:
    from proactive_tui.config import load_config, save_config

    path = isolated_dirs / "config.toml"
    path.write_text('[acp_agents.gem]\ncommand = "gemini"\nargs = ["--experimental-acp"]\nversion = "0.9.0"\n'
                    'permission = "ask"\nenv = { GEMINI_API_KEY = "k-123" }\n', encoding="utf-8")
    config = load_config(path)
    assert config.acp_agents["gem"].permission == "ask" and config.acp_agents["gem"].env == {"GEMINI_API_KEY": "k-123"}
    save_config(config.model_copy(update={"theme": "other"}), path)
    again = load_config(path)
    assert again.acp_agents == config.acp_agents and again.theme == "other"
    path.write_text('[acp_agents.gem]\nargs = []\n', encoding="utf-8")
    from proactive_tui.config import ConfigError

    with pytest.raises(ConfigError, match=r"acp_agents\.gem\.command"):
        load_config(path)


def test_a_headless_run_seats_an_acp_agent(tmp_path: Path, isolated_dirs: Path) -> None:
    """`run` with `--agent acp:NAME` from the config file: a ProactiveEval dialogue whose agent is
    the program, judged through the fake server; the record names agent, version and protocol, and
    no agent process is left behind."""
    from proactive_tui.core.run_record import RunRecord
    from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder

    pidfile = tmp_path / "pids"
    write_agent_config(isolated_dirs, env={"ACP_TEST_PIDFILE": str(pidfile)}, version="1.2.3")
    out = tmp_path / "run.json"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "run", "proactiveeval/persuasion/fair/0", "--api-base", server.base_url,
             "--agent", "acp:tester", "--user", "openai/user-m", "--judge", "openai/judge-m", "--no-planning",
             "--max-turns", "2", "--out", str(out)],
            cwd=ROOT, env={**os.environ, "COLUMNS": "160"}, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    record = RunRecord.model_validate_json(out.read_text())
    agent_messages = [m for m in record.messages if m.role == "agent"]
    assert agent_messages and all(m.model == "acp:tester (test-agent 1.2.3, ACP v1)" for m in agent_messages)
    assert agent_messages[0].content.startswith("echo: ")
    live = [x for x in proc.stdout.splitlines() if "] agent (" in x]  # each announced naming who answers
    assert live and all("agent (acp:tester (test-agent 1.2.3, ACP v1)): echo: " in x for x in live), live
    assert record.models["agent"]["acp"]["name"] == "tester" and record.models["agent"]["acp"]["version_pin"] == "1.2.3"
    assert record.models["agent"]["acp"]["agent"] == {"name": "test-agent", "title": None, "version": "1.2.3",
                                                      "protocol_version": 1}  # as the agent reported itself
    assert record.models["agent"]["acp"]["env"] == sorted(["ACP_TEST_PIDFILE", *agent_env()])  # names, no values
    assert record.models["agent"]["temperature"] is None and record.models["agent"]["max_tokens"] is None
    for pid in map(int, pidfile.read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    from proactive_tui.cli.main import main

    for fmt in ("run-record", "markdown", "html", "svg", "proactiveeval"):  # every export names who answered
        target = tmp_path / f"export-{fmt}"
        assert main(["export", record.id, "--format", fmt, "--out", str(target)]) == 0
        text = "".join(p.read_text(encoding="utf-8") for p in target.rglob("*") if p.is_file()).replace("&#160;", " ")
        if fmt == "proactiveeval":  # the dataset row: the agent as it reported itself, in its meta
            [row] = json.loads(text)
            assert row["meta"]["models"]["agent"]["acp"]["agent"]["version"] == "1.2.3"
            assert row["meta"]["models"]["agent"]["acp"]["agent"]["protocol_version"] == 1
        else:
            assert "acp:tester (test-agent 1.2.3, ACP v1)" in text, fmt


def test_eval_and_compare_take_an_acp_agent_like_a_model(tmp_path: Path, isolated_dirs: Path) -> None:
    """`eval --agent acp:NAME --agent openai/a` plans, guides and reports both; `compare` sets the
    program beside a model. Planning on: the program writes the plan as a structured reply."""
    from proactive_tui.cli.main import main
    from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder

    write_agent_config(isolated_dirs)
    out = tmp_path / "eval"
    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        code = main(["eval", "proactiveeval/persuasion/fair/0", "--agent", "acp:tester", "--agent", "openai/a",
                     "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
                     "--agreeableness", "low", "--max-turns", "1", "--out", str(out)])
        compared = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "compare", "proactiveeval/persuasion/fair/0", "--agent", "acp:tester",
             "--agent", "openai/a", "--user", "openai/u", "--judge", "openai/j", "--api-base", server.base_url,
             "--max-turns", "2", "--out", str(tmp_path / "cmp")],
            cwd=ROOT, env={**os.environ, "COLUMNS": "160"}, capture_output=True, text=True, timeout=180)
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    guidance = next(t for t in report["families"]["proactiveeval"] if t["id"] == "guidance")
    assert sorted(r["model"] for r in guidance["rows"]) == ["acp:tester", "openai/a"]
    tables = {t["id"]: t for t in report["families"]["proactiveeval"]}
    planning = {r["model"]: r["values"]["overall"] for r in tables["planning"]["rows"]}
    assert planning["acp:tester"] == planning["openai/a"] == 6.0  # the program's plan, judged like a model's
    assert compared.returncode == 0, compared.stderr
    document = json.loads((tmp_path / "cmp" / "comparison.json").read_text(encoding="utf-8"))
    assert len(document["comparison"]["sessions"]) == 2
    assert "acp:tester" in json.dumps(document)


def _run_then_fork(tmp_path: Path, seat: str, edit: str) -> tuple[Any, Any, list[Any]]:
    """`run` a three-turn ProactiveEval session with `acp:tester` as the agent, then `sessions fork`
    it at turn 2 with `seat`'s line edited to `edit`: (the parent's record, the branch's, the
    branch's events)."""
    from proactive_tui.cli.main import main
    from proactive_tui.store import open_store
    from proactive_tui.store.queries import load_events, load_record
    from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder

    with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
        args = ["--api-base", server.base_url, "--quiet"]
        assert main(["run", "proactiveeval/persuasion/fair/0", "--agent", "acp:tester", "--user", "openai/u",
                     "--judge", "openai/j", "--no-planning", "--max-turns", "3", "--out", str(tmp_path / "p.json"), *args]) == 0
        parent_id = json.loads((tmp_path / "p.json").read_text())["id"]
        assert main(["sessions", "fork", parent_id, "--turn", "2", "--seat", seat, "--edit", edit,
                     "--out", str(tmp_path / "b.json"), *args]) == 0
    branch_id = json.loads((tmp_path / "b.json").read_text())["id"]
    with open_store() as store:
        return load_record(store, parent_id), load_record(store, branch_id), load_events(store, branch_id)


def test_a_branch_of_an_acp_session_is_re_driven_and_marked(tmp_path: Path, isolated_dirs: Path) -> None:
    """`sessions fork` of a session whose agent is a program: the branch's new agent process never
    saw the parent's dialogue, so the seat prompts the user turns before the fork point again in a
    new session, and the branch's own agent replies say "re-driven, not identical"."""

    write_agent_config(isolated_dirs)
    parent, branch, events = _run_then_fork(tmp_path, "agent", "EDITED reply")
    assert all(REDRIVEN not in m.model for m in parent.messages if m.role == "agent")
    live = [m for m in branch.messages if m.role == "agent" and m.turn == 3]
    assert live and live[0].model == f"acp:tester (test-agent 1.2.3, ACP v1); {REDRIVEN}"
    assert live[0].content.endswith("(turn 3)")  # turns 1 and 2 were prompted again first
    redriven = [e for e in events if e.type == "model_called" and "re-driving" in e.purpose]
    assert len(redriven) == 2 and all(e.call.agent["redriven"] for e in redriven)
    assert branch.models["agent"]["acp"]["continued"] == {"how": "re-driven",
                                                          "reason": "the agent does not offer session/load"}


def test_a_branch_of_an_acp_session_restores_the_agents_saved_session(tmp_path: Path, isolated_dirs: Path) -> None:
    """`sessions fork` at the user's turn-2 line, the agent keeping its sessions (loadSession and
    fork): the branch's agent process loads the snapshot its parent's process took after the
    agent's turn-2 reply, as the parent's events recorded it, and answers the edited line as its
    third turn; the branch's record says it was restored, and its replies are marked so."""

    saved = tmp_path / "saved"
    saved.mkdir()
    write_agent_config(isolated_dirs, "echo", "--load", "--fork", env={"ACP_TEST_SESSIONS": str(saved)})
    parent, branch, events = _run_then_fork(tmp_path, "user", "EDITED user line")
    assert parent.models["agent"]["acp"]["restore_points"]  # the parent's record names the agent's sessions
    live = [m for m in branch.messages if m.role == "agent" and m.turn == 3]
    assert live and live[0].model == f"acp:tester (test-agent 1.2.3, ACP v1); {RESTORED}"
    assert live[0].content == "echo: EDITED user line (turn 3)"  # turns 1 and 2 are in the loaded session
    continued = branch.models["agent"]["acp"]["continued"]
    assert continued["how"] == "restored" and continued["via"] == "session/load, session/fork"
    assert f"LOAD {continued['from_session']}" in (saved / "log").read_text()
    assert not [e for e in events if e.type == "model_called" and "re-driving" in e.purpose]


def test_a_headless_proactbench_run_names_the_agent_and_its_version_on_the_live_line(tmp_path: Path,
                                                                                      isolated_dirs: Path) -> None:
    """The agent's streamed reply is announced before it arrives: the seat starts the program
    first, so the line says who answers (agent, version, protocol), not only `acp:NAME`."""
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    write_agent_config(isolated_dirs)
    with FakeOpenAIServer(responder=lambda body: "ok") as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "run",
             "proactbench/BP_PROFESSIONAL_01_NONE__style1__531a542ff1714bb080d8f06f3cd2daff", "--api-base", server.base_url,
             "--agent", "acp:tester", "--judge", "openai/j", "--max-triggers", "1", "--no-store"],
            cwd=ROOT, env={**os.environ, "COLUMNS": "400"}, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr
    lines = [x for x in proc.stdout.splitlines() if "] agent (" in x]
    assert lines and all("agent (acp:tester (test-agent 1.2.3, ACP v1)): echo: " in x for x in lines), lines


def test_a_chronos_run_gives_the_program_the_reply_format_and_the_silence_convention(tmp_path: Path,
                                                                                      isolated_dirs: Path) -> None:
    """Chronos scores keeping silent: the program's first prompt carries the family's instructions,
    the reply's JSON schema and the silence convention; every agent turn is read as a reply."""
    from chronos_helpers import scripted_agent_responder

    from proactive_tui.cli.main import main
    from proactive_tui.store import open_store
    from proactive_tui.store.queries import load_events, load_record
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    write_agent_config(isolated_dirs)
    with FakeOpenAIServer(responder=scripted_agent_responder) as server:
        assert main(["run", "chronos/car-purchase-towing/negative", "--api-base", server.base_url, "--agent", "acp:tester",
                     "--user", "openai/user-m", "--judge", "openai/judge-m", "--max-turns", "2", "--quiet",
                     "--out", str(tmp_path / "c.json")]) == 0
    session_id = json.loads((tmp_path / "c.json").read_text())["id"]
    with open_store() as store:
        record, events = load_record(store, session_id), load_events(store, session_id)
    agent_calls = [e for e in events if e.type == "model_called" and e.seat == "agent"]
    first = agent_calls[0].call.request["messages"][0]["content"]
    assert first.startswith("Instructions for this whole conversation") and SILENCE_NOTE in first
    assert '"proactive_action"' in first and "Keep an eye out for me?" in first
    assert all(SILENCE_NOTE not in c.call.request["messages"][0]["content"] for c in agent_calls[1:])
    assert len({c.call.agent["session_id"] for c in agent_calls}) == 1  # one agent session for the dialogue
    agent_lines = [m for m in record.messages if m.role == "agent"]
    assert len(agent_lines) == len(agent_calls) >= 2 and not any(e.type == "error" for e in events)
    assert all(json.loads(m.content)["proactive_action"] == "INFO_RETRIEVAL" for m in agent_lines)


def test_a_headless_run_whose_agent_needs_a_login_says_how_in_one_line(tmp_path: Path, isolated_dirs: Path) -> None:
    from proactive_tui.testing.fake_openai import FakeOpenAIServer

    write_agent_config(isolated_dirs, "auth")
    with FakeOpenAIServer(responder=lambda body: "ok") as server:
        proc = subprocess.run(
            [sys.executable, "-m", "proactive_tui", "run", "proactiveeval/persuasion/fair/0", "--api-base", server.base_url,
             "--agent", "acp:tester", "--user", "openai/u", "--judge", "openai/j", "--no-planning", "--max-turns", "2",
             "--out", str(tmp_path / "a.json")],
            cwd=ROOT, env={**os.environ, "COLUMNS": "400"}, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 1
    both = proc.stdout + proc.stderr
    assert "Traceback" not in both
    [line] = [x for x in both.splitlines() if "needs a login" in x]
    assert "Log in with Example (oauth), Use an API key (key)" in line and "run `" in line


def test_the_sdk_is_not_imported_until_an_acp_seat_starts() -> None:
    """Startup, the config, the engine and the playground's modules leave `acp` (the SDK) unloaded."""
    probe = ("import sys, proactive_tui.ui.app, proactive_tui.config, proactive_tui.core.spec, proactive_tui.cli.main, "
             "proactive_tui.core.acp_seat, proactive_tui.ui.widgets.acp_permission, proactive_tui.llm.preflight\n"
             "print(sorted(m for m in sys.modules if m == 'acp' or m.startswith('acp.')))")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
