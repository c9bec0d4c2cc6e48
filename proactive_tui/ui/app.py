"""`ProactiveApp`: loads config, themes and environments, then opens the picker.

Start-up is kept to what the first screen needs. The first frame is drawn without pydantic and
without any family (issue 35: a first screen as light as a bare Textual app): the config is read
as plain TOML for its theme and folders and validated once the picker is up (an error is then
shown as before, and its defaults applied); themes are checked without pydantic when they are
plainly valid (`themes.plain_theme`); the environments come from the snapshot the previous start
left (`envs.first_frame`) when nothing changed since, else they load as usual and leave one.
After the first frame the families, the environment set proper and the validated config are
loaded (in the preload thread, before the model layer; at once when something needs them). The model layer (litellm, ~4 s to import) is
never imported here; once the picker has painted, a background thread preloads it in small
steps that give way to a person's keys (`proactive_tui.ui.preload`), so the picker answers at
once and the first model call later is quick. Problems with the config, theme files or
environment files each become one toast and a fallback, never a crash: a person should always
reach the picker.

Environment variables for tests and benchmarks: `PROACTIVE_TUI_PRELOAD=steps|thread|off` (or
`PROACTIVE_TUI_NO_PRELOAD=1`) chooses how the model layer is preloaded, and
`PROACTIVE_TUI_READY_FILE=path` writes `time.time()` to that file once the picker has mounted
and refreshed, and `PROACTIVE_TUI_FIRST_FRAME=off` loads the environments as usual even when a
current snapshot is there (`envs.first_frame`).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable

from textual import events
from textual.app import App
from textual.binding import Binding
from textual.screen import Screen

from proactive_tui.textsafe import plain
from proactive_tui.ui import preload
from proactive_tui.ui.messages import EnvironmentChosen, EnvironmentSaved
from proactive_tui.ui.themes import app_variable_defaults, load_themes, variable_problems

if TYPE_CHECKING:  # the screens import their widgets; keep them off the import path
    from proactive_tui.ui.screens.picker import PickerScreen

DEFAULT_THEME = "proactive-dark"
NOTIFY_TIMEOUT = 12.0
FREEZE_FROM = 2_000
"""From this many environments, the loaded objects are frozen out of the garbage collector's
scans (`gc.freeze`); the bundled few dozen are not worth it."""


def env_problems_message(problems: list[Any]) -> str:
    """One line for the toast; the full list is one command away."""
    first = problems[0].render() if hasattr(problems[0], "render") else str(problems[0])
    first = plain(first)  # file names and contents are data: no escape sequences in toasts
    return (
        f"{len(problems)} problem(s) loading environments: first problem {first}; "
        "run `proactive-tui envs validate`"
    )


DEFAULT_CONFIG_THEME = "proactive-dark"
"""`AppConfig().theme`, read here without importing the config's model."""


class _RawConfigError(Exception):
    pass


def _config_stamp(path: Path) -> dict[str, Any] | None:
    """What a config file passed the model's check as: the file's path, size and modification
    time, and the checking code's (the package version, the config modules' modification times).
    None when the file cannot be stat'ed."""
    from proactive_tui import __version__

    try:
        st = os.stat(path)
    except OSError:
        return None
    package = Path(__file__).resolve().parent.parent
    code = []
    for name in ("config.py", "llm/settings.py", "llm/limits.py"):
        try:
            code.append((package / name).stat().st_mtime_ns)
        except OSError:
            code.append(None)
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "version": __version__, "code": code}


def _stamp_file() -> Path:
    from proactive_tui.envs.catalog import cache_folder

    return cache_folder() / "config-checked.json"


def config_known_good() -> bool:
    """Whether the config file is the very one that last passed the model's check (or there is
    none): its values may then serve the first frame, the model checking it again after."""
    from proactive_tui.paths import config_file

    path = config_file()
    if not path.exists():
        return True
    stamp = _config_stamp(path)
    try:
        import json

        return stamp is not None and json.loads(_stamp_file().read_text(encoding="utf-8")) == stamp
    except (OSError, ValueError):
        return False


def _remember_good_config() -> None:
    """The config file passed the model's check: the next start may draw its first frame from it."""
    from proactive_tui.envs.catalog import _write
    from proactive_tui.paths import config_file

    path = config_file()
    stamp = _config_stamp(path) if path.exists() else None
    if stamp is not None:
        _write(_stamp_file(), stamp)


