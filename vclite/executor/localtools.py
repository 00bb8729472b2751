"""Stand-ins for the image tools a container's shell script relies on, where the host lacks them. Pure functions.

On a cluster a container runs in its image: Volcano's pytorch plugin (`--wait-master-enabled`) gives each worker
an init container `wait-for-master` (image busybox) whose `sh -c` script polls the master with
`nc -z <master> <port> || echo > /dev/tcp/<master>/<port>`. Locally the script runs on the host: without `nc`,
and with a `sh` that is dash (no `/dev/tcp`), it never sees the master and fails after `--wait-master-timeout`.

So, where a container's command is a shell's `-c` script that calls `nc` and no `nc` is on the process's PATH,
the process is given the script behind a shell function `nc` that checks a TCP port with vclite's own Python
(`nc -z [-w SECONDS] HOST PORT`: exit 0 when a connection opens, 1 otherwise); any other use of it says `nc` is
missing and exits 127, as the shell would. The pod object keeps the command as the plugin wrote it; only the local
process differs. A host with `nc` runs the script as written.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import sys

SHELLS = frozenset({"sh", "bash", "dash", "ash", "ksh", "zsh"})
_CALLS_NC = re.compile(r"(?<![\w./$-])nc(?=\s)")   # `nc` as a command word, not `rsync`, `/x/nc`, `$nc`

# `nc -z [-v] [-w N] HOST PORT` (`-zv` too): connect, close; the shell's function hands over its arguments
_PORT_CHECK = """import socket, sys
args = sys.argv[1:]
if not any(a[:1] == "-" and a[1:2] != "-" and "z" in a for a in args):
    sys.stderr.write("nc: not found (vclite's stand-in only checks a port: nc -z HOST PORT)\\n")
    sys.exit(127)
wait, rest, i = 2.0, [], 0
while i < len(args):
    if args[i] == "-w" and i + 1 < len(args):
        wait, i = float(args[i + 1] or 2), i + 2
        continue
    if not args[i].startswith("-"):
        rest.append(args[i])
    i += 1
try:
    socket.create_connection((rest[0], int(rest[1])), timeout=wait).close()
except (OSError, ValueError, IndexError):
    sys.exit(1)
"""


def nc_function(python: str = sys.executable) -> str:
    """The shell function that stands in for `nc` (POSIX sh syntax)."""
    return f'nc() {{ {shlex.quote(python)} -c {shlex.quote(_PORT_CHECK)} "$@"; }}\n'


def with_stand_ins(argv: list[str], path: str | None) -> list[str]:
    """`argv` as the local process runs it: a shell's `-c` script that calls `nc`, where no `nc` is on `path` (the
    process's PATH), gets the `nc` function first; anything else is returned as it is."""
    if len(argv) < 3 or os.path.basename(argv[0]) not in SHELLS or argv[1] != "-c":
        return argv
    script = argv[2]
    if not _CALLS_NC.search(script) or shutil.which("nc", path=path if path is not None else os.defpath):
        return argv
    return [argv[0], argv[1], nc_function() + script, *argv[3:]]
