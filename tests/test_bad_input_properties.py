"""Property-based bad input: environment files, the config file and theme files.

Why properties: the hand-written bad-input tests cover the failures someone thought of; these
generate the rest (a field of the wrong type anywhere in a record, a missing field, deep nesting,
NaN, lone surrogates, a byte-order mark, invalid UTF-8, a file cut short) and check the one
promise every loader makes: a file either loads or becomes problems that name it (and, for a bad
record, the record and the field) - never a traceback, never a hang, and never at the cost of the
good file beside it. Each case runs in-process with the normal recursion limit. Derandomized with
a bounded example count and no deadline, so a loaded machine neither flakes nor slows the suite.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings, strategies as st

from proactive_tui.config import AppConfig, ConfigError, load_config
from proactive_tui.envs import load_paths
from proactive_tui.textsafe import plain
from proactive_tui.ui.themes import load_themes
from test_envs_loaders import CHRONOS, PB_EVENT, PE_ITEM

PROPERTY = settings(derandomize=True, max_examples=150, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# -- generated values ------------------------------------------------------------------------

HOSTILE_TEXT = st.sampled_from(["", " ", "\ud800", "a\udfffb", "\u202eevil\u202c", "\x00", "\x1b]52;c;eA==\x07",
                                "[bold]x[/]", "\ufeff", "😀", "x" * 5000])
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(min_value=10**30, max_value=10**40)
           | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20) | HOSTILE_TEXT)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8) | HOSTILE_TEXT, inner, max_size=4), max_leaves=12)


def deep(depth: int, kind: str) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


DEEP = st.builds(deep, st.sampled_from([50, 500, 900]), st.sampled_from(["list", "dict"]))
REPLACEMENT = JSON_VALUES | DEEP


def paths_of(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every location inside a JSON value (the value itself included), to mutate one of them."""
    out = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            out += paths_of(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += paths_of(item, prefix + (i,))
    return out


def mutate(doc: Any, path: tuple, action: str, replacement: Any) -> Any:
    """`doc` with the value at `path` replaced, deleted, or wrapped in deep nesting."""
    doc = copy.deepcopy(doc)
    if not path:
        return replacement if action != "wrap" else [doc]
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if action == "delete":
        del parent[last]
    elif action == "wrap":
        parent[last] = deep(200, "list") if isinstance(last, int) else {"nested": [parent[last]] * 3}
    else:
        parent[last] = replacement
    return doc


def encode(doc: Any, byte_action: str, cut: float) -> bytes:
    """The document as file bytes, optionally damaged at the byte level."""
    if byte_action == "cesu":  # surrogates written raw: not UTF-8 at all
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    raw = json.dumps(doc, ensure_ascii=True).encode("ascii")
    if byte_action == "bom":
        return b"\xef\xbb\xbf" + raw
    if byte_action == "truncate":
        return raw[: int(len(raw) * cut)]
    if byte_action == "invalid_utf8":
        at = int(len(raw) * cut)
        return raw[:at] + b"\xff\xfe\xc3" + raw[at:]
    if byte_action == "nan":
        return raw.replace(b"16", b"NaN", 1).replace(b"false", b"-Infinity", 1)
    if byte_action == "hugenum":  # valid JSON, but more digits than Python converts to an int
        return raw.replace(b": ", b": " + b"9" * 5000 + b', "_huge": ', 1) if b": " in raw else b"9" * 5000
    return raw


BYTE_ACTIONS = st.sampled_from(["none", "none", "none", "bom", "truncate", "invalid_utf8", "cesu", "nan", "hugenum"])
ACTIONS = st.sampled_from(["replace", "replace", "delete", "wrap"])

# -- one family at a time: where its files live and a good file to put beside the bad one ------


def pe_layout(root: Path) -> tuple[Path, Path, Any, str]:
    """ProactiveEval reads `<domain>/<tier>.json`, an array of items; two items so one is good."""
    return root / "recommendation" / "fair.json", root / "recommendation" / "hard.json", [PE_ITEM, PE_ITEM], "proactiveeval/recommendation/hard/0"


def pb_layout(root: Path) -> tuple[Path, Path, Any, str]:
    return root / "proactivebench" / "bad.json", root / "proactivebench" / "good.json", [PB_EVENT, PB_EVENT], "proactivebench/good"


def ch_layout(root: Path) -> tuple[Path, Path, Any, str]:
    return root / "chronos" / "bad.json", root / "chronos" / "good.json", CHRONOS, "chronos/good"


LAYOUTS = {"proactiveeval": pe_layout, "proactivebench": pb_layout, "chronos": ch_layout}


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def shown(message: str) -> str:
    """A problem message is safe to print as it is: storable UTF-8 (no lone surrogate) and with
    nothing a terminal acts on or that reorders the line (plain() would change nothing)."""
    message.encode("utf-8")
    assert plain(message) == message and "\n" not in message.strip("\n"), repr(message)
    return message


def check_env_case(root: Path, family: str, data: st.DataObject) -> None:
    bad, good, doc, good_id = LAYOUTS[family](root)
    path = data.draw(st.sampled_from(paths_of(doc)), label="path")
    action = data.draw(ACTIONS, label="action")
    replacement = data.draw(REPLACEMENT, label="replacement")
    byte_action = data.draw(BYTE_ACTIONS, label="bytes")
    cut = data.draw(st.floats(min_value=0.0, max_value=1.0), label="cut")
    write(good, json.dumps(doc).encode())
    mutated = mutate(doc, path, action, replacement)
    write(bad, encode(mutated, byte_action, cut))

    loaded = load_paths([root])  # the property: this returns, never raises

    assert loaded.get(good_id) is not None, [p.render() for p in loaded.problems]
    bad_name = bad.name if family != "proactiveeval" else "recommendation/fair.json"
    for problem in loaded.problems:
        assert problem.file.replace("\\", "/").endswith(bad_name), problem.render()
        assert problem.message.strip() and "Traceback" not in problem.message, problem.render()
        shown(problem.render())
    for env in loaded.environments:
        env.model_dump_json().encode("utf-8")  # storable
    if byte_action == "none" and action == "replace" and len(path) >= 2 and loaded.problems and family != "chronos":
        # a record-level mutation inside an array of records: the problem names the record
        assert any(p.record is not None for p in loaded.problems if "unrecognised" not in p.message), \
            [p.render() for p in loaded.problems]
    if byte_action == "none" and action == "replace" and len(path) >= 2 and loaded.problems:
        assert any(p.field for p in loaded.problems if p.record is not None or family == "chronos") \
            or any("unrecognised" in p.message for p in loaded.problems), [p.render() for p in loaded.problems]


@PROPERTY
@given(data=st.data())
def test_proactiveeval_files_load_or_name_the_problem(tmp_path_factory, data) -> None:
    check_env_case(tmp_path_factory.mktemp("pe"), "proactiveeval", data)


@PROPERTY
@given(data=st.data())
def test_proactivebench_files_load_or_name_the_problem(tmp_path_factory, data) -> None:
    check_env_case(tmp_path_factory.mktemp("pb"), "proactivebench", data)


@PROPERTY
@given(data=st.data())
def test_chronos_files_load_or_name_the_problem(tmp_path_factory, data) -> None:
    check_env_case(tmp_path_factory.mktemp("ch"), "chronos", data)


@PROPERTY
@given(doc=REPLACEMENT, byte_action=BYTE_ACTIONS, cut=st.floats(min_value=0.0, max_value=1.0),
       companion=st.booleans())
def test_any_json_document_in_any_family_folder_loads_or_names_the_file(tmp_path_factory, doc, byte_action, cut,
                                                                          companion) -> None:
    """Not a mutated record but any JSON at all, in each family's place (and as ProactiveBench's
    `splits.json` companion, read before the traces beside it)."""
    root = tmp_path_factory.mktemp("any")
    raw = encode(doc, byte_action, cut)
    write(root / "chronos" / "x.json", raw)
    write(root / "recommendation" / "fair.json", raw)
    write(root / "proactivebench" / ("splits.json" if companion else "x.json"), raw)
    write(root / "proactivebench" / "good.json", json.dumps([PB_EVENT]).encode())
    write(root / "chronos" / "good.json", json.dumps(CHRONOS).encode())
    loaded = load_paths([root])
    assert loaded.get("chronos/good") is not None
    if not companion:
        assert loaded.get("proactivebench/good") is not None
    for problem in loaded.problems:
        assert Path(problem.file).name in {"x.json", "fair.json", "splits.json", "good.json"}, problem.render()
        shown(problem.render())


# -- TOML: the config file and theme files -----------------------------------------------------

GOOD_CONFIG = {"theme": "proactive-dark", "recent_models": ["openai/gpt-4.1"], "envs": ["/tmp/envs"], "local_threads": 2,
               "roles": {"agent": {"model": "openai/gpt-4.1", "temperature": 0.7}}}
GOOD_THEME = {"name": "good-theme", "dark": True, "primary": "#112233", "background": "#000000", "text_alpha": 0.9,
              "variables": {"border": "#FFFF00"}}

TOML_SCALARS = (st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
                | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20) | HOSTILE_TEXT)
