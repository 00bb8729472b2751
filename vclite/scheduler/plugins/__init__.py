"""Scheduler plugins (Volcano's `tiers[].plugins[]`), each a class with typed `Arguments` that
registers extension-point functions when a session opens."""
