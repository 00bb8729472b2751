"""A real `vcctl server` (one 4-cpu node) for a module of client-command tests."""
import pytest

from tests import vcctl_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with vcctl_server.running(tmp_path_factory.mktemp("vclite"), "--nodes", "1x(cpu=4,memory=8Gi)") as srv:
        yield srv