TOML_VALUES = st.recursive(TOML_SCALARS, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(min_size=1, max_size=8), inner, max_size=3), max_leaves=8)


def toml_value(value: Any) -> str:
    """A tiny TOML writer for generated values (inline tables and arrays, escaped strings)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return {"nan": "nan", "inf": "inf", "-inf": "-inf"}.get(repr(value), repr(value))
    if isinstance(value, str):
        return json.dumps(value)  # \ud800 spelled as an escape: invalid TOML, which must say so
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"


def toml_doc(doc: dict[str, Any]) -> str:
    return "\n".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in doc.items()) + "\n"


def toml_bytes(doc: dict[str, Any], byte_action: str, cut: float) -> bytes:
    text = toml_doc(doc)
    if byte_action == "cesu":
        return text.encode("utf-8", "surrogatepass")
    raw = text.encode("utf-8", "surrogatepass")
    if byte_action == "bom":
        return b"\xef\xbb\xbf" + raw
    if byte_action == "truncate":
        return raw[: int(len(raw) * cut)]
    if byte_action == "invalid_utf8":
        at = int(len(raw) * cut)
        return raw[:at] + b"\xff\xc3" + raw[at:]
    if byte_action == "nan":
        return raw + b"\nbroken = [nan, {a = [[[[" + b"[" * 2000 + b"\n"
    if byte_action == "hugenum":
        return raw + b"\nhuge = " + b"9" * 5000 + b"\n"
    return raw


def mutated_toml(data: st.DataObject, good: dict[str, Any]) -> bytes:
    path = data.draw(st.sampled_from(paths_of(good)[1:]), label="path")
    action = data.draw(st.sampled_from(["replace", "replace", "delete", "extra"]), label="action")
    replacement = data.draw(TOML_VALUES, label="replacement")
    doc = copy.deepcopy(good)
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    if action == "delete":
        del parent[path[-1]]
    elif action == "extra" and isinstance(parent, dict):
        parent[data.draw(st.text(min_size=1, max_size=10), label="key")] = replacement
    else:
        parent[path[-1]] = replacement
    return toml_bytes(doc, data.draw(BYTE_ACTIONS, label="bytes"), data.draw(st.floats(0.0, 1.0), label="cut"))


@PROPERTY
@given(data=st.data())
def test_config_file_loads_or_names_the_file_and_setting(tmp_path_factory, data) -> None:
    path = tmp_path_factory.mktemp("cfg") / "config.toml"
    path.write_bytes(mutated_toml(data, GOOD_CONFIG))
    try:
        config = load_config(path)
    except ConfigError as exc:
        message = str(exc)
        assert message and all(line.startswith(f"{path}: ") for line in message.splitlines()), message
        for line in message.splitlines():
            shown(line)
    else:
        assert isinstance(config, AppConfig)
        config.model_dump_json().encode("utf-8")


@PROPERTY
@given(data=st.data())
def test_one_bad_theme_file_never_stops_the_others(tmp_path_factory, data) -> None:
    folder = tmp_path_factory.mktemp("themes")
    (folder / "a-good.toml").write_text(toml_doc(GOOD_THEME), encoding="utf-8")
    (folder / "b-bad.toml").write_bytes(mutated_toml(data, {**GOOD_THEME, "name": "bad-theme"}))
    themes, problems = load_themes([folder])
    assert "good-theme" in [t.name for t in themes], problems
    for problem in problems:
        assert problem.startswith(f"{folder / 'b-bad.toml'}: ") and "\n" not in problem, problem
        shown(problem)


# -- plain regression tests for what the properties found ---------------------------------------


def test_a_record_nested_too_deeply_to_store_is_a_problem_naming_record_and_field(tmp_path: Path) -> None:
    """Found by the properties: a ProactiveEval `topic` (free-form) nested 500 levels loaded, and
    only serialising the environment (the store, an export) failed, with pydantic's depth error."""
    write(tmp_path / "recommendation" / "fair.json", json.dumps([PE_ITEM, {**PE_ITEM, "topic": deep(500, "list")}]).encode())
    write(tmp_path / "recommendation" / "hard.json", json.dumps([PE_ITEM]).encode())
    loaded = load_paths([tmp_path])
    assert [e.id for e in loaded.environments] == ["proactiveeval/recommendation/hard/0"]
    [problem] = loaded.problems
    assert (problem.record, problem.field) == (1, "topic[0]") and "nested too deeply" in problem.message
    assert problem.file.endswith("fair.json")


