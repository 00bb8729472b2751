"""What `vcctl version` prints: Volcano's version.Info lines, with Python where Volcano names Go.

Volcano's binaries get their version, git SHA and build time from the linker and print `Not
provided.` for what it did not set; vclite has its package version and no build stamp, so the
SHA and build time say the same. Pure: the caller passes the interpreter's facts.
"""
from __future__ import annotations

API_VERSION = "v1alpha1"
NOT_PROVIDED = "Not provided."
# platform.machine() -> Go's GOARCH, so `OS/Arch` reads as Volcano's does (`linux/amd64`).
GO_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "386",
           "i686": "386", "armv7l": "arm", "armv6l": "arm", "ppc64le": "ppc64le", "s390x": "s390x",
           "riscv64": "riscv64"}
GO_OS = {"win32": "windows", "cygwin": "windows"}


def info(version: str, python_version: str, platform: str, machine: str) -> list[str]:
    """Volcano's version.Info(apiVersion), one line each."""
    os_name = GO_OS.get(platform, platform.rstrip("0123456789"))   # (`freebsd14` -> `freebsd`)
    arch = GO_ARCH.get(machine.lower(), machine.lower())
    return [f"API Version: {API_VERSION}", f"Version: {version}", f"Git SHA: {NOT_PROVIDED}",
            f"Built At: {NOT_PROVIDED}", f"Python Version: {python_version}", f"Python OS/Arch: {os_name}/{arch}"]
