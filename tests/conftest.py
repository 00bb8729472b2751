"""Shared test settings: Hypothesis without per-example deadlines (the machines are shared and
noisy; time is measured in benchmarks/, never asserted in tests)."""
from hypothesis import settings

settings.register_profile("vclite", deadline=None, print_blob=True)
settings.load_profile("vclite")