def test_a_config_key_with_a_control_character_is_quoted_in_the_message(tmp_path: Path) -> None:
    """Found by the properties: an unknown key holding a carriage return was echoed raw, which
    split the one-line message (and a key with an escape sequence would act on the terminal)."""
    path = tmp_path / "config.toml"
    path.write_text('"\\r" = 1\n"\\u202eevil" = 2\n', encoding="utf-8")
    try:
        load_config(path)
    except ConfigError as exc:
        lines = str(exc).splitlines()
    assert lines == [f'{path}: "\\r": unknown setting', f'{path}: "\\u202eevil": unknown setting']


def test_a_number_with_more_digits_than_python_converts_is_a_problem_not_a_traceback(tmp_path: Path) -> None:
    """Found by the properties: json.loads and tomllib raise a plain ValueError (not their decode
    errors) for an integer of more than 4300 digits, and it escaped both readers."""
    write(tmp_path / "chronos" / "huge.json", b'{"turn_limit": ' + b"9" * 5000 + b"}")
    write(tmp_path / "chronos" / "good.json", json.dumps(CHRONOS).encode())
    loaded = load_paths([tmp_path])
    assert loaded.get("chronos/good") is not None
    [problem] = loaded.problems
    assert problem.file.endswith("huge.json") and "a number too long to read" in problem.message
    config = tmp_path / "config.toml"
    config.write_bytes(b"local_threads = " + b"9" * 5000 + b"\n")
    try:
        load_config(config)
    except ConfigError as exc:
        assert str(exc) == f"{config}: invalid TOML: a number too long to read (more than 4300 digits)"
    else:
        raise AssertionError("loaded")
    themes = tmp_path / "themes"
    themes.mkdir()
    (themes / "huge.toml").write_bytes(b'name = "x"\nprimary = "#000000"\ntext_alpha = ' + b"9" * 5000 + b"\n")
    assert load_themes([themes]) == ([], [f"{themes / 'huge.toml'}: invalid TOML: a number too long to read (more than 4300 digits)"])
