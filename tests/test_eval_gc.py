"""A batch keeps the heap it starts with (litellm, the planned sessions) out of the collector's reach
while it runs (evalrun/runner.py): a full collection walked litellm's whole heap and stalled every
session for 0.3-0.45 s. It must leave the process as it found it: nothing frozen after it when
nothing was before, and a freeze made before it (the app's) kept."""

from __future__ import annotations

import gc

from proactive_tui.cli.main import main
from proactive_tui.testing.fake_openai import FakeOpenAIServer, proactiveeval_responder
from batch_helpers import eval_argv


def test_a_batch_leaves_the_collector_as_it_found_it(tmp_path, capsys) -> None:
    earlier = gc.get_freeze_count()  # an app test in this process may have frozen: start from none
    gc.unfreeze()
    try:
        with FakeOpenAIServer(responder=proactiveeval_responder()) as server:
            assert main(eval_argv(server, tmp_path / "one", "--concurrency", "2", "--workers", "1")) == 0
            assert gc.get_freeze_count() == 0
            gc.freeze()
            frozen = gc.get_freeze_count()
            assert main(eval_argv(server, tmp_path / "two", "--concurrency", "2", "--workers", "1")) == 0
            assert gc.get_freeze_count() >= frozen > 0
    finally:
        gc.unfreeze()
        if earlier:
            gc.freeze()
    capsys.readouterr()
