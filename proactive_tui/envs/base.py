"""What every environment has, whatever its family: a stable id, a title and a summary for pickers."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr


class EnvironmentBase(BaseModel):
    """Fields shared by the three families.

    `id` is readable and stable across runs (`proactiveeval/recommendation/fair/3`,
    `proactivebench/code_11`, `chronos/car-purchase/positive`) so run records, exports and the
    command line can name an environment without a database.
    """

    model_config = ConfigDict(extra="forbid")

    file_shape: ClassVar[str] = ""
    """What a file of these environments looks like, in a few words ("an array of {observation:
    ...} events"): the loader names it, family by family, for a file no family reads, so the
    message is right for whichever families are installed (a plug-in's too). Empty: the family's
    name and suffixes only."""

    id: str
    title: str
    summary: str
    domain: str
    tier: str | None = None
    source: str = ""
    """The file (and record) this environment was read from, for error messages and `envs show`."""
    _origin: Any = PrivateAttr(default=None)
    _file: Any = PrivateAttr(default=None)
    """The file's path (a `Path`) as the loader met it, for `EnvironmentSet.read_from`."""

    def __eq__(self, other: Any) -> bool:
        """Equal when the environments are (their fields): where each copy was loaded from
        (`origin`, a private attribute, which pydantic would compare too) is not part of what an
        environment is, so a stored session's copy equals the one loaded today."""
        if not isinstance(other, EnvironmentBase):
            return NotImplemented
        return type(self) is type(other) and self.__dict__ == other.__dict__

    @property
    def origin(self) -> Any:
        """The source it was loaded from (`envs.sources.Origin`), set by the loader; None for an
        environment that was not loaded from a source (an edit, one read back from a session).
        Not a field: it says where this copy was found, not what the environment is, so it is
        neither stored with a session nor shown in the editor."""
        return self._origin

    @property
    def list_label(self) -> str:
        """How the picker's list names this environment: its title, unless the family needs more
        to tell siblings apart (Chronos's two branches of one sample share a title)."""
        return self.title

    def search_text(self) -> str:
        """Text a picker filter matches against."""
        return " ".join([self.id, self.title, self.summary, self.domain, self.tier or ""]).lower()


def one_line(text: str, limit: int = 100) -> str:
    """Collapse whitespace and cut to `limit` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
