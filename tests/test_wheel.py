"""The built wheel stands on its own: installed into a fresh virtualenv, away from this source
tree, it lists every shipped sample and the real ProactiveBench traces and loads its themes. The themes and
samples live at the repository's top level (`themes/`, `sample_envs/<family>/`); the wheel carries
them as `proactive_tui/_bundled/...`, where `paths.bundled_dir` finds them.

Offline and without a second download of the dependencies: the wheel is built with the test
venv's setuptools (`--no-build-isolation`), installed with `--no-deps --no-index`, and the fresh
venv reaches the test venv's packages through a `.pth` line placed after its own site-packages, so
`proactive_tui` itself can only come from the wheel. A plain path line in a `.pth` file does not
make Python read the `.pth` files of that folder, so the test venv's editable install (its
`__editable__*.pth` and finder) stays inert; the test checks that too.

Slow (about half a minute): deselect with `-m "not slow"`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import PACKAGE, REAL_TRACES, REWARD_DATA, ROOT, SAMPLE_DIRS, SAMPLE_ENVS, THEMES_DIR

pytestmark = pytest.mark.slow

THEMES = {"high-contrast", "proactive-dark", "proactive-light", "solarized-dusk"}
FAMILIES = {"proactiveeval", "proactivebench", "chronos", "proactbench"}


def run(cmd: list[str | Path], **kwargs) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kwargs)
    assert proc.returncode == 0, f"{cmd}\nstdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}"
    return proc


def shipped_files() -> set[str]:
    """Package data the wheel must hold, as wheel member names, from the source tree."""
    globs = [
        "families/proactivebench/data/**/*.json",
        "families/proactivebench/data/**/*.jsonl",
        "families/proactivebench/data/LICENSE",
        "families/proactivebench/data/NOTICE.md",
        "families/proactbench/data/**/*.json",
        "families/proactbench/data/**/*.jsonl",
        "families/proactbench/data/LICENSE",
        "families/proactbench/data/NOTICE.md",
        "**/*.tcss",
        "export/viewer_assets/*",
    ]
    found = {p for g in globs for p in PACKAGE.glob(g) if p.is_file() and "__pycache__" not in p.parts}
    names = {"proactive_tui/" + p.relative_to(PACKAGE).as_posix() for p in found}
    # the top-level folders, every file in them (nothing there is left behind by the build)
    for top in (SAMPLE_ENVS, THEMES_DIR):
        names |= {f"proactive_tui/_bundled/{top.name}/" + p.relative_to(top).as_posix()
                  for p in top.rglob("*") if p.is_file()}
    return names


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("wheel")
    # Build from a copy: an in-tree build would leave build/ and *.egg-info in the working copy.
    src = base / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    for folder in (PACKAGE, SAMPLE_ENVS, THEMES_DIR):
        shutil.copytree(folder, src / folder.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info"))
    dist = base / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--no-index", "-w", dist, src])
    wheels = sorted(dist.glob("proactive_tui-*.whl"))
    assert len(wheels) == 1, wheels

    venv = base / "venv"
    run([sys.executable, "-m", "venv", venv])
    python = venv / "bin" / "python"
    run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-index", wheels[0]],
        env=clean_env(base))
    site = Path(run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                    env=clean_env(base)).stdout.strip())
    ours = sysconfig.get_paths()
    deps = dict.fromkeys([ours["purelib"], ours["platlib"]])  # one line each, in order, no repeats
    # "zz" sorts last: the dependencies come after the venv's own site-packages (and the wheel).
    (site / "zz_test_venv_dependencies.pth").write_text("".join(f"{p}\n" for p in deps), encoding="utf-8")
    return {"base": base, "wheel": wheels[0], "venv": venv, "python": python, "site": site}


def clean_env(base: Path) -> dict[str, str]:
    """No PYTHONPATH, no user site, no sample-folder override; config and data in tmp dirs."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "PROACTIVE_TUI_SAMPLE_ENVS"}}
    env.update(
        PYTHONNOUSERSITE="1",
        PROACTIVE_TUI_CONFIG=str(base / "home" / "config.toml"),
        PROACTIVE_TUI_DATA=str(base / "home" / "data"),
        COLUMNS="200",
    )
    return env


def in_venv(built: dict[str, Path], *cmd: str | Path) -> subprocess.CompletedProcess[str]:
    """Run in the fresh venv with the working directory outside the repository."""
    cwd = built["base"] / "cwd"
    cwd.mkdir(exist_ok=True)
    return run(list(cmd), cwd=cwd, env=clean_env(built["base"]))


