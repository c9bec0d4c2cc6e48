"""`python -m proactive_tui` is the same as the `proactive-tui` console script."""

from proactive_tui.cli.main import main

raise SystemExit(main())