def raw_config() -> tuple[str, list[str], bool]:
    """(theme, environment folders, whether they are the file's own) from the config file read as
    plain TOML, for the first frame. When the file is missing, is not TOML, or its `theme` or
    `envs` are not of their types (the model would refuse the file), the defaults and False: the
    file's own values are used only when they may be valid. The model checks the whole file once
    the picker is up (`ProactiveApp.config`)."""
    from proactive_tui.paths import config_file
    from proactive_tui.tomlfile import read_toml

    path = config_file()
    if not path.exists():
        return DEFAULT_CONFIG_THEME, [], True
    try:
        data = read_toml(path, _RawConfigError)
    except _RawConfigError:
        return DEFAULT_CONFIG_THEME, [], False
    theme, envs = data.get("theme", DEFAULT_CONFIG_THEME), data.get("envs", [])
    if not isinstance(theme, str) or not isinstance(envs, list) or not all(isinstance(e, str) for e in envs):
        return DEFAULT_CONFIG_THEME, [], False
    return theme, list(envs), True


def _load_model_layer() -> None:
    """Runs in the preload thread: import litellm now so the first model call is quick."""
    from proactive_tui.llm.gateway import preload as preload_litellm

    preload_litellm()


def validated_config() -> tuple[Any, bool, str | None]:
    """(the config, whether the file was used, the message when it was not): the model's check of
    the whole file, as the playground always made it."""
    from proactive_tui.config import AppConfig, ConfigError, load_config

    try:
        return load_config(), True, None
    except ConfigError as exc:
        return AppConfig(), False, plain(f"Config file not used (defaults apply): {exc}")


UI_BUSY_TIMEOUT_S = 0.25
"""How long one store write in the playground waits for another process's write lock."""


def resolve_default_agent(config: Any) -> str:
    """The agent model a session would get (config, environment): the compare setup's side A."""
    from proactive_tui.llm.settings import resolve_roles

    return resolve_roles(config.roles).agent.model


