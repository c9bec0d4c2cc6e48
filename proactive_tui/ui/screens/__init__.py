"""One screen per module: the picker, the environment detail modal and the help modal."""
