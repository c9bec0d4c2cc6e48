"""The README's screenshots (docs/make_screenshots.py): the README, the script's declared list and
the committed SVGs agree, each SVG shows what its caption says, and none shows a path of the
machine that made it or anything like a key. Cheap: reads files, runs no model."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT

SHOT_DIR = ROOT / "docs" / "screenshots"
README = ROOT / "README.md"
IMAGE = re.compile(r"!\[([^\]]*)\]\((docs/screenshots/[^)\s]+)\)")


def _script():
    spec = importlib.util.spec_from_file_location("make_screenshots", ROOT / "docs" / "make_screenshots.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # only definitions: main() runs under __main__ alone
    return module


SHOTS: dict[str, str] = _script().SHOTS


def readme_images() -> list[tuple[str, str]]:
    return IMAGE.findall(README.read_text(encoding="utf-8"))


def svg_text(name: str) -> str:
    return (SHOT_DIR / f"{name}.svg").read_text(encoding="utf-8")


def shown_text(svg: str) -> str:
    """What the SVG shows as text: its <text> contents joined, entities decoded (Textual writes
    a space as &#160;)."""
    import html

    return html.unescape("".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))).replace("\xa0", " ")


def background(svg: str) -> tuple[int, int, int]:
    """The colour most of the screen's cells are filled with (the terminal background)."""
    fills = Counter(re.findall(r'<rect fill="#([0-9a-fA-F]{6})"[^>]*width="([\d.]+)"', svg))
    area = Counter()
    for (colour, width), n in fills.items():
        area[colour.lower()] += float(width) * n
    colour = area.most_common(1)[0][0]
    return tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))


def luminance(rgb: tuple[int, int, int]) -> float:
    r, g, b = rgb
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


def test_every_readme_image_exists_and_is_declared() -> None:
    images = readme_images()
    assert images, "the README shows no screenshot"
    for alt, path in images:
        assert (ROOT / path).is_file(), f"README shows {path}, which is not in the repository"
        assert alt.strip(), f"{path} has no alt text"
        assert Path(path).stem in SHOTS, f"{path} is not made by docs/make_screenshots.py"


def test_every_declared_screenshot_exists_and_is_shown() -> None:
    shown = {Path(p).stem for _, p in readme_images()}
    for name in SHOTS:
        assert (SHOT_DIR / f"{name}.svg").is_file(), f"{name}.svg was never made (python docs/make_screenshots.py)"
        assert name in shown, f"the README does not show {name}.svg"
    stray = {p.stem for p in SHOT_DIR.glob("*.svg")} - set(SHOTS)
    assert not stray, f"screenshots no script makes: {sorted(stray)}"


def test_readme_captions_are_the_declared_ones_and_name_the_script_and_the_model() -> None:
    text = README.read_text(encoding="utf-8")
    # the caption is the paragraph right under the image
    captions = dict(re.findall(r"!\[[^\]]*\]\(docs/screenshots/([^)\s]+)\.svg\)\n\n(.+)", text))
    for name, caption in SHOTS.items():
        assert captions.get(name) == caption, f"the README's caption under {name}.svg is not the script's"
    section = text.split("## Screenshots", 1)
    assert len(section) == 2, "no Screenshots section"
    body = section[1].split("\n## ", 1)[0]
    assert "python docs/make_screenshots.py" in body and "local/smollm2" in body


PROOF = {  # name -> texts its screen must show (case-insensitive)
    "picker": ["proactiveeval", "proactivebench", "chronos", "Preview"],
    "session": ["Planning", "/10", "Sub-targets", "Turn checks", "Guidance score", "judge: local/smollm2",
                "Session ended"],
    "play": ["user: you", "your turn", "I already walk to the station", "Enter sends"],
    "proactivebench": ["proactivebench/coding_01", "event 2/2", "agent proposes", "Metrics", "Recall", "False-Alarm",
                       "judge: local/smollm2"],
    "chronos": ["chronos/car-purchase/positive", "Verdict", "Timeline", "clock", "Agent's task", "Replies vs the oracle"],
    "fork": ["Fork session", "turn 2 · agent message", "Branch with my edit", "Ask again"],
    "branch": ["Branches · 1 branch of", "the original", "turn 2 agent · edited", "vs parent:", "on screen"],
    "results": ["Read from files", "sessions finished", "ProactiveEval: dialogue guidance", "agents local/smollm2",
                "Sessions of local/smollm2"],
    "light": ["proactiveeval/persuasion/fair/0", "Guidance score", "Turn checks", "judge: local/smollm2"],
    "studio": ["Studio", "proactiveeval", "recommendation-0000", "Topic", "User information (U)",
               "Target candidates", "Candidate 2", "Step"],
    "history": ["session history", "Sessions (", "proactiveeval", "persuasion/fair/0", "proactivebench", "coding_01",
                "chronos", "car-purchase/positive"],
}


@pytest.mark.parametrize("name", sorted(SHOTS))
def test_each_screenshot_shows_what_its_caption_says(name: str) -> None:
    assert name in PROOF, f"no proof listed for {name}"
    text = shown_text(svg_text(name)).lower()
    for needle in PROOF[name]:
        assert needle.lower() in text, f"{name}.svg does not show {needle!r}"


def test_no_spinner_still_running() -> None:
    spinners = set("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
    for name in SHOTS:
        text = shown_text(svg_text(name))
        assert not spinners & set(text), f"{name}.svg caught a spinner mid-turn"
        assert "streaming" not in text.lower(), f"{name}.svg caught a reply mid-stream"


def test_the_light_theme_is_light_and_the_others_dark() -> None:
    assert luminance(background(svg_text("light"))) > 0.6
    for name in SHOTS:
        if name != "light":
            assert luminance(background(svg_text(name))) < 0.4, f"{name}.svg is not in the dark theme"


def test_no_screenshot_shows_a_path_or_a_key() -> None:
    home = str(Path.home())
    bad = ["/work/", "/tmp/", str(ROOT)] + ([home] if home not in ("/", "") else [])
    for name in SHOTS:
        svg = svg_text(name)
        for needle in bad:
            assert needle not in svg, f"{name}.svg contains {needle!r}"
        # a key's prefix where a word starts ("task-" is no key)
        assert not re.search(r"(?<![A-Za-z0-9])sk-", shown_text(svg)), f"{name}.svg shows something like a key"


def test_docs_are_not_packaged_into_the_wheel() -> None:
    # the package list is setup.py's (pyproject's `find` cannot add the top-level themes/ and sample_envs/)
    spec = importlib.util.spec_from_file_location("project_setup", ROOT / "setup.py")
    setup_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup_py)  # not __main__: defines the list, builds nothing
    packages = setup_py.packages()
    assert packages and all(p == "proactive_tui" or p.startswith("proactive_tui.") for p in packages), packages
    assert not any(p.split(".")[0] == "docs" for p in packages)
