"""Session setup: who sits in each seat (a model or you), which model, and the protocol settings.

Defaults put the embedded offline model everywhere, labelled for what it is. Each model seat
shows where its key would come from (env var, keyring, none); starting with a missing key asks
for a second confirmation instead of failing later mid-session. The form opens on the family's last
choices (`setup_memory`), with the focus on the mode: the first thing a person decides.

"What if…" (`w`) edits the environment for this session (`ui/screens/what_if.py`): the form then
says so ("what if: edited"), `env` is the edited environment (id `<id>~whatif`, see
`envs.what_if`) and the spec names it, so the app starts the session on it and the run record
keeps it; `original_env` stays the environment as loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, Horizontal, Vertical, VerticalScroll
from textual.suggester import SuggestFromList
from textual.validation import Number
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from proactive_tui.core.spec import SessionSpec
from proactive_tui.llm import keys
from proactive_tui.llm.acp import is_acp_seat
from proactive_tui.llm.acp.agents import configured_agents
from proactive_tui.llm.acp.agents import problem as acp_problem
from proactive_tui.llm.settings import DEFAULT_MODEL, ModelSettings, RoleSettings, resolve_roles
from proactive_tui.ui.screens.modal import Modal
from proactive_tui.ui.widgets.id_line import IdLine
from proactive_tui.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:  # the editor is imported when `w` opens it
    from proactive_tui.ui.screens.what_if import WhatIfResult

PRESET_MODELS = [
    DEFAULT_MODEL, "openai/gpt-4.1", "openai/gpt-4.1-mini", "openai/gpt-4o", "anthropic/claude-sonnet-4-5",
    "anthropic/claude-haiku-4-5", "gemini/gemini-2.5-flash", "ollama/qwen2.5", "ollama/llama3.1",
]
LOCAL_NOTE = "offline 135M demo model: scores not meaningful"


def key_note(model: str, api_base: str | None) -> Text:
    model = model.strip()
    if not model:
        return Text("enter a litellm model string, e.g. openai/gpt-4.1", style="bold")
    if is_acp_seat(model):  # an agent program over ACP (llm/acp): no key here, the program has its own login
        problem = acp_problem(model, configured_agents())
        return Text(problem, style="bold") if problem else Text("agent program over ACP", style="dim")
    if model.startswith("local/"):
        return Text(LOCAL_NOTE, style="italic")
    if keys.looks_like_url(model):
        return Text("a URL goes in the API base field; here a model, e.g. openai/<name>", style="bold")
    provider = keys.provider_of(model)
    source = keys.key_source(provider, api_base or None)
    if source == "none":
        return Text(f"no key: set {keys.env_var_for(provider)} or `proactive-tui keys set {provider}`", style="bold")
    return Text(f"key: {source}" if source != "not needed" else "key: not needed", style="dim")


class SetupScreenBase(Modal[SessionSpec | None]):
    """What every family's setup shares: the mode, a model per seat with its key source, the api
    base, and the family's own protocol settings (`compose_settings` / `read_settings`, which a
    family's setup screen defines). Seats, their labels and the play modes come from the family.

    `PLAYGROUND_DEFAULTS` are the settings where the playground deliberately starts elsewhere than
    the headless default (live judging on, a visible monitor delay); everything else comes from
    the family's settings model, so a default lives in one place.
    """

    FAMILY: str = ""
    HELP_TITLE = "Session setup"
    PLAYGROUND_DEFAULTS: dict[str, Any] = {}
    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "start", "Start", priority=True),
        Binding("w", "what_if", "What if…", tooltip="Edit this session's environment (persona, trigger, target, trace)"),
    ]

    def __init__(self, env: Any, roles: RoleSettings | None = None, recent: list[str] | None = None,
                 spec: SessionSpec | None = None, remembered: Any = None) -> None:
        """`spec`: a session to start again (its settings win); `remembered`: this family's last
        setup (a `SetupMemory`: mode, models, api base, settings)."""
        super().__init__()
        self.env = env
        """The environment the session runs on: `original_env`, or its what-if edit."""
        self.original_env = env
        self.roles = roles or resolve_roles()
        self.acp_agents = [f"acp:{name}" for name in configured_agents()]
        """The config file's agent programs (`[acp_agents.NAME]`), offered beside the models."""
        self.models = list(dict.fromkeys((recent or []) + self.acp_agents + PRESET_MODELS))
        self.previous = spec
        self.remembered = remembered
        self.confirmed_missing_keys = False
        from proactive_tui.core import registry

        self.family = registry.get(self.FAMILY or env.family)
        self.SEATS: tuple[str, ...] = tuple(self.family.seats)
        self.SEAT_LABELS: dict[str, str] = dict(self.family.seat_labels)
        self.MODES: dict[str, str] = dict(self.family.play_modes)

    def initial_settings(self) -> Any:
        """The settings the form opens with: the last session's, else the playground's defaults
        over the family's, as the family's typed settings model."""
        if self.previous is not None:
            return self.family.settings(self.previous.settings)
        if self.remembered is not None and self.remembered.settings:
            try:
                return self.family.settings({**self.PLAYGROUND_DEFAULTS, **self.remembered.settings})
            except Exception:  # a remembered value the family no longer accepts: defaults
                pass
        return self.family.settings(self.PLAYGROUND_DEFAULTS)

    def initial_mode(self) -> str:
        mode = self.remembered.mode if self.remembered is not None else "watch"
        return mode if mode in self.MODES else "watch"

    def initial_model(self, role: str) -> str:
        if self.remembered is not None and self.remembered.models.get(role):
            return self.remembered.models[role]
        return self.roles.for_role(role).model

    def initial_temperature(self, role: str, prev: Any) -> float:
        """The seat's temperature the form opens on: the session started again's, else the family's
        last setup's, else the family's decision (`EnginePart.seat_temperature`: the config's or the
        environment's choice, else the family's default), which every other start path uses too."""
        if self.previous is not None:
            return self.family.engine.seat_temperature(role, self.previous.roles, self.previous.settings)
        remembered = getattr(self.remembered, "temperatures", None) or {}
        if remembered.get(role) is not None:
            return float(remembered[role])
        return self.family.engine.seat_temperature(role, self.roles, prev.model_dump())

    def initial_api_base(self) -> str:
        if self.remembered is not None and self.remembered.api_base:
            return self.remembered.api_base
        return self.roles.agent.api_base or ""

    def compose(self) -> ComposeResult:
        prev = self.initial_settings()
        with Vertical(id="setup"):
            yield IdLine("New session  ", self.env.id, id="setup-id")
            yield Static(self._title(), id="setup-title")
            yield Static("", id="what-if-label")
            with VerticalScroll(id="setup-body"):
                mode = self.initial_mode()
                with RadioSet(id="mode"):
                    for key, label in self.MODES.items():
                        yield RadioButton(label, value=key == mode, id=f"mode-{key}")
                api_base = self.initial_api_base()
                with Grid(id="seats"):
                    for role in self.SEATS:
                        model = self.initial_model(role)
                        yield Label(self.SEAT_LABELS.get(role, role), classes="seat-label")
                        yield Input(model, id=f"model-{role}", suggester=SuggestFromList(self.models, case_sensitive=False),
                                    placeholder="litellm model, e.g. openai/gpt-4.1")
                        yield Input(f"{self.initial_temperature(role, prev):g}", id=f"temperature-{role}", type="number",
                                    validators=[Number(0.0, 2.0)], classes="seat-temperature",
                                    tooltip=f"the {self.SEAT_LABELS.get(role, role)} model's temperature, 0 to 2")
                        yield Static(key_note(model, api_base or None), id=f"key-{role}", classes="key-note")
                if self.acp_agents:
                    yield Static(Text("agent programs (ACP): " + ", ".join(self.acp_agents), style="dim"),
                                 id="acp-agents")
                yield Input(api_base, id="api-base", placeholder="api base for OpenAI-compatible servers (optional)")
                yield from self.compose_settings(prev)
                yield Static("", id="setup-warning")
            with Horizontal(id="setup-buttons"):
                yield Button("What if…", id="what-if-open")
                yield Button("Start", variant="primary", id="start")
                yield Button("Cancel", id="cancel")
        yield KeyBar()  # the form's own keys, over the picker's (which do nothing here)

    def _title(self) -> Text:
        """The environment's title under its id (`IdLine`), as composed and after an edit."""
        return Text(self.env.title, style="dim")

    @on(Button.Pressed, "#what-if-open")
    def action_what_if(self) -> None:
        """The environment editor; what it returns is the environment this session runs on."""
        from proactive_tui.ui.screens.what_if import WhatIfScreen

        loaded = getattr(self.app, "environments", None)
        taken = {env.id for env in getattr(loaded, "environments", [])}
        self.app.push_screen(WhatIfScreen(self.original_env, self.env, taken=taken), self._what_if_done)

    def _what_if_done(self, result: WhatIfResult | None) -> None:
        if result is None:
            return
        self.env = result.env
        if result.saved is not None:  # a new environment of its own: later edits start from it
            self.original_env = result.env
            note = Text.assemble(("what if: saved as a new environment ", "bold"), (result.env.id, ""), "\n",
                                 (str(result.saved), "dim"))
        elif result.edited:
            note = Text.assemble(("what if: edited", "bold"),
                                 (" (this session only, nothing written; the session is marked ", ""),
                                 (self.env.id, ""), (")", ""))
        else:
            note = Text("")
        self.query_one("#setup-id", IdLine).set_id(self.env.id)
        self.query_one("#setup-title", Static).update(self._title())
        label = self.query_one("#what-if-label", Static)
        label.update(note)
        label.set_class(bool(note.plain), "-shown")  # no empty line in the form until there is an edit

    def compose_settings(self, prev: Any) -> ComposeResult:
        """The family's protocol settings part of the form; `prev` is its typed settings model."""
        yield from ()

    def read_settings(self) -> dict[str, Any]:
        """Protocol settings from the form; `invalid_inputs` reports bad values first."""
        return {}

    def invalid_inputs(self) -> list[Input]:
        """Inputs whose validators fail (the form refuses to start)."""
        return [box for box in self.query("#seats Input, #settings-grid Input").results(Input)
                if not box.disabled and not box.is_valid]

    def on_mount(self) -> None:
        self.query_one("#setup").border_title = "Setup"
        self.query_one("#setup").border_subtitle = "ctrl+s starts · esc cancels"
        for box in self.query(".seat-temperature").results(Input):
            box.border_title = "temperature"
        self._mode_changed()  # a remembered play mode: the person's seat has no model
        modes = self.query_one("#mode", RadioSet)
        modes.border_title = "Mode · ←→ move, space picks, tab next"
        modes.focus()

    @property
    def mode(self) -> str:
        pressed = self.query_one("#mode", RadioSet).pressed_button
        return (pressed.id or "mode-watch").removeprefix("mode-") if pressed else "watch"

    def _human_seat(self) -> str | None:
        return {"play_user": "user", "play_agent": "agent"}.get(self.mode)

    @on(RadioSet.Changed, "#mode")
    def _mode_changed(self) -> None:
        human = self._human_seat()
        for role in ("agent", "user"):
            if role not in self.SEATS:
                continue
            box = self.query_one(f"#model-{role}", Input)
            box.disabled = role == human
            self.query_one(f"#temperature-{role}", Input).disabled = role == human
            note = self.query_one(f"#key-{role}", Static)
            note.update(Text("you play this seat", style="bold") if role == human else key_note(box.value, self._api_base()))
        self.confirmed_missing_keys = False

    def _api_base(self) -> str | None:
        return self.query_one("#api-base", Input).value.strip() or None

    @on(Input.Changed)
    def _input_changed(self, event: Input.Changed) -> None:
        self.confirmed_missing_keys = False
        self.query_one("#start", Button).label = "Start"
        self.query_one("#setup-warning", Static).update("")
        ident = event.input.id or ""
        roles = [ident.removeprefix("model-")] if ident.startswith("model-") else (list(self.SEATS) if ident == "api-base" else [])
        for role in roles:
            if role != self._human_seat():
                model = self.query_one(f"#model-{role}", Input).value
                self.query_one(f"#key-{role}", Static).update(key_note(model, self._api_base()))

    def _missing_keys(self) -> list[str]:
        """What would stop the seats' calls, said before Start: a URL where a model belongs, a
        missing key. (An API base no request can be sent to is refused outright at Start, as `run`
        refuses it.) Only seats in use count: not the one a person plays, nor one a family's mode
        leaves empty (its model box is disabled then)."""
        in_use = [role for role in self.SEATS if role != self._human_seat()
                  and not self.query_one(f"#model-{role}", Input).disabled]
        missing = []
        for role in in_use:
            model = self.query_one(f"#model-{role}", Input).value.strip()
            provider = keys.provider_of(model)
            if is_acp_seat(model):
                if problem := acp_problem(model, configured_agents()):
                    missing.append(f"{role}: {problem}")
            elif keys.looks_like_url(model):
                missing.append(f"{role}: {keys.url_in_model_message(model)}")
            elif not model.startswith("local/") and keys.key_source(provider, self._api_base()) == "none":
                missing.append(f"{role}: {keys.missing_key_message(provider)}")
        return missing

    def build_spec(self) -> SessionSpec:
        human = self._human_seat()
        api_base = self._api_base()
        roles = {}
        for role in ("agent", "user", "judge"):
            if role not in self.SEATS:
                roles[role] = self.roles.for_role(role)
                continue
            base = self.roles.for_role(role)
            model = self.query_one(f"#model-{role}", Input).value.strip() or DEFAULT_MODEL
            roles[role] = base.model_copy(update={"model": model, "api_base": api_base,
                                                  "temperature": self.seat_temperature_value(role)})
        settings = self.read_settings()
        seats = {role: "model" for role in self.SEATS}
        if human:
            seats[human] = "human"
        return SessionSpec(env_id=self.env.id, roles=RoleSettings(**{k: ModelSettings.model_validate(v.model_dump()) for k, v in roles.items()}),
                           seats=seats, settings=settings)

    def seat_temperature_value(self, role: str) -> float:
        """The seat's temperature as the form holds it (validated 0..2 before Start); a seat whose
        box is disabled (a person plays it, or the family leaves it empty) keeps its settings'."""
        box = self.query_one(f"#temperature-{role}", Input)
        if box.disabled:
            return self.roles.for_role(role).temperature
        return float(box.value)

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        for box in self.invalid_inputs():
            name = (box.id or "value").replace("-", " ")
            self.query_one("#setup-warning", Static).update(Text(f"{name}: not a valid value", style="bold"))
            box.focus()
            return
        bad_base = keys.api_base_problem(self._api_base())
        if bad_base:  # no request could be sent: refused here, not retried as a 500 after Start
            self.query_one("#setup-warning", Static).update(Text(bad_base, style="bold"))
            self.query_one("#api-base", Input).focus()
            return
        missing = self._missing_keys()
        if missing and not self.confirmed_missing_keys:
            self.confirmed_missing_keys = True
            self.query_one("#setup-warning", Static).update(Text("\n".join(missing) + "\nPress Start again to start anyway.", style="bold"))
            self.query_one("#start", Button).label = "Start anyway"
            return
        try:
            spec = self.build_spec()
        except Exception as exc:
            self.query_one("#setup-warning", Static).update(Text(f"invalid settings: {exc}", style="bold"))
            return
        self.dismiss(spec)

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