class ProactiveApp(App[None]):
    """The playground. `extra_envs` are `--envs` paths; `theme_dirs` replaces the theme folders
    (tests use it to add a broken theme)."""

    TITLE = "proactive-tui"
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses anywhere find it
    SCREENS_CSS = Path(__file__).with_name("screens.tcss")
    """Every other screen's rules: read when the first screen but the picker opens."""
    BINDINGS = [
        Binding("f1", "help", "Help", tooltip="This list of keys"),
        Binding("question_mark", "help", "Help", show=False, tooltip="This list of keys"),
        # Not in the footer (80 columns hold only so much): F1 and the command palette list it.
        Binding("ctrl+t", "cycle_theme", "Theme", show=False, tooltip="Next theme (saved to your config)"),
        Binding("ctrl+q", "quit", "Quit", priority=True, tooltip="Quit proactive-tui"),
    ]

    start_session_hook: Callable[[Any], None] | None = None
    """Set by the session layer: called with the environment on Enter instead of the detail modal."""

    def __init__(
        self,
        extra_envs: Iterable[str | Path] | None = None,
        *,
        theme_dirs: Iterable[str | Path] | None = None,
        report: str | Path | None = None,
        demo: Any = None,
    ) -> None:
        """`report`: a report folder to open on the results screen once the picker is up
        (`proactive-tui --report DIR`). `demo`: (a `services.demo.DemoPlan`, speed, step) to play
        in its family's session screen once the picker is up (`proactive-tui demo`)."""
        super().__init__()
        self.report_folder = report
        self.demo = demo
        self._report_opened = False
        self._notes: list[tuple[str, str]] = []  # (severity, message) shown once mounted
        self._config: Any = None  # the validated config (`config`), after the first frame
        self._config_ok = True
        raw_theme, raw_envs, self._raw_config_used = raw_config()
        if not (self._raw_config_used and config_known_good()):
            # A config file not seen to pass the model's check (new, edited, refused): checked
            # now, as it always was, so a refused one never shows its theme or folders at all.
            self._raw_config_used = False
            self._apply_config(validated_config())
            raw_theme, raw_envs = self._config.theme, list(self._config.envs)
        self._cli_envs = [str(p) for p in (extra_envs or [])]
        # the config's folders, then --envs: the order every command loads them in (the first of
        # two with one id keeps it, envs.sources)
        self.extra_envs = raw_envs + self._cli_envs
        self._environments: Any = None
        self._first_frame: Any = None  # envs.first_frame.FirstFrame the picker was drawn from
        self._seen: Any = None  # what the usual load looked at, for the next start's snapshot
        self._later: list[tuple[Any, Any]] = []  # large files with no index yet: indexed after the first frame
        self._settled = False
        themes, problems = load_themes(theme_dirs)
        for theme in themes:
            self.register_theme(theme)
        self.file_themes = [theme.name for theme in themes]
        if problems:
            self._notes.append(("warning", f"{len(problems)} theme file(s) skipped: " + "\n".join(map(plain, problems))))
        self.theme = self._initial_theme(raw_theme)
        self._persisted_theme = self.theme
        self._store: Any = None
        self._store_failed = False
        self._gc_frozen = False

    @property
    def store(self) -> Any:
        """The session database (proactive_tui.store.Store), opened on first use; None if it cannot
        be opened (one notification says why; sessions then run unrecorded)."""
        if self._store is None and not self._store_failed:
            from proactive_tui.store import StoreError, open_store

            try:
                # A short wait per write: the store runs on the screen's thread, and a write held
                # up by another process's lock is kept and retried (store.recorder) rather than
                # freezing the playground for the default 5 s each time.
                self._store = open_store(busy_timeout_s=UI_BUSY_TIMEOUT_S)
            except StoreError as exc:
                self._store_failed = True
                self.notify(plain(f"{exc}; sessions are not saved in the history"), title="Session history",
                            severity="warning", timeout=NOTIFY_TIMEOUT, markup=False)
        return self._store

    def get_theme_variable_defaults(self) -> dict[str, str]:
        """Our own design variables, derived from the active theme unless the theme sets them
        (`themes.app_variable_defaults`, which the theme loader checks themes against)."""
        return app_variable_defaults(self.current_theme)

    # -- start-up ---------------------------------------------------------------------------

    @property
    def config(self) -> Any:
        """The config (`config.AppConfig`), validated on first use: after the first frame, or at
        once when something needs it sooner."""
        if self._config is None:
            self._apply_config(validated_config())
        return self._config

    @config.setter
    def config(self, value: Any) -> None:
        self._config = value

    @property
    def config_ok(self) -> bool:
        _ = self.config  # reading it loads and checks the config, which sets _config_ok
        return self._config_ok

    def _apply_config(self, checked: tuple[Any, bool, str | None]) -> None:
        """Take the validated config. When the file is refused, the message is the one it always
        was, and what the first frame took from the file (its theme, its folders) gives way to the
        defaults, as they would have applied from the start."""
        if self._config is not None:
            return
        config, ok, message = checked
        self._config, self._config_ok = config, ok
        if ok:
            _remember_good_config()
        if message is None:
            return
        if self.is_running:
            self.notify(message, severity="error", timeout=NOTIFY_TIMEOUT, markup=False)
        else:
            self._notes.append(("error", message))
        if ok or not self._raw_config_used:
            return
        self._raw_config_used = False
        try:  # taken as checked, refused now: the next start checks it before its first frame
            _stamp_file().unlink()
        except OSError:
            pass
        self._seen = None  # the list loaded for the refused folders: no snapshot of it
        wanted = self._initial_theme(config.theme)
        if wanted != self.theme:
            self._persisted_theme = wanted  # the default again, not a choice to save
            self.theme = wanted
        if self.extra_envs != self._cli_envs:
            self.extra_envs = list(self._cli_envs)
            if self._environments is not None or self._first_frame is not None:
                self.reload_environments()

    @property
    def environments(self) -> Any:
        """The loaded `EnvironmentSet`. A picker drawn from the first frame's snapshot has its
        entries; the set proper (problems and shared ids as pydantic models) is made of them on
        first use."""
        if self._environments is None and self._first_frame is not None:
            self._environments = self._first_frame.environment_set()
        return self._environments

    @environments.setter
    def environments(self, value: Any) -> None:
        self._environments = value

    def _initial_theme(self, wanted: str) -> str:
        if wanted in self.available_themes:
            return wanted
        fallback = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
        self._notes.append(("warning", f"Theme {wanted!r} not found; using {fallback!r}"))
        return fallback

    def _load_screen_css(self, screen: Screen) -> None:
        """Add `screens.tcss` to the stylesheet before the first screen other than the picker
        is shown. Why: parsing those rules and matching them against every widget of the first
        frame was a tenth of the picker's first draw, and none of them applies to it. Read ahead
        of that screen's own CSS, as it was when one file held both, so the rules' order is the
        same."""
        from proactive_tui.ui.screens.picker import PickerScreen

        path = str(self.SCREENS_CSS)
        if not isinstance(screen, PickerScreen) and not self.stylesheet.has_source(path, ""):
            self.stylesheet.read(path)
            self.stylesheet.reparse()
            self.stylesheet.update(self)
        super()._load_screen_css(screen)

    def get_default_screen(self) -> Screen:
        """The picker is the bottom of the screen stack (Textual asks for it before mounting).

        Building it here rather than pushing it from `on_mount` saves painting an empty default
        screen first: one full frame, about 15% of start-up. Later screens push on top of it.
        """
        from proactive_tui.envs import first_frame
        from proactive_tui.ui.screens.picker import PickerScreen

        preview = None
        frame = first_frame.read(self.extra_envs) if os.environ.get("PROACTIVE_TUI_FIRST_FRAME") != "off" else None
        if frame is not None:  # as the previous start left it: nothing of the loader or the families
            from proactive_tui.ui import env_index

            env_index.use_family_facts(frame.families, frame.by_tier)
            self._first_frame = frame
            environments, problems, preview = frame.environments, frame.problems, frame.first_preview()
        else:
            from proactive_tui.envs import load_default

            # From the catalog (envs.catalog): each file's index, its records parsed when shown or
            # chosen, so a file of 100,000 records draws in a second and holds only its index.
            self._seen = first_frame.Seen()
            self.environments = load_default(self.extra_envs, lazy=True, seen_by=self._seen,
                                              later=lambda file, companions: self._later.append((file, companions)))
            environments, problems = self.environments.environments, self.environments.problems
            if self._later:  # listed once indexed; a snapshot now would leave them out
                self._seen = None
                size = sum(os.path.getsize(file.path) for file, _ in self._later) / 1e6
                names = ", ".join(plain(file.display) for file, _ in self._later)
                self._notes.append(("information", f"Indexing {names} ({size:,.0f} MB) in the background: its "
                                                   "environments are listed when that is done (the next start "
                                                   "lists them at once)"))
        count = len(environments)
        self.sub_title = f"{count} environment{'s' if count != 1 else ''}"
        if problems:
            self._notes.append(("warning", env_problems_message(problems)))
        if count >= FREEZE_FROM:
            # The environments live as long as the app: out of the cyclic collector's sight
            # (permanent generation), whose full passes otherwise walk every one of them, about
            # half a second per pass with 40,000, at start-up and again in the first filter.
            # (The model preload freezes everything once litellm is in, but that is seconds later.)
            # Undone when the app ends (`on_unmount`), so nothing frozen outlives it in a process
            # that goes on (a test run).
            import gc

            gc.freeze()
            self._gc_frozen = True
        self._picker = PickerScreen(environments, first_preview=preview)
        return self._picker

    def on_mount(self) -> None:
        for severity, message in self._notes:
            self.notify(message, severity=severity, timeout=NOTIFY_TIMEOUT, markup=False)
        self._notes.clear()

    def on_unmount(self) -> None:
        if self._seen is not None:  # quit before the preload got to it: the next start's first frame
            try:
                self._keep_first_frame()
            except Exception:  # noqa: BLE001 - a cache that cannot be written never stops a quit
                pass
        if self._gc_frozen:
            import gc

            gc.unfreeze()
            self._gc_frozen = False

    def on_picker_screen_ready(self, message: PickerScreen.Ready) -> None:
        if self.report_folder is not None and not self._report_opened:
            # once the picker (the bottom of the stack) is up, so Escape leads back to it
            self._report_opened = True
            self.open_report(self.report_folder)
        if self.demo is not None:  # once, above the picker, so Escape leads back to it
            from proactive_tui.ui.demo import demo_screen

            plan, speed, step = self.demo
            self.demo = None
            self.push_screen(demo_screen(self, plan, speed, step))
        self._picker_ready()

    def _picker_ready(self) -> None:
        """The picker has mounted and painted: mark start-up done, then warm the model layer."""
        ready_file = os.environ.get("PROACTIVE_TUI_READY_FILE")
        if ready_file:
            Path(ready_file).write_text(repr(time.time()), encoding="utf-8")
        if self._later:
            import threading

            threading.Thread(target=self._index_later, name="proactive-tui-index", daemon=True).start()
        if preload.start(self._after_first_frame, self._preload_failed) is None:
            self.call_after_refresh(self._settle)  # no preload thread: settled here, after the paint

    def _index_later(self) -> None:
        """Runs in its own thread: index the large files the first frame went without
        (`catalog.build_index`: one streaming pass where the family allows), then list them."""
        from proactive_tui.envs.catalog import build_index

        later, self._later = self._later, []
        for file, companions in later:
            try:
                build_index(file, companions)
            except Exception as exc:  # noqa: BLE001 - the reload below then reads it in full and says why
                try:
                    self.call_from_thread(self.notify, plain(f"Indexing {file.display} failed: {exc}"),
                                          severity="warning", timeout=NOTIFY_TIMEOUT, markup=False)
                except RuntimeError:
                    return
        try:
            self.call_from_thread(self.reload_environments)
        except RuntimeError:  # the app has ended meanwhile
            pass

    def _after_first_frame(self) -> None:
        """Runs in the preload thread: what the first frame went without, then the model layer."""
        self._settle(in_thread=True)
        _load_model_layer()

    def _settle(self, in_thread: bool = False) -> None:
        """Load what the first frame did without: the validated config, the families, the
        environment set proper; and leave the next start its snapshot (`envs.first_frame`) when
        this one had none. Work done in the preload thread is handed to the screen's thread."""
        if self._settled:
            return
        self._settled = True
        checked = validated_config()
        from proactive_tui.core import registry

        registry.families()
        environments = self._first_frame.environment_set() if self._first_frame is not None else None
        if self._seen is not None:
            self._keep_first_frame()

        def take() -> None:
            self._apply_config(checked)
            if environments is not None and self._environments is None:
                self._environments = environments

        if not in_thread:
            take()
            return
        try:
            self.call_from_thread(take)
        except RuntimeError:  # the app has ended meanwhile
            pass

    def _keep_first_frame(self) -> None:
        """Write the snapshot the next start's first frame is drawn from (`envs.first_frame`)."""
        from proactive_tui.envs import first_frame
        from proactive_tui.envs.catalog import EnvironmentGone
        from proactive_tui.envs.describe import describe

        loaded, seen, self._seen = self._environments, self._seen, None
        first = getattr(getattr(self, "_picker", None), "first_listed", None)
        preview = None
        if first is not None:
            try:
                env = first.full() if hasattr(type(first), "full") else first
            except EnvironmentGone:
                return
            preview = (first.id, describe(env, reveal_reference=True), describe(env, reveal_reference=False))
        first_frame.write(self.extra_envs, loaded, seen, preview)

    async def on_event(self, event: events.Event) -> None:
        """Every key and mouse event tells the preload a person is busy (it then gives way)."""
        if isinstance(event, (events.Key, events.MouseEvent)):
            preload.touch()
        await super().on_event(event)

    def _preload_failed(self, exc: Exception) -> None:
        """Runs in the preload thread: a broken model layer must not take the picker down."""
        try:
            self.call_from_thread(
                self.notify, f"Model layer failed to load: {exc}", severity="error", timeout=NOTIFY_TIMEOUT, markup=False
            )
        except Exception:
            pass

    # -- choosing an environment ------------------------------------------------------------

    def on_environment_chosen(self, message: EnvironmentChosen) -> None:
        if self.start_session_hook is not None:
            self.start_session_hook(message.env)
            return
        from proactive_tui.core import registry

        family = registry.find(message.env.family)
        if family is not None and family.parts.setup_screen is not None:
            self.open_setup(message.env)
            return
        from proactive_tui.ui.screens.detail import EnvironmentDetailScreen

        self.notify(
            f"{message.env.family} sessions run headless for now: proactive-tui run {message.env.id}",
            timeout=6, markup=False,
        )
        self.push_screen(EnvironmentDetailScreen(message.env, reveal_reference=message.reveal_reference))

    def reload_environments(self) -> None:
        """Read every environment source again (ctrl+r on the picker, the palette): what `synth`
        or another program wrote since start-up is listed without a restart. Read in a thread
        (a large `--envs` file takes a while); the picker keeps its filter and highlight."""
        self.notify("Reading the environment folders again…", timeout=3)
        self.run_worker(self._reload_environments, thread=True, exclusive=True, group="reload-envs")

    def _reload_environments(self) -> None:
        from proactive_tui.envs import load_default

        loaded = load_default(self.extra_envs, lazy=True)
        self.call_from_thread(self._environments_reloaded, loaded)

    def _environments_reloaded(self, loaded: Any) -> None:
        from proactive_tui.ui.screens.picker import PickerScreen

        before = {e.id for e in self.environments.environments} if self.environments is not None else set()
        self.environments = loaded
        for screen in self.screen_stack:
            if isinstance(screen, PickerScreen):
                screen.replace_environments(loaded.environments)
        new = sum(1 for e in loaded.environments if e.id not in before)
        gone = len(before - {e.id for e in loaded.environments})
        self.notify(f"{len(loaded.environments)} environments: {new} new, {gone} gone", timeout=NOTIFY_TIMEOUT,
                    markup=False)
        if loaded.problems:
            self.notify(env_problems_message(loaded.problems), severity="warning", timeout=NOTIFY_TIMEOUT, markup=False)

    def on_environment_saved(self, message: EnvironmentSaved) -> None:
        """A what-if saved as a new environment: in the loaded set and the picker from now on."""
        from proactive_tui.ui.screens.picker import PickerScreen

        if self.environments is not None and self.environments.get(message.env.id) is None:
            self.environments.environments.append(message.env)
        for screen in self.screen_stack:
            if isinstance(screen, PickerScreen):
                screen.add_environment(message.env)

    # -- sessions ---------------------------------------------------------------------------

    def open_setup(self, env: Any, spec: Any = None) -> None:
        """Setup modal for `env`; on Start, the session screen."""
        preload.hurry()  # a session is near: finish the model layer while the form is filled in
        from proactive_tui.core import registry
        from proactive_tui.llm.settings import resolve_roles

        from proactive_tui.ui import setup_memory

        SetupScreen = registry.get(env.family).screen("setup_screen")
        roles = resolve_roles(self.config.roles)
        remembered = setup_memory.load_memories().families.get(env.family)

        def started(chosen: Any) -> None:
            if chosen is not None:
                setup_memory.remember(env.family, chosen)
                # the setup's environment: `env`, or its "What if" edit (chosen.env_id names it)
                self.start_session(setup.env, chosen)

        setup = SetupScreen(env, roles=roles, recent=self.config.recent_models, spec=spec, remembered=remembered)
        self.push_screen(setup, started)

    def start_session(self, env: Any, spec: Any) -> None:
        from proactive_tui.core import registry

        self._remember_models(spec)
        self.push_screen(registry.get(env.family).screen("session_screen")(env, spec))

    def _remember_models(self, spec: Any) -> None:
        """Keep the models a person typed at the top of the setup suggestions (in the config)."""
        used = [spec.roles.for_role(s).model for s, kind in spec.seats.items() if kind == "model"]
        recent = list(dict.fromkeys(used + self.config.recent_models))[:12]
        if recent == self.config.recent_models or not self.config_ok:
            return
        self.config.recent_models = recent
        from proactive_tui.config import ConfigError, load_config, save_config

        try:
            config = load_config()
            config.recent_models = recent
            save_config(config)
        except (ConfigError, OSError):
            pass

    def open_history(self) -> None:
        """The session history screen (recorded sessions: replay, resume, export, delete)."""
        from proactive_tui.ui.screens.history import HistoryScreen

        if not isinstance(self.screen, HistoryScreen):
            self.push_screen(HistoryScreen())

    def open_studio(self) -> None:
        """The studio's setup: generate environments with a family's pipeline, or open a run folder."""
        from proactive_tui.ui.studio.setup import StudioSetupScreen

        if type(self.screen).__name__ not in ("StudioSetupScreen", "StudioScreen"):
            self.push_screen(StudioSetupScreen())

    def open_agreement(self) -> None:
        """The judge agreement panel: every judge against the people's labels (`services.labels`)."""
        from proactive_tui.ui.screens.agreement import AgreementScreen

        if not isinstance(self.screen, AgreementScreen):
            self.push_screen(AgreementScreen())

    def open_study_pairs(self) -> None:
        """Vote on the imported pairwise study's pairs (`services.compare.pairs_to_vote`), blind."""
        from proactive_tui.ui.screens.study_pairs import StudyPairsScreen

        if type(self.screen).__name__ != "StudyPairsScreen":
            self.push_screen(StudyPairsScreen())

    def open_report(self, folder: str | Path) -> bool:
        """The results screen on a report folder; a notification says why when it cannot open."""
        from proactive_tui.evalrun.opened import FolderProblem, open_folder

        try:
            opened = open_folder(folder)
        except (FolderProblem, OSError) as exc:
            self.notify(plain(str(exc)), title="Report folder", severity="error", timeout=NOTIFY_TIMEOUT, markup=False)
            return False
        self.show_report(opened)
        return True

    def show_report(self, opened: Any) -> None:
        from proactive_tui.ui.screens.results import ResultsScreen

        self.push_screen(ResultsScreen(opened))

    def ask_report_folder(self) -> None:
        """"Open a report folder…": a path, checked in the modal (the reason shows under the input)."""
        from proactive_tui.ui.screens.open_report import OpenReportModal

        def chosen(opened: Any) -> None:
            if opened is not None:
                self.show_report(opened)

        self.push_screen(OpenReportModal(str(self.report_folder or "")), chosen)

    def get_system_commands(self, screen: Screen):
        """The palette: Textual's own commands plus what the current screen can do now."""
        from textual.app import SystemCommand

        # Textual's own "Screenshot" delivers the file through the driver to a downloads folder a
        # headless or remote terminal may not have, and says nothing when that fails: ours below
        # writes into the data folder and names the file.
        yield from (c for c in super().get_system_commands(screen) if c.title != "Screenshot")
        from proactive_tui.ui.screens.picker import PickerScreen

        if isinstance(screen, PickerScreen) and screen.current is not None:
            env = screen.current
            yield SystemCommand(f"Start a session: {env.id}", "Set up a session on the highlighted environment",
                                lambda: self.post_message(EnvironmentChosen(env, screen.reveal_reference)))
            yield SystemCommand(f"Compare agents on: {env.id}", "Two agent models side by side on the highlighted "
                                "environment (same user, judge), blind until you vote", lambda: self.ask_compare(env))
        if isinstance(screen, PickerScreen):
            yield SystemCommand("Reload environments", "Read every environment folder again: files added since "
                                "start (`synth`, your own) appear", self.reload_environments)
        # Session screens (any family) list what they can do right now.
        for title, help_text, callback in getattr(screen, "palette_commands", lambda: [])():
            yield SystemCommand(title, help_text, callback)
        if type(screen).__name__ != "HistoryScreen":
            yield SystemCommand("Session history", "Recorded sessions: replay, resume, export, delete", self.open_history)
            if getattr(self, "store", None) is not None and type(screen).__name__ != "AgreementScreen":
                yield SystemCommand("Judge agreement", "Judges against people over every label: accuracy, Cohen's kappa",
                                    self.open_agreement)
            if getattr(self, "store", None) is not None and type(screen).__name__ != "StudyPairsScreen":
                yield SystemCommand("Vote on study pairs", "A published pairwise study's pairs, blind, one at a time "
                                    "(`compare import-study` loads them)", self.open_study_pairs)
        if type(screen).__name__ not in ("StudioSetupScreen", "StudioScreen"):
            yield SystemCommand("Studio: generate environments", "A paper's data pipeline stage by stage, under your "
                                "hand (or open a run folder to resume it)", self.open_studio)
        yield SystemCommand("Open a report folder…", "A batch report folder (`eval --out DIR`): tables, charts, sessions",
                            self.ask_report_folder)
        yield SystemCommand("Screenshot to SVG", "Save the screen as an SVG file in the data folder", self.action_svg_screenshot)
        if isinstance(screen, PickerScreen):
            from proactive_tui.ui.studio.write import open_write_form

            yield SystemCommand("Write a new environment…", "A form per benchmark, checked as you type, saved into "
                                "your environments folder", lambda: open_write_form(self))

    def ask_compare(self, env: Any) -> None:
        """Ask for two agent models (and blind or not), then open the compare screen on `env`:
        the user and judge seats as the config sets them, the same for both sides."""
        from proactive_tui.ui.screens.compare_setup import CompareSetupModal

        def chosen(choice: Any) -> None:
            if choice is None:
                return
            from proactive_tui.services.compare import ComparePlan
            from proactive_tui.llm.settings import resolve_roles
            from proactive_tui.ui.screens.compare import CompareScreen

            roles = resolve_roles(self.config.roles)
            try:
                plan = ComparePlan(env_id=env.id, agents=[roles.agent.model_copy(update={"model": m}) for m in choice.agents],
                                   user=roles.user, judge=roles.judge, blind=choice.blind)
            except Exception as exc:  # a model string the settings refuse
                self.notify(plain(str(exc)), title="Compare", severity="error", timeout=NOTIFY_TIMEOUT, markup=False)
                return
            from proactive_tui.llm.preflight import check_seats
            from proactive_tui.core import registry

            family = registry.get(env.family)
            problems = [f"{chr(65 + i)}: {p.render()}" for i, spec in enumerate(plan.specs())
                        for p in check_seats(spec, family.seats)]
            if problems:  # named before any call, as `run` and `compare` do
                self.notify(plain("\n".join(problems)), title="Compare: seats that cannot run", severity="error",
                            timeout=NOTIFY_TIMEOUT, markup=False)
                return
            self.push_screen(CompareScreen(plan, env))

        self.push_screen(CompareSetupModal(env.id, resolve_default_agent(self.config)), chosen)

    def action_svg_screenshot(self) -> None:
        from proactive_tui.paths import data_dir

        folder = data_dir() / "screenshots"
        folder.mkdir(parents=True, exist_ok=True)
        path = self.save_screenshot(path=str(folder))
        self.notify(f"Saved {path}", timeout=6, markup=False)

    # -- themes -----------------------------------------------------------------------------

    def action_cycle_theme(self) -> None:
        """Step through the themes loaded from files (built-in and the user's)."""
        names = self.file_themes or list(self.available_themes)
        index = names.index(self.theme) + 1 if self.theme in names else 0
        self.theme = names[index % len(names)]
        self.notify(f"Theme: {self.theme}", timeout=2, markup=False)

    def watch_theme(self, theme: str) -> None:
        """Persist a theme a person picked (ctrl+t or the command palette's theme picker).

        Theme files are checked when loaded (`themes.load_theme_file`), so a broken one is never
        registered; a theme registered any other way is checked here, before Textual re-parses
        the stylesheet with it (which would end the app), and refused with one toast."""
        previous = getattr(self, "_persisted_theme", theme)
        if theme == previous:
            return
        problems = variable_problems(self.current_theme)
        if problems:
            key, why = problems[0]
            self.notify(plain(f"Theme {theme!r} not used: variables.{key}: {why}"), severity="error",
                        timeout=NOTIFY_TIMEOUT, markup=False)
            self.theme = previous
            return
        self._persisted_theme = theme
        self._save_theme(theme)

    def _save_theme(self, theme: str) -> None:
        if not self.config_ok:
            self.notify("Theme not saved: the config file has problems (see the earlier message)", severity="warning", markup=False)
            return
        from proactive_tui.config import ConfigError, load_config, save_config

        try:
            config = load_config()  # re-read so settings changed elsewhere since start-up survive
            config.theme = theme
            save_config(config)
        except (ConfigError, OSError) as exc:
            self.notify(f"Theme not saved: {exc}", severity="warning", timeout=NOTIFY_TIMEOUT, markup=False)
            return
        self.config.theme = theme

    # -- help -------------------------------------------------------------------------------

    def action_help(self) -> None:
        from proactive_tui.ui.screens.help import HelpScreen, collect_groups

        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        self.push_screen(HelpScreen(collect_groups(self, self.screen)))
