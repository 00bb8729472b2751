"""What a `vcctl` command imports before it works: help and light commands stay quick.

Each case runs the real `vcctl` entry point in a fresh interpreter and lists the heavy modules it
loaded (the scheduler's plugins, NumPy, the HTTP stack, the control plane). Listing a group's
commands must not import them (`vcctl --help` used to load everything: about a second of CPU).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import click
from click.testing import CliRunner
import pytest

from tests import jobs_yaml
from vclite.cli import main as main_mod
from vclite.scheduler import registry

PROBE = """
import json, os, sys
fd, heavy = int(sys.argv[3]), json.loads(sys.argv[2])
real_exit = os._exit

def report(code=0):
    loaded = sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
    os.write(fd, json.dumps(loaded).encode())
    real_exit(code)

os._exit = report   # (`vcctl run` ends with os._exit)
from vclite.cli.main import main
sys.argv = ["vcctl", *json.loads(sys.argv[1])]
try:
    main()
except SystemExit:
    pass
report()
"""

HEAVY = ["numpy", "aiohttp", "rich", "vclite.runtime.runtime", "vclite.httpserver", "vclite.cli.run",
         "vclite.cli.server", "vclite.cli.scheduler_cmd", "vclite.cli.dryrun", "vclite.scheduler.framework", "vclite.cli.controller", "vclite.cli.groups",
         "vclite.scheduler.plugins.deviceshare", "vclite.scheduler.plugins.numa_aware",
         "vclite.scheduler.plugins.usage", "vclite.scheduler.plugins.extender"]


def heavy_modules_loaded(argv: list[str], cwd: str) -> list[str]:
    """The HEAVY modules (or their submodules) that `vcctl ARGV` imported."""
    read, write = os.pipe()
    proc = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY), str(write)], cwd=cwd,
                          pass_fds=(write,), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    assert data, proc.stderr
    return json.loads(data)


@pytest.mark.parametrize("argv, allowed", [
    pytest.param(["--help"], [], id="vcctl --help"),
    pytest.param(["--version"], [], id="vcctl --version"),
    pytest.param(["version"], [], id="vcctl version"),
    pytest.param(["server", "--help"], ["vclite.cli.server"], id="server --help"),
    pytest.param(["scheduler", "--help"], ["vclite.cli.scheduler_cmd"], id="scheduler --help"),
    pytest.param(["scheduler", "dry-run", "--help"], ["vclite.cli.scheduler_cmd"], id="scheduler dry-run --help"),
    pytest.param(["run", "--help"], [], id="run --help"),
    pytest.param(["validate", "--help"], [], id="validate --help"),
    pytest.param(["jobflow", "list", "-s", "http://127.0.0.1:9"], ["vclite.cli.groups"], id="jobflow list"),
    pytest.param(["job", "list", "-s", "http://127.0.0.1:9"], ["vclite.cli.groups"], id="job list"),
])
def test_help_and_light_commands_load_nothing_heavy(argv, allowed, tmp_path):
    loaded = heavy_modules_loaded(argv, str(tmp_path))
    assert [m for m in loaded if m not in allowed] == []


def test_a_piped_default_run_loads_only_the_configured_plugins_and_no_drawing(tmp_path):
    job = tmp_path / "one.yaml"
    job.write_text(jobs_yaml.vcjob("one", ["true"]))
    loaded = heavy_modules_loaded(["run", "--workdir", str(tmp_path / "work"), str(job)], str(tmp_path))
    assert "vclite.runtime.runtime" in loaded   # (it did run)
    assert [m for m in loaded if m.startswith("vclite.scheduler.plugins.")] == []
    assert [m for m in loaded if m.split(".")[0] in ("rich", "aiohttp")] == []   # (piped: no live view)


@pytest.mark.parametrize("name", sorted(main_mod.LazyGroup.lazy_help))
@pytest.mark.parametrize("width", [30, 45, 60, 80, 200])
def test_listed_help_is_the_commands_own(name, width):
    real = main_mod.cli.get_command(click.Context(main_mod.cli), name)
    listed = click.Command(name, help=main_mod.LazyGroup.lazy_help[name])
    assert listed.get_short_help_str(width) == real.get_short_help_str(width)


def test_every_lazy_command_has_a_listed_help():
    assert set(main_mod.LazyGroup.lazy_help) == set(main_mod.LazyGroup.lazy)


@pytest.mark.parametrize("table, package", [
    pytest.param(registry.PLUGIN_MODULES, "plugins", id="plugins"),
    pytest.param(registry.ACTION_MODULES, "actions", id="actions"),
])
def test_each_registered_name_imports_the_class_of_that_name(table, package):
    reg = registry.default_registry()
    lookup = reg.plugin if package == "plugins" else reg.action
    for name in table:
        assert lookup(name).name == name


def test_registry_names_every_volcano_name_without_importing():
    reg = registry.default_registry()
    assert set(registry.VOLCANO_PLUGINS) <= set(reg.plugins)
    assert set(registry.VOLCANO_ACTIONS) <= set(reg.actions)


def test_a_misnamed_table_entry_is_an_error():
    table = registry.LazyTable("vclite.scheduler.plugins", {"not-gang": "gang:Gang"})
    with pytest.raises(ValueError, match="named 'gang', registered as 'not-gang'"):
        table["not-gang"]


@pytest.mark.parametrize("typed, says", [
    pytest.param("schedulr", "No such command 'schedulr'. Did you mean 'scheduler'?", id="a lazy command"),
    pytest.param("jobflw", "No such command 'jobflw'. (Did you mean one of: 'job', 'jobflow'?)", id="two close names"),
    pytest.param("valdate", "No such command 'valdate'. Did you mean 'validate'?", id="a command loaded at start"),
    pytest.param("zzz", "No such command 'zzz'.\n", id="nothing close"),
])
def test_a_mistyped_command_is_told_the_close_names_lazy_ones_included(typed, says):
    """click suggests among the commands it has loaded only: a lazy one was never suggested (`vcctl schedulr`
    said only `No such command`)."""
    result = CliRunner().invoke(main_mod.cli, [typed])
    assert result.exit_code == 2
    assert says in result.stderr, result.stderr
