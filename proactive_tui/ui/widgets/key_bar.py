"""One line of key hints at the bottom of a screen, like Textual's `Footer` in a single widget.

Why not `Footer`: it composes one widget per key and recomposes on every focus change; on the
picker that cost ~25-40 ms of start-up, enough on its own to miss the start-up budget
(benchmarks/startup.py). This renders the same information (the active screen's bindings with
`show=True`, dimmed when disabled, the command-palette key last) as one `Content`, and a click on
a hint presses its key, as with `Footer`.

When the line is wider than the bar, the app-wide hints (quit, help) go first, since F1 and the
palette list them on every screen; then the screen's last keys, with "… f1" in their place, and the
palette hint always stays. Before this,
a narrow terminal cut the line at the right edge, so the palette hint was the first to go.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.screen import Screen
from textual.style import Style
from textual.widgets import Static

KEY_STYLE = "bold $footer-key-foreground"
DESCRIPTION_STYLE = "$footer-description-foreground"
DISABLED_STYLE = "$text-disabled"
MORE = "… f1"


class KeyBar(Static):
    """Key hints for the screen it sits on; refreshed whenever that screen's bindings change."""

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._bindings_changed(self.screen)

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    _shown: tuple | None = None

    def _bindings_changed(self, screen: Screen) -> None:
        if self.is_attached and screen is self.screen:
            self._show(self.hints())

    def on_resize(self) -> None:
        self._show(self.hints())

    def _show(self, hints: Content) -> None:
        """Repaint only when the hints changed, and without a layout pass: the bar is one line of
        fixed size whatever it says (`app.tcss`), and each `Static.update` with layout re-laid out
        the whole screen, three times in the picker's first moments, while a first key waited."""
        shown = (hints.plain, tuple(hints.spans))  # Content's == compares the text alone, not a key's dimming
        if shown == self._shown:
            return
        self._shown = shown
        self.update(hints, layout=False)

    def hints(self) -> Content:
        app = self.app
        active = self.screen.active_bindings
        parts: list[tuple[Content, bool]] = []  # (hint, app-wide)
        seen: set[str] = set()
        for key, (node, binding, enabled, _) in active.items():
            if not binding.show or binding.action in seen or key == app.COMMAND_PALETTE_BINDING:
                continue
            seen.add(binding.action)
            parts.append((self._hint(key, app.get_key_display(binding), binding.description, enabled), node is app))
        palette = app.ENABLE_COMMAND_PALETTE and app.COMMAND_PALETTE_BINDING in active
        if palette:
            binding = active[app.COMMAND_PALETTE_BINDING].binding
            parts.append((self._hint(binding.key, app.get_key_display(binding), "palette", True), False))
        tail = 1 if palette else 0  # hints after the screen's own
        room = self.content_region.width if self.is_attached and self.size.width else 0
        sep = Content("  ")
        more = False
        while room and (sep.join(p for p, _ in parts).cell_length + (len(MORE) + 2 if more else 0)) > room:
            app_wide = [i for i, (_, is_app) in enumerate(parts) if is_app]
            if app_wide:
                del parts[app_wide[-1]]
            elif len(parts) > 1 + tail:  # still too wide: the screen's last keys go, the palette stays
                del parts[len(parts) - 1 - tail]
                more = True
            else:
                break
        if more:  # say that keys are missing and where to find them
            parts.insert(len(parts) - tail, (Content.styled(MORE, DISABLED_STYLE), False))
        return sep.join(p for p, _ in parts)

    @staticmethod
    def _hint(key: str, display: str, description: str, enabled: bool) -> Content:
        hint = Content.assemble(
            (display, KEY_STYLE if enabled else DISABLED_STYLE),
            " ",
            (description, DESCRIPTION_STYLE if enabled else DISABLED_STYLE),
        )
        return hint.stylize(Style.from_meta({"key": key}))

    async def on_click(self, event: events.Click) -> None:
        key = event.style.meta.get("key") if event.style else None
        if key:
            event.stop()
            await self.app.run_action(f"simulate_key({key!r})")
