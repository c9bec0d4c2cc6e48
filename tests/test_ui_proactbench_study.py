"""ProactBench's studies in the playground (issue 34): the agreement panel's study figures from
the store's labels (point figures equal to the published analysis; the options shown as
deviations), and voting blind on the pairwise study's pairs one at a time."""

from __future__ import annotations

import pytest

from ui_helpers import screen_lines, settle, wait_for
from proactive_tui.services.compare import pairwise_study
from proactive_tui.services.labels import rating_study
from proactive_tui.store import open_store
from proactive_tui.store.queries import load_record
from proactive_tui.ui.app import ProactiveApp
from proactive_tui.ui.screens.agreement import AgreementScreen
from proactive_tui.ui.screens.study_pairs import StudyPairsScreen
from proactive_tui.ui.screens.vote_modal import VoteModal

# analysis_stats.json of the study (see tests/test_proactbench_study.py): the point figures
POINTS = {"EMERGENT": (0.170, 0.545), "CRITICAL": (0.158, 0.269), "RECOVERY": (0.278, 0.552)}


@pytest.fixture(autouse=True)
def no_preload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROACTIVE_TUI_NO_PRELOAD", "1")


async def test_the_agreement_panel_shows_the_study_figures() -> None:
    with open_store() as store:
        rating_study("proactbench").import_study(store)
    app = ProactiveApp()
    async with app.run_test(size=(140, 50)) as pilot:
        await settle(pilot)
        app.push_screen(AgreementScreen(resamples=20))
        await wait_for(pilot, lambda: isinstance(app.screen, AgreementScreen) and app.screen.studies_final)
        panel = app.screen
        (fig,) = panel.studies
        got = {g.group: (round(g.alpha, 3), round(g.kappa, 3)) for g in fig.groups}
        assert {k: got[k] for k in POINTS} == POINTS and "OVERALL" in got
        assert fig.resamples == 20 and fig.groups[0].alpha_low is not None
        text = "\n".join(screen_lines(app))
        assert "ProactBench human study" in text and "deviation: 20 bootstrap resamples" in text
        assert "q: quadratic kappa off" in text
        await pilot.press("q")
        await wait_for(pilot, lambda: panel.quadratic and panel.studies_final
                       and any("quadratic" in d for d in panel.studies[0].deviations))
        assert round(panel.studies[0].groups[0].kappa, 3) != POINTS["EMERGENT"][1]
        titles = {t for t, _h, _c in panel.palette_commands()}
        assert "Study figures: rater exclusion on/off" in titles


async def test_voting_blind_on_the_study_pairs() -> None:
    with open_store() as store:
        pairwise_study("proactbench").import_study(store)
    app = ProactiveApp()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot)
        app.open_study_pairs()
        await wait_for(pilot, lambda: isinstance(app.screen, StudyPairsScreen))
        screen = app.screen
        await settle(pilot, screen)
        assert len(screen.pairs) == 80
        study, first = screen.current
        replies = [study.shown(load_record(app.store, s))[1] for s in first.sessions]
        text = "\n".join(screen_lines(app))
        assert "pair 1 of 80" in text and "gemini" not in text.lower() and "case B" not in text
        assert str(screen.query_one("#pair-text-A").render()) == replies[0]
        assert str(screen.query_one("#pair-text-B").render()) == replies[1]
        await pilot.press("v")
        await wait_for(pilot, lambda: isinstance(app.screen, VoteModal))
        await settle(pilot, app.screen)
        await pilot.click("#vote-B")
        await wait_for(pilot, lambda: app.screen is screen and len(screen.pairs) == 79)
        voted = next(r for r in app.store.comparisons() if r.id == first.id)
        assert voted.vote == first.sessions[1] and voted.voter == ""
        assert screen.current[1].id != first.id
