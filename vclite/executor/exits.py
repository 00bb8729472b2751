"""Container exits written down where a restarted server finds them: the exit journal.

A container's process is the server's child, and only a parent can read how a process ended: when the server
is killed (kill -9, a crash), a container that ends afterwards — or that ended just before, its status not yet
written — would be lost to it, and the next start could only fail its pod as ProcessLost (recovery.py). So each
container's program runs under a small /bin/sh wrapper (its parent, the process group's leader, which outlives
the server) that waits for it and appends one line to the executor's journal, `<workdir>/.exits`:

    <pod uid>/<container>/<run> <exit code> <seconds since boot>

(`run`: the container's restartCount while that process ran). recovery.py takes a recorded exit over ProcessLost,
and a restarted server takes over a pod whose wrappers still run (recovery.adoption): it watches each wrapper (the
session leader, named by its command line) and reads its code here when it exits. The wrapper changes nothing a
container sees: its program is exec'd from a subshell (the same pid count as before: the shell forks, the subshell
becomes the program), with the log as stdout and stderr and the pod's stdin; the shell's SIGTERM/SIGINT/SIGHUP trap
is not inherited (caught signals are reset at exec), so a stop's SIGTERM reaches the program, which may take its
grace period while the shell waits; the shell's own words (`Terminated` when a signal ends the program) go to
/dev/null; it exits with the program's code (128+N for a signal N, the code the runner took from a signal before). A
process group killed with SIGKILL (the grace period's end, an OOM kill, a restarted server's clean-up) takes the
wrapper with it: nothing is recorded, as nothing ended by itself.

The wrapper is used only where exec cannot fail differently: the program resolves (a path, else the container's
PATH) to an executable file that starts with `#!` or is ELF; otherwise the program is started directly, and a start
error is runc's words as before (runner.start_error_message). Costs: one exec of /bin/sh per container start, one
append to a file that exists per exit. The journal is rewritten at each start of the executor, with only the records
of pods still to recover (and of pods of nodes it does not run) — but not while a wrapper left behind still runs
(taken over, or another node's pod's): it may append at any time, into a file it opened before. Only an executor on
a durable store (a server: its pods may be recovered by the next start) records exits; `vcctl run` starts programs
directly.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import os
import pathlib
import time
from typing import Callable, Iterable, Mapping

JOURNAL = ".exits"
SHELL = "/bin/sh"
WRAPPER_NAME = "vclite-exit"   # the wrapper's $0 (what `ps` shows after /bin/sh -c)
# $1: the run's key, $2: the journal; then the program and its arguments
SCRIPT = ('k=$1 j=$2; shift 2; trap : TERM INT HUP; exec 3>&2 2>/dev/null; (exec "$@" 2>&3 3>&-); rc=$?; '
          'read -r up _ </proc/uptime; { echo "$k $rc $up" >>"$j"; } 2>/dev/null; exit $rc')
_MAGIC = (b"#!", b"\x7fELF")


def run_key(uid: str, container: str, run: int) -> str:
    return f"{uid}/{container}/{run}"


@dataclasses.dataclass(frozen=True)
class Exit:
    code: int
    finished_at: dt.datetime | None   # None: not known (the host restarted since)


def resolve(program: str, env: Mapping[bytes, bytes], cwd: os.PathLike | str,
            locate: Callable[[str], str] | None = None, executable: bool = True) -> str | None:
    """The file exec would run for `program`, as execvpe looks it up (a name with a slash: from `cwd`); `locate`
    maps a path of the program's view (mountview.py: `cwd` is in it too) to the host's."""
    if "/" in program:
        candidates = [os.path.join(cwd, program)]
    else:
        path = env.get(b"PATH", os.defpath.encode()).decode(errors="surrogateescape")
        candidates = [os.path.join(d or ".", program) for d in path.split(":")]
    if locate is not None:
        candidates = [locate(os.path.normpath(os.path.join(cwd, c))) for c in candidates]
    for c in candidates:
        if os.path.isfile(c) and (not executable or os.access(c, os.X_OK)):
            return c
    return None


def _starts_right(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(4)
    except OSError:
        return False
    return head.startswith(_MAGIC)


def wrap(argv: list[str], env: Mapping[bytes, bytes], cwd: os.PathLike | str, journal: pathlib.Path,
         key: str, locate: Callable[[str], str] | None = None) -> list[str]:
    """`argv` under the wrapper that records its exit as `key` in `journal`; `argv` itself where exec could
    fail (then Popen says why, as before) or there is no /bin/sh (`locate`: as for resolve)."""
    if not argv or not os.path.exists(SHELL):
        return argv
    program = resolve(argv[0], env, cwd, locate)
    if program is None or not _starts_right(program):
        return argv
    return [SHELL, "-c", SCRIPT, WRAPPER_NAME, key, str(journal), *argv]


def _boot_time() -> tuple[float, float] | None:
    """(seconds since boot now, the time of the boot as a Unix time), from /proc/uptime."""
    try:
        with open("/proc/uptime") as fh:
            up = float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return up, time.time() - up


def read(journal: pathlib.Path) -> dict[str, Exit]:
    """Every exit the journal records (the last one of a key); lines it cannot read are left out."""
    try:
        text = journal.read_text(errors="replace")
    except OSError:
        return {}
    boot = _boot_time()
    found: dict[str, Exit] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 or not parts[1].isdigit():
            continue
        try:
            up = float(parts[2])
        except ValueError:
            up = -1.0
        at = None
        if boot is not None and 0 <= up <= boot[0]:   # (more than the uptime now: the host restarted since)
            at = dt.datetime.fromtimestamp(boot[1] + up, dt.timezone.utc)
        found[parts[0]] = Exit(int(parts[1]), at)
    return found


def rewrite(journal: pathlib.Path, exits: Mapping[str, Exit], uids: Iterable[str]) -> None:
    """The journal again, with the records of the pods `uids` only (those still to recover), boot seconds kept as
    read; made if missing (the wrapper only appends to a file that exists)."""
    keep = {u + "/" for u in uids}
    boot = _boot_time()
    lines = []
    for key, ex in exits.items():
        if any(key.startswith(u) for u in keep):
            up = (ex.finished_at.timestamp() - boot[1]) if ex.finished_at is not None and boot else -1.0
            lines.append(f"{key} {ex.code} {up:.2f}\n")
    journal.parent.mkdir(parents=True, exist_ok=True)
    tmp = journal.with_name(journal.name + ".tmp")
    tmp.write_text("".join(lines))
    os.replace(tmp, journal)
