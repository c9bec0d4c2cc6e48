"""The depth check of environment files (`envs.reading._too_deep`) walks by depth alone and names
the same place as the walk with paths (`_deep_path`), which it falls back on for a file too deep."""

from __future__ import annotations

from proactive_tui.envs.reading import MAX_DEPTH, _deep_path, _too_deep


def nested(levels: int, leaf: object = "x") -> object:
    value: object = leaf
    for i in range(levels):
        value = {"k": value} if i % 2 else [value]
    return value


def test_depth_limit_is_where_it_was() -> None:
    assert _too_deep(nested(MAX_DEPTH)) is None
    assert _too_deep(nested(MAX_DEPTH + 1)) is not None
    assert _too_deep("just a string") is None and _too_deep(3) is None


def test_names_the_same_place_as_the_walk_with_paths() -> None:
    records = [{"environment": {"user_information": "a"}, "topic": "t"},
               {"environment": {"deep": nested(MAX_DEPTH + 3)}, "sub_target": ["a", "b"]},
               {"other": [nested(MAX_DEPTH + 1)]}]
    found = _too_deep(records)
    assert found == _deep_path(records)
    assert found[:3] == [2, "other", 0]  # the walk pops the last record first, as it always did
    shallow = [{"environment": {"user_information": "a" * 10}, "sub_target": [[1, 2], {"x": [3]}]}] * 50
    assert _too_deep(shallow) is None and _deep_path(shallow) is None
