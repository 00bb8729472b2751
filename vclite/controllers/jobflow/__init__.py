"""JobFlow controller (L5): readiness (pure), status (pure), objects (pure), controller (shell)."""
