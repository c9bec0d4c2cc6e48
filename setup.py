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

from setuptools import find_namespace_packages, setup


def mapped(package: str, folder: str) -> list[str]:
    """`package` and one package per subfolder of `folder` (namespace discovery: no __init__.py)."""
    return [package, *(f"{package}.{sub}" for sub in find_namespace_packages(where=folder))]


setup(packages=[*find_namespace_packages(include=["proactive_tui", "proactive_tui.*"]),
                *mapped("proactive_tui._bundled.themes", "themes"),
                *mapped("proactive_tui._bundled.sample_envs", "sample_envs")])
