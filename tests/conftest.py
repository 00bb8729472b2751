"""Shared test settings: Hypothesis without per-example deadlines (the machines are shared and
noisy; time is measured in benchmarks/, never asserted in tests); the store's mutation detector
on for every test (store/mutations.py): a component that changes an object the store shares fails
the test that exercises it; and temporary files (a run's pod directories, `vcctl run` in a
subprocess included) under pytest's own temporary directory, which pytest prunes, not in /tmp."""
import os
import tempfile

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


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_pytest(tmp_path_factory):
    base = tmp_path_factory.mktemp("tmp")
    saved_env, saved_dir = os.environ.get("TMPDIR"), tempfile.tempdir
    os.environ["TMPDIR"], tempfile.tempdir = str(base), str(base)
    yield
    tempfile.tempdir = saved_dir
    if saved_env is None:
        os.environ.pop("TMPDIR", None)
    else:
        os.environ["TMPDIR"] = saved_env
