"""`vcctl version`: Volcano's version.Info lines (Python where Volcano names Go); `--version` stays."""
import platform
import sys

import pytest
from click.testing import CliRunner

import vclite
from vclite.cli import main as main_mod
from vclite.cli import version


@pytest.mark.parametrize("platform_, machine, os_arch", [
    pytest.param("linux", "x86_64", "linux/amd64", id="linux-amd64"),
    pytest.param("linux", "aarch64", "linux/arm64", id="linux-arm64"),
    pytest.param("darwin", "arm64", "darwin/arm64", id="darwin-arm64"),
    pytest.param("win32", "AMD64", "windows/amd64", id="windows"),
    pytest.param("freebsd14", "i686", "freebsd/386", id="freebsd-386"),
    pytest.param("linux", "loongarch64", "linux/loongarch64", id="unknown-arch-as-is"),
])
def test_info_lines_are_volcanos(platform_, machine, os_arch):
    assert version.info("1.2.3", "3.12.1", platform_, machine) == [
        "API Version: v1alpha1", "Version: 1.2.3", "Git SHA: Not provided.", "Built At: Not provided.",
        "Python Version: 3.12.1", f"Python OS/Arch: {os_arch}"]


def test_vcctl_version_prints_this_interpreter_and_package():
    result = CliRunner().invoke(main_mod.cli, ["version"])
    assert result.exit_code == 0
    assert result.output.splitlines() == version.info(vclite.__version__, platform.python_version(), sys.platform,
                                                      platform.machine())
    assert result.output.splitlines()[1] == f"Version: {vclite.__version__}"


def test_dash_dash_version_still_prints_the_version_alone():
    result = CliRunner().invoke(main_mod.cli, ["--version"])
    assert (result.exit_code, result.output) == (0, f"vcctl, version {vclite.__version__}\n")


def test_version_help_keeps_volcanos_line_and_example():
    lines = CliRunner().invoke(main_mod.cli, ["version", "--help"]).output.splitlines()
    assert lines[2] == "  Print the version information" and "    vcctl version" in lines
