"""Only the package list; everything else is in pyproject.toml.

Why a setup.py at all: the wheel must carry the top-level `themes/` and `sample_envs/` (the
source of truth) inside the package, which setuptools does by mapping packages onto those folders
(`[tool.setuptools.package-dir]`: `proactive_tui._bundled.themes` -> `themes/`). pyproject.toml
can give either a `find` rule or a fixed list of packages, not both, and a fixed list would
silently drop any subpackage added later. So the list is computed here: what namespace discovery
finds under `proactive_tui/`, plus the mapped folders and their subfolders (a data folder that is
not a listed package draws setuptools' "would be ignored" warning). No build hook copies files:
sdist, wheel and editable installs all read the same mapping.
"""

import os

from setuptools import find_namespace_packages, setup


HERE = os.path.dirname(os.path.abspath(__file__))


def mapped(package: str, folder: str) -> list[str]:
    """`package` and one package per subfolder of `folder` (namespace discovery: no __init__.py)."""
    return [package, *(f"{package}.{sub}" for sub in find_namespace_packages(where=os.path.join(HERE, folder)))]


def packages() -> list[str]:
    """Every package the wheel holds (tests/test_screenshots_docs.py checks docs/ is not one)."""
    return [*find_namespace_packages(where=HERE, include=["proactive_tui", "proactive_tui.*"]),
            *mapped("proactive_tui._bundled.themes", "themes"),
            *mapped("proactive_tui._bundled.sample_envs", "sample_envs")]


if __name__ == "__main__":  # as the build runs it; importing it only defines the list
    setup(packages=packages())
