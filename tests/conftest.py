"""Shared test settings: Hypothesis without per-example deadlines (the machines are shared and
noisy; time is measured in benchmarks/, never asserted in tests), and the store's mutation
detector on for every test (store/mutations.py): a component that changes an object the store
shares fails the test that exercises it."""
import os

import pytest
from hypothesis import settings

os.environ.setdefault("VCLITE_CHECK_MUTATIONS", "1")

from vclite.store import mutations  # noqa: E402  (after the environment is set)

settings.register_profile("vclite", deadline=None, print_blob=True)
settings.load_profile("vclite")


@pytest.fixture(autouse=True)
def _shared_objects_unchanged():
    yield
    mutations.check_all_live()
