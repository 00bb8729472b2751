"""README.md's statements that name a constant of the code: they are read from the README and compared
with the code, so the README cannot drift from it unnoticed (each row: what the README says, where)."""
from __future__ import annotations

import pathlib
import re

from click.testing import CliRunner

import vclite
from vclite.cli import main as main_mod
from vclite.executor import nodes
from vclite.runtime import gates

README = (pathlib.Path(__file__).resolve().parents[2] / "README.md").read_text()


def _one(pattern: str) -> re.Match:
    found = list(re.finditer(pattern, README, re.S))
    assert len(found) == 1, f"README: {pattern!r} found {len(found)} times"
    return found[0]


def test_the_server_controllers_gate_lists_every_controller_name():
    names = _one(r"`vcctl server --controllers` takes the same gate \(names (.*?);").group(1)
    assert re.findall(r"`([^`]+)`", names) == list(gates.KNOWN)


def test_the_default_node_is_named_as_the_readme_and_its_drain_line_say():
    default = _one(r"By default there is one node, `([^`]+)`").group(1)
    assert default == nodes.host_node()["metadata"]["name"]
    assert _one(r"\nkubectl drain (\S+) ").group(1) == default


def test_the_version_flag_prints_what_the_readme_quotes():
    quoted = _one(r"\(`vcctl --version` prints one line, `([^`]+)`\)").group(1)
    result = CliRunner().invoke(main_mod.cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == quoted.replace("0.1.0", vclite.__version__) + "\n"


def test_a_server_sigterm_fails_running_pods_with_the_reason_the_readme_names():
    from vclite.executor import executor, recovery
    assert _one(r"A\s+SIGTERM\s+\(a\s+clean\s+stop\)\s+is\s+a\s+node\s+shutdown:\s+it\s+stops\s+every\s+pod"
                r"\s+first\s+and\s+fails\s+it\s+with\s+reason\s+`([^`]+)`").group(1) == executor.SHUTDOWN_REASON
    assert _one(r"\(reason\s+`([^`]+)`,\s+exit\s+code\s+137;").group(1) == recovery.PROCESS_LOST
