"""Plain-text sections describing an environment, shared by `envs show` and the picker preview.

Returned as (heading, body) pairs of plain strings so each front end styles them its own way and
file content is never interpreted as markup. The header is common; the rest is the family's
(`EnvironmentsPart.describe`). `reveal_reference=False` hides what a person playing the user should not
see (reference targets, which states satisfy the needs, annotations).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

Section = tuple[str, str]

_PACKAGE = str(Path(__file__).resolve().parent.parent) + os.sep


def shown_source(source: str) -> str:
    """Where an environment comes from, as a person reads it: a built-in sample by its place in
    the package (not the install path, which differs per machine and venv and would otherwise fill
    a line of every preview and screenshot), a file of the user's environments folder by its place
    there, a file under the home folder with `~`."""
    full = os.path.abspath(source) if source else source  # the loader may name a file relative to the cwd
    from proactive_tui.paths import bundled_dir, user_envs_dir

    shipped = str(bundled_dir("sample_envs")) + os.sep  # the top-level sample_envs/, or the wheel's copy of it
    if full.startswith(shipped):
        return f"built-in sample, sample_envs{os.sep}{full[len(shipped):]}"
    if full.startswith(_PACKAGE):
        return f"built-in sample, {full[len(_PACKAGE):]}"

    folder = os.path.abspath(user_envs_dir()) + os.sep
    if full.startswith(folder):
        return f"your envs folder, {full[len(folder):]}"
    home = str(Path.home()).rstrip(os.sep) + os.sep
    if home != os.sep and source.startswith(home):
        return "~" + os.sep + source[len(home):]
    return source


def header_text(env: Any) -> str:
    """The first lines of every description: id, title, family, domain, tier and source."""
    return (f"{env.id}\n{env.title}\nfamily: {env.family}   domain: {env.domain}   tier: {env.tier or '-'}\n"
            f"source: {shown_source(env.source)}")


def describe(env: Any, reveal_reference: bool = True) -> list[Section]:
    from proactive_tui.folding import fold_text

    from proactive_tui.core import registry

    family = registry.find(env.family)
    sections: list[Section] = [("", header_text(env))]
    if family is not None:
        if family.source is not None:
            ref = family.source
            text = ref.citation(family.title)
            if ref.distinct_from:
                text += "\nnot to be confused with " + "; ".join(ref.distinct_from)
            sections.append(("Benchmark", text))
        sections += family.environments.describe(env, reveal_reference)
    # A value can be megabytes long (a 20 MB field kept `envs show` silent for minutes): each
    # section is shown folded (folding.fold_text), saying how much is hidden and where it is whole.
    return [(heading, fold_text(body, where=WHOLE)) for heading, body in sections]


WHOLE = "`envs show ID --json` prints it whole"
