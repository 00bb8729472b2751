"""Scheduler actions (Volcano's `actions:` list), each a class with `execute(session)`."""
