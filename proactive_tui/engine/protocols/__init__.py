"""One module per family protocol, each a SessionBase subclass that emits events."""