def test_wheel_holds_the_package_data(built: dict[str, Path]) -> None:
    names = set(zipfile.ZipFile(built["wheel"]).namelist())
    expected = shipped_files()
    assert len([n for n in expected if "/data/real/" in n]) == 13  # 12 traces + splits.json
    study = {n for n in expected if "/proactbench/data/" in n}
    # the rating study (18 raters + items), the pairwise study (8 voters + items), LICENSE, NOTICE
    assert len(study) == 30 and "proactive_tui/families/proactbench/data/NOTICE.md" in study
    assert len([n for n in study if "/pairwise/results/P" in n]) == 8
    assert {"proactive_tui/_bundled/themes/" + f"{t}.toml" for t in THEMES} <= expected
    bundled = {n.split("/")[3] for n in expected if n.startswith("proactive_tui/_bundled/sample_envs/")}
    assert bundled == FAMILIES  # one folder per built-in family
    assert "proactive_tui/_bundled/sample_envs/proactbench/NOTICE.md" in expected
    assert {f"proactive_tui/export/viewer_assets/viewer.{x}" for x in ("html", "css", "js")} <= expected
    assert sorted(expected - names) == []
    entry_points = zipfile.ZipFile(built["wheel"]).read(
        next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "[proactive_tui.families]" in entry_points
    # the licence: the file itself and the SPDX expression (PEP 639)
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(built["wheel"]).read(info).decode()
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    licence = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert zipfile.ZipFile(built["wheel"]).read(licence) == (ROOT / "LICENSE").read_bytes()
    # and each upstream copy's licence and notice, as license files of the distribution
    for upstream in ("proactive_tui/families/proactivebench/data/NOTICE.md", "proactive_tui/families/proactbench/data/LICENSE",
                     "sample_envs/proactbench/NOTICE.md"):
        assert f"License-File: {upstream}" in metadata, upstream
        assert any(n.endswith(f".dist-info/licenses/{upstream}") for n in names), upstream


def test_installed_package_comes_from_the_wheel(built: dict[str, Path]) -> None:
    snippet = textwrap.dedent("""
        import json, sys
        from importlib import metadata
        import proactive_tui
        from proactive_tui.families.proactivebench.eval_cli import default_reward_data
        from proactive_tui.paths import builtin_themes_dir, sample_envs_dir
        from proactive_tui.evalrun import human_study
        print(json.dumps({
            "file": proactive_tui.__file__,
            "dist": str(metadata.distribution("proactive-tui").locate_file("")),
            "families": sorted(e.name for e in metadata.entry_points(group="proactive_tui.families")),
            "editable": [repr(f) for f in sys.meta_path if "editable" in repr(f).lower()]
                        + [p for p in sys.path if "__editable__" in p],
            "themes_dir": str(builtin_themes_dir()),
            "samples_dir": str(sample_envs_dir("chronos")),
            "reward": str(default_reward_data()),
            "study": str(human_study.PACKAGED_STUDY),
            "study_items": len(human_study.load_study().items),
        }))
    """)
    info = json.loads(in_venv(built, built["python"], "-c", snippet).stdout)
    venv = built["venv"].resolve()
    assert info["study_items"] == 60
    for key in ("file", "dist", "themes_dir", "samples_dir", "reward", "study"):
        assert Path(info[key]).resolve().is_relative_to(venv), (key, info[key])
    assert info["editable"] == []
    assert FAMILIES <= set(info["families"])
    reward = Path(info["reward"])
    assert reward.read_bytes() == REWARD_DATA.read_bytes()


def test_envs_list_shows_every_sample_and_the_real_traces(built: dict[str, Path]) -> None:
    from proactive_tui.envs import load_paths

    samples = load_paths(list(SAMPLE_DIRS.values()))
    assert samples.problems == [], [p.render() for p in samples.problems]
    sample_ids = {env.id for env in samples.environments}
    # The loader found every sample file (not only the ones it was expecting to find).
    stems = {p.stem for p in SAMPLE_DIRS["proactivebench"].glob("*.json") if p.name != "splits.json"}
    assert stems and {f"proactivebench/{s}" for s in stems} <= sample_ids
    stems = {p.stem for p in SAMPLE_DIRS["chronos"].glob("*.json")}  # each a branching sample: two ids
    assert stems and all({f"chronos/{s}/positive", f"chronos/{s}/negative"} <= sample_ids for s in stems)
    for path in SAMPLE_DIRS["proactiveeval"].glob("*/*.json"):
        prefix = f"proactiveeval/{path.parent.name}/{path.stem}/"
        assert any(i.startswith(prefix) for i in sample_ids), prefix
    proactbench = load_paths([SAMPLE_ENVS / "proactbench"])
    assert proactbench.problems == [] and proactbench.environments
    sample_ids |= {env.id for env in proactbench.environments}
    assert {i.split("/", 1)[0] for i in sample_ids} == FAMILIES
    real_ids = {f"proactivebench/real/{p.stem}" for p in REAL_TRACES.glob("*.json") if p.name != "splits.json"}
    assert len(real_ids) == 12 and "proactivebench/real/code_11" in real_ids

    proc = in_venv(built, built["venv"] / "bin" / "proactive-tui", "envs", "list", "--json")
    listed = {json.loads(line)["id"] for line in proc.stdout.splitlines() if line.strip()}
    assert sorted(sample_ids - listed) == []
    assert sorted(real_ids - listed) == []
    assert "problem" not in proc.stderr, proc.stderr


def test_themes_load_from_the_wheel(built: dict[str, Path]) -> None:
    snippet = textwrap.dedent("""
        import json
        from proactive_tui.ui.themes import load_themes
        themes, problems = load_themes()
        print(json.dumps({"names": [t.name for t in themes], "problems": problems}))
    """)
    result = json.loads(in_venv(built, built["python"], "-c", snippet).stdout)
    assert result["problems"] == []
    assert THEMES <= set(result["names"])
