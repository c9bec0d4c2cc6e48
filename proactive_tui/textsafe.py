"""Model output is data: strip terminal escape sequences and control characters before display.

Rich `Text` objects already keep markup literal; this removes what a terminal would act on
(ANSI CSI/OSC/DCS sequences, lone ESC, C0/C1 controls other than newline and tab), and shows the
invisible bidirectional-text controls (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F, U+061C) as
visible `<U+202E>` tags, since they would reorder what is drawn after them ("Trojan Source").

Lone surrogates (U+D800-U+DFFF on their own) are not text: a JSON reply or file may spell them
(`"\ud800"`), Python then holds them, and writing them as UTF-8 (the store, a terminal, an export)
raises. `scrub()` replaces each with U+FFFD where text enters (model replies, a person's typing,
environment files), so everything after sees only storable text.

JSON output is the one place model text is kept as data rather than shown: `json_text()` writes
it with the invisible controls as `\\u` escapes (valid JSON, the same strings after loading), and
every JSON a session leaves behind (exports, `run --out`, eval reports, the `--json` listings) is
written through it.

Every line the command line prints goes through `plain`: plain `print`s as `say`, Rich consoles
as `proactive_tui.cli.printer.SafeConsole` (each segment of text it draws), argparse's messages
through the parser's `_print_message`. `tests/test_cli_text_safety.py` holds that no command
module prints any other way, and runs each command that prints model or file text against a
hostile reply and hostile files.
"""

from __future__ import annotations

import json
import re
import sys
from typing import IO, Any

_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"          # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST (or unterminated)
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"     # DCS / SOS / PM / APC
    r"|\x1b[@-Z\\-_]"                    # two-byte escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"            # 8-bit CSI
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_SURROGATES = re.compile("[\ud800-\udfff]")
_JSON_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def scrub(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD (valid pairs are already one code point)."""
    return _SURROGATES.sub("\ufffd", text) if _SURROGATES.search(text) else text


def scrub_deep(value: Any) -> Any:
    """`scrub` applied to every string inside lists, tuples and dicts (keys included)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, list):
        return [scrub_deep(v) for v in value]
    if isinstance(value, tuple):
        return tuple(scrub_deep(v) for v in value)
    if isinstance(value, dict):
        return {scrub_deep(k): scrub_deep(v) for k, v in value.items()}
    return value


def may_hold_surrogates(json_text: str) -> bool:
    """Whether JSON text spells a surrogate escape (the only way one gets into parsed JSON)."""
    return _JSON_SURROGATE.search(json_text) is not None


def plain(text: str) -> str:
    """The text with every escape sequence and control character (but \\n and \\t) removed,
    bidi controls shown as `<U+XXXX>` tags and lone surrogates as U+FFFD."""
    text = _CONTROLS.sub("", _ESCAPES.sub("", scrub(text)))
    return _BIDI.sub(lambda m: f"<U+{ord(m.group()):04X}>", text) if _BIDI.search(text) else text


def say(*objects: Any, sep: str = " ", end: str = "\n", file: IO[str] | None = None, flush: bool = False) -> None:
    """`print`, with the text made safe for a terminal by `plain`: the command line's one way to
    print without Rich (plain lines, JSON), so no model reply, file name or environment field it
    names can set a window title, write the clipboard (OSC 52) or clear the screen."""
    stream = sys.stdout if file is None else file
    print(plain(sep.join(str(obj) for obj in objects)), end=plain(end), file=stream, flush=flush)


_JSON_INVISIBLE = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c\u2028\u2029\x7f-\x9f]")


def json_text(value: Any, indent: int | None = None, sort_keys: bool = False) -> str:
    """`value` (a pydantic model or JSON data) as JSON text, with every bidi control, C1 control
    and line/paragraph separator written as a `\\uXXXX` escape, and any lone surrogate as U+FFFD.

    Why: a JSON export keeps model output as data, the same strings after loading, but the file
    is also read raw (`cat`, a diff, a code review), where a raw U+202E reorders the line and a
    raw 0x9b starts a terminal escape; json.dumps with ensure_ascii=False leaves them raw. These
    characters only ever occur inside JSON strings, so escaping them in the serialised text is
    exact. A lone surrogate cannot be written as UTF-8 at all; text is scrubbed where it enters,
    and should one get through, it is replaced as `scrub` does (as the store does), never a
    traceback instead of the file. Every JSON a session leaves behind (exports, `run --out`,
    `sessions show --json`/`list --json`, `envs show --json`, eval reports) is written here.
    `sort_keys` orders every object's keys (the HTML viewer's deterministic pages)."""
    if sort_keys and hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if hasattr(value, "model_dump_json"):
        try:
            text = value.model_dump_json(indent=indent)
        except ValueError:  # pydantic_core.PydanticSerializationError: "surrogates not allowed"
            text = json.dumps(value.model_dump(mode="json"), ensure_ascii=False, indent=indent)
    else:
        text = json.dumps(value, ensure_ascii=False, indent=indent, sort_keys=sort_keys)
    from proactive_tui.redact import holds_secret, map_strings, mask_secrets

    if holds_secret(text):  # a key the app knows (one a provider echoed): masked in the data, so the JSON stays valid
        text = json.dumps(map_strings(json.loads(text), mask_secrets), ensure_ascii=False, indent=indent)
    text = scrub(text)
    return _JSON_INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text) if _JSON_INVISIBLE.search(text) else text


# -- naming what is wrong in a file: shared by every loader (environments, config, themes) --------


def field_path(loc: tuple[Any, ...]) -> str:
    """Turn a pydantic error location into `environment.user_information` / `sub_target[2]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + _key(str(part))
    return out


def _key(name: str) -> str:
    """A key as shown in a message: as written when it is printable, else JSON-quoted, so a key
    holding a carriage return, an escape sequence, a bidi control or a lone surrogate can neither
    break the message's line nor act on the terminal (and the message stays storable UTF-8)."""
    if name and name.isprintable():
        return name
    return json.dumps(name)


def number_problem(exc: ValueError) -> str:
    """A plain ValueError out of a parser: in practice an integer of more than 4300 digits, which
    Python refuses to convert (a guard against quadratic-time parsing); said in the file's terms."""
    if "digits" in str(exc):
        return "a number too long to read (more than 4300 digits)"
    return str(exc)
