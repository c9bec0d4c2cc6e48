"""JSON schemas and response formats -> llama.cpp (GBNF) grammars, with the string and list caps.

Structured output that parses: JSON schemas become a GBNF grammar so decoding cannot leave the
schema; the grammar is tightened where llama.cpp's converter is looser than JSON/pydantic (raw
control characters in strings, integer `minimum`/`maximum`) and caps string and list lengths so the
135M model closes its JSON. llama_cpp is imported only inside `schema_to_gbnf`.
"""

from __future__ import annotations

import copy
import json
from typing import Any

# Integer ranges up to this size are turned into an enum so the grammar enforces them.
_MAX_INT_ENUM = 256
# The 135M model fills a JSON string until max_tokens runs out; capping string and list length in
# the grammar keeps a judge reply to ~100 tokens (2 s instead of 8 s) and lets the JSON close.
LOCAL_STRING_CAP = 240
LOCAL_LIST_CAP = 6


def _response_schema(response_format: Any) -> tuple[dict[str, Any] | None, bool]:
    """(schema, json_object) from an OpenAI-style response_format; (None, False) for plain text.

    Accepts `{"type": "json_schema", "json_schema": {"name", "schema"}}`, `{"type": "json_object"}`
    with or without a `schema` key, and a pydantic model class.
    """
    if response_format is None:
        return None, False
    if isinstance(response_format, type) and hasattr(response_format, "model_json_schema"):
        return response_format.model_json_schema(), False
    if hasattr(response_format, "model_dump") and not isinstance(response_format, dict):
        response_format = response_format.model_dump()
    if not isinstance(response_format, dict):
        return None, False
    kind = response_format.get("type")
    if kind == "json_schema":
        inner = response_format.get("json_schema") or {}
        schema = inner.get("schema") if isinstance(inner, dict) else None
        schema = schema or response_format.get("schema")
        return (schema, False) if isinstance(schema, dict) else (None, True)
    if kind == "json_object":
        schema = response_format.get("schema")
        return (schema, False) if isinstance(schema, dict) else (None, True)
    return None, False


def _int_bounds(node: dict[str, Any]) -> tuple[int, int] | None:
    low = node.get("minimum")
    high = node.get("maximum")
    if isinstance(node.get("exclusiveMinimum"), (int, float)) and not isinstance(node.get("exclusiveMinimum"), bool):
        low = int(node["exclusiveMinimum"]) + 1
    if isinstance(node.get("exclusiveMaximum"), (int, float)) and not isinstance(node.get("exclusiveMaximum"), bool):
        high = int(node["exclusiveMaximum"]) - 1
    if low is None or high is None:
        return None
    low, high = int(low), int(high)
    if high < low or high - low + 1 > _MAX_INT_ENUM:
        return None
    return low, high


def grammar_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of `schema` that llama.cpp's JSON-schema-to-GBNF converter enforces fully.

    The converter understands `$defs`/`$ref`, `enum`, `const`, `anyOf`, `required` and ignores
    `title`/`description`/`default`, which is all pydantic emits for nested models, Literals and
    lists. It ignores `minimum`/`maximum` though, so a small bounded integer (a 1-10 score) becomes
    an `enum` of its values; otherwise the model may answer 0 or 42 and pydantic rejects it.
    """

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        node = {key: walk(value) for key, value in node.items()}
        if node.get("type") == "string" and "enum" not in node and "const" not in node:
            node.setdefault("maxLength", LOCAL_STRING_CAP)
        if node.get("type") == "array":
            node.setdefault("maxItems", LOCAL_LIST_CAP)
        if node.get("type") == "integer" and "enum" not in node and "const" not in node:
            bounds = _int_bounds(node)
            if bounds is not None:
                node = {k: v for k, v in node.items() if k not in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")}
                node["enum"] = list(range(bounds[0], bounds[1] + 1))
        return node

    tightened: dict[str, Any] = walk(copy.deepcopy(schema))
    return tightened


# llama.cpp's converter lets raw control characters (a newline) into strings, which JSON and
# pydantic's parser reject; its generic JSON grammar already excludes them, so do the same.
_LOOSE_CHAR_RULE = 'char ::= [^"\\\\] |'
_STRICT_CHAR_RULE = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'


def schema_to_gbnf(schema: dict[str, Any]) -> str:
    """GBNF text for `schema`, tightened as `grammar_schema` and `_STRICT_CHAR_RULE` describe."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf: str = json_schema_to_gbnf(json.dumps(grammar_schema(schema)))
    return gbnf.replace(_LOOSE_CHAR_RULE, _STRICT_CHAR_RULE)
