"""Command-line entry points. Each subcommand lives in its own module and imports its heavy
dependencies only inside its `run` function, so `--help` and `envs` stay fast."""
