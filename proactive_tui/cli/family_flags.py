"""A family's own `run` flags (`Family.run_flags`): their parser, and the merging of them into the
common options.

Its own module, below both `run_cmd` (the command, whose --help lists them) and `headless` (the
runner, which reads them): the command calls the runner, and the runner must not call back into
the command (`compare` reads the same flags).
"""

from __future__ import annotations

import argparse

from proactive_tui.textsafe import say


class _FamilyParser(argparse.ArgumentParser):
    def print_help_lines(self) -> None:
        text = self.format_help()
        body = text.split("options:", 1)[-1] if "options:" in text else text
        lines = [line for line in body.splitlines() if line.strip() and "-h, --help" not in line]
        say("\n".join(lines) if lines else "  (none)")

    def error(self, message: str):  # pragma: no cover - replaced by the caller's message
        raise ValueError(message)


def family_parser(family) -> _FamilyParser:
    p = _FamilyParser(prog=f"proactive-tui run {family.name}/...", add_help=False, allow_abbrev=False)
    for flag in family.run_flags:
        p.add_argument(flag.flag, dest=flag.dest, **flag.kwargs)
    return p


def parse_family_flags(family, args: argparse.Namespace, extra: list[str]) -> argparse.Namespace:
    """`extra` (what the common parser did not know) as `family`'s flags; raises ValueError naming
    the family when a flag is not one of them."""
    from proactive_tui.core import registry

    own = {flag.flag for flag in family.run_flags}
    for token in extra:
        name = token.split("=", 1)[0]
        if name.startswith("--") and name not in own:
            others = [f.name for f in registry.families().values() if f is not family and name in {x.flag for x in f.run_flags}]
            where = f" (a {', '.join(others)} flag)" if others else ""
            takes = ", ".join(sorted(own)) or "no flags of its own"
            raise ValueError(f"{name} does not apply to {family.name} sessions{where}; {family.name} takes: {takes}")
    try:
        parsed = family_parser(family).parse_args(extra)
    except ValueError as exc:
        raise ValueError(f"{family.name} flags: {exc}") from None
    merged = argparse.Namespace(**vars(args))
    for key, value in vars(parsed).items():
        setattr(merged, key, value)
    return merged
