"""Recovering pods whose processes a previous vclite process started (the server restarted after a crash).

A running pod is **adopted** where it can be: its containers carry on as if nothing happened, as a kubelet's do when
the control plane restarts. A container process the previous server started is not our child, so its exit status
cannot be read (waitpid only reaps children) — but under a server each program runs under the exit journal's wrapper
shell (exits.py), which outlives the server and records how the program ended. So a pod whose every running
container's wrapper is alive (or has recorded its end) is taken over (`adoption`): the new runner watches each
wrapper through a pidfd (processes.adopt) and, when it exits, takes the code from the journal (none recorded: the
group was killed, exit code 137). The rule, a pure decision: the pod is Running (a pod being deleted too: its stop
goes on with what is left of its grace period), its init containers have all exited 0, every app container has run
(running, terminated, or backing off; or the pod is Pending with no init containers, its start never written:
killed just after its processes started), each one the status shows running has its current run's wrapper alive
or recorded in the journal (one it shows not started may have a first run's wrapper, or none and no start mark:
the runner starts it), and every process group left behind for the pod is such a wrapper (`wrapper_run`: its
command line names the run and this executor's journal) or carries the owner mark of one of its runs (`marked_run`,
strays.py: a process the container started in a session of its own — a daemon, torchrun's workers —, a `kubectl
exec`: one of a run taken over is left alone, to go when its container ends; one of an ended run is killed).
Anything else — a program started directly (no wrapper: exec would fail differently), a pod still in its init
containers, a process gone with nothing recorded — is failed cleanly instead:
when the executor starts:
- every process group the previous server left behind for one of our pods is killed — a session
  leader whose environment names a pod directory under our work directory (`VC_POD_DIR`) and whose
  parent is not this process (so our own live containers are never touched) — and waited for (up to
  KILL_WAIT seconds): a process may take a while to exit (a GPU's memory is freed as it does), and the pod
  that gets its GPU next must not start before;
- a pod that was started (status shows a start time or a container that ran, a left-behind
  process was found, or its directory holds its start mark — runner.mark_started, written before its
  first process starts, so a pod whose status was never written is not run a second time) and is not
  finished gets its final status: every container that was running (or, with no status written, that
  starts first)
  is terminated with exit code 137 and reason `ProcessLost`, one backing off stays terminated with
  its last exit, one never started stays waiting; the phase follows the usual rule (Succeeded if
  every container had already exited 0, else Failed with pod reason `ProcessLost`). A container whose end
  the exit journal recorded (exits.py: its process ended by itself while no server ran, or before its status was
  written) ends as it did instead, with its termination message, and a pod whose containers all ended so ends
  as it would have (no ProcessLost).
The vcjob lifecycle then applies its policies (PodFailed → RestartJob retries the job). Pods bound
but never started are simply started. Pure decisions here; the /proc scan and kill are the only I/O.
(An adopted pod whose container then exits is restarted per its restartPolicy, as before the crash.)
"""
from __future__ import annotations

import datetime as dt
import os
import pathlib
import signal
import time
from typing import Any, Callable, Iterable

from vclite.api import core
from vclite.executor import exits, mountview, podstatus

Obj = dict[str, Any]
PROCESS_LOST = "ProcessLost"
LOST_EXIT_CODE = 137   # as if killed by SIGKILL
CONTAINER_MESSAGE = "the vclite server restarted while the container ran: its process was lost"
POD_MESSAGE = "the vclite server restarted while the pod ran: its container processes were lost"
POD_DIR_ENV = b"VC_POD_DIR="
KILL_WAIT = 10.0   # seconds the executor's start waits for the processes it killed to exit


def was_started(pod: Obj) -> bool:
    """Whether the status shows the pod's containers were (being) run."""
    status = pod.get("status") or {}
    if status.get("startTime"):
        return True
    for cs in (status.get("initContainerStatuses") or []) + (status.get("containerStatuses") or []):
        state = cs.get("state") or {}
        if "running" in state or "terminated" in state or (cs.get("lastState") or {}).get("terminated"):
            return True
    return False


def _pid(container_id: Any) -> int | None:
    prefix = "vclite://"
    if isinstance(container_id, str) and container_id.startswith(prefix) and container_id[len(prefix):].isdigit():
        return int(container_id[len(prefix):])
    return None


def container_state(container: Obj, cs: Obj | None) -> podstatus.ContainerState:
    """Rebuild a runner's container state from its reported status."""
    st = podstatus.ContainerState(container.get("name", ""), container.get("image", ""))
    if not cs:
        return st
    state = cs.get("state") or {}
    last = (cs.get("lastState") or {}).get("terminated")
    st.restart_count = int(cs.get("restartCount") or 0)
    st.pid = _pid(cs.get("containerID"))
    if "running" in state:
        st.kind, st.reason, st.started_at = podstatus.StateKind.RUNNING, "", (state["running"] or {}).get("startedAt")
        st.last_state = dict(last) if last else None
    elif "terminated" in state:
        st.kind, st.reason, st.terminated = podstatus.StateKind.TERMINATED, "", dict(state["terminated"] or {})
        st.last_state = dict(last) if last else None
    else:
        waiting = state.get("waiting") or {}
        st.reason, st.message = waiting.get("reason") or podstatus.Reason.CREATING, waiting.get("message") or ""
        st.terminated = dict(last) if last else None    # backing off: lastState is the latest exit
    return st


# (container, run) -> how that run of the container ended, as exits.py recorded it: (exit code, finishedAt,
# termination message), or None when nothing was recorded
Ended = Callable[[str, int], "tuple[int, str, str] | None"]


def lost_states(pod: Obj, now: str, ended: Ended | None = None) -> tuple[list[podstatus.ContainerState],
                                                                            list[podstatus.ContainerState]]:
    """The final (init, app) container states of a started pod whose processes were lost; a container whose
    run's end was recorded (`ended`: it ended by itself while no server ran, or before its status was written)
    ends as it did, not ProcessLost."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    unreported = not was_started(pod)   # (started, by its start mark, but killed before its status said so)
    policy = spec.get("restartPolicy") or core.RestartPolicy.ALWAYS
    out = []
    for spec_key, status_key in (("initContainers", "initContainerStatuses"), ("containers", "containerStatuses")):
        reported = {cs.get("name"): cs for cs in status.get(status_key) or []}
        states = [container_state(c, reported.get(c.get("name"))) for c in spec.get(spec_key) or []]
        if unreported and states and (spec_key == "initContainers" or not spec.get("initContainers")):
            for st in states[:1] if spec_key == "initContainers" else states:   # what starts first
                st.start(now, 0)
        for st in states:
            recorded = ended(st.name, st.restart_count) if ended is not None and \
                st.kind == podstatus.StateKind.RUNNING else None
            if recorded is not None and _restarted(policy, spec_key == "initContainers", recorded[0]):
                recorded = None   # (the run that would have followed it was lost)
            if recorded is not None:
                code, finished_at, message = recorded
                st.finish(code, max(finished_at, st.started_at or "") or now, message=message)
            elif st.kind == podstatus.StateKind.RUNNING:
                st.finish(LOST_EXIT_CODE, now, message=CONTAINER_MESSAGE, reason=PROCESS_LOST)
            elif st.kind == podstatus.StateKind.WAITING:
                st.wait(st.reason, st.message)   # backing off: stays terminated; never started: waiting
        out.append(states)
    return out[0], out[1]


# ---- adoption ---------------------------------------------------------------------------------------
def _started_in_status(cs: Obj | None) -> bool:
    state = (cs or {}).get("state") or {}
    return "running" in state or "terminated" in state or bool(((cs or {}).get("lastState") or {}).get("terminated"))


def adoption(pod: Obj, live: dict[str, int], recorded: set[str], unknown_groups: bool,
             marked: Iterable[str] = ()) -> dict[str, int | None] | None:
    """Which of a pod's containers a restarted executor takes over, or None when the pod cannot be adopted (then
    it is recovered as lost). `live`: run key (exits.run_key) -> pid of each wrapper left behind for the pod;
    `recorded`: the run keys the exit journal has an end for; `unknown_groups`: a process group was left behind
    for the pod that is no wrapper of this executor's journal. Returns container -> the pid of its running
    wrapper (None: its run ended while no server ran, as recorded), for every app container the status shows
    running or whose first run was started with its status not yet written (a container the status shows
    neither, with no wrapper nor record, was never started: the runner starts it — unless it is `marked`, its log
    carrying the pod's start mark, runner.mark_started: it did start, and how it ended is not known)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    md = pod.get("metadata") or {}
    if unknown_groups:
        return None
    running = status.get("phase") == core.PodPhase.RUNNING
    if not running and (status.get("phase") not in (None, "", core.PodPhase.PENDING) or was_started(pod)
                        or spec.get("initContainers")):
        return None   # (only a pod started with its status not yet written is adopted from Pending)
    uid = md.get("uid") or ""
    inits = {cs.get("name"): cs for cs in status.get("initContainerStatuses") or []}
    for c in spec.get("initContainers") or []:
        term = ((inits.get(c.get("name")) or {}).get("state") or {}).get("terminated")
        if not term or term.get("exitCode") != 0:
            return None
    apps = {cs.get("name"): cs for cs in status.get("containerStatuses") or []}
    plan: dict[str, int | None] = {}
    for c in spec.get("containers") or []:
        name = c.get("name", "")
        cs = apps.get(name) or {}
        shown_running = "running" in (cs.get("state") or {})
        if not shown_running and _started_in_status(cs):
            continue   # (ended, or backing off: the runner goes on from there)
        key = f"{uid}/{name}/{int(cs.get('restartCount') or 0) if shown_running else 0}"
        if key in live:
            plan[name] = live[key]
        elif key in recorded:
            plan[name] = None
        elif shown_running or name in marked:
            return None   # (its process is gone and nothing says how it ended)
    if set(live.values()) - {pid for pid in plan.values() if pid is not None}:
        return None   # (a wrapper of a run the status does not show: a restart whose start was never written)
    if not running and not plan:
        return None   # (its start was marked, but no process of it ran: recovered as lost, never run twice)
    return plan


def process_started_at(pid: int) -> dt.datetime | None:
    """When the process `pid` started (its /proc stat's start time after the boot), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            ticks = int(fh.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime") as fh:
            up = float(fh.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return dt.datetime.fromtimestamp(time.time() - up + ticks / os.sysconf("SC_CLK_TCK"), dt.timezone.utc)


def marked_run(marks: Iterable[str], pod_owner: str, uid: str) -> str | None:
    """The run key (exits.run_key) of the pod's run that the owner marks `marks` (strays.py, of a process left
    behind in a session of its own: a daemon, a `kubectl exec`) name — `pod_owner` is the pod's part of them —,
    or None: no run of this pod's."""
    for m in reversed(list(marks)):   # (the process's own mark is the last one)
        container, _, run = m[len(pod_owner) + 1:].partition("/") if m.startswith(pod_owner + "/") else ("", "", "")
        if container and run.isdigit():
            return exits.run_key(uid, container, int(run))
    return None


def _past_view(argv: list[bytes]) -> list[bytes]:
    """A command line past mountview's script (`python -I -S …/mountview.py SPEC -- PROGRAM…`): a process killed
    with its server while it was still making the container's view, before it exec'd the wrapper, is that wrapper
    all the same (it goes on to exec it)."""
    if len(argv) > 4 and argv[1:3] == [b"-I", b"-S"] and os.path.basename(argv[3]) == b"mountview.py":
        try:
            return [os.fsencode(a) for a in mountview.parse([os.fsdecode(a) for a in argv[4:]])[2]]
        except (ValueError, IndexError):
            return argv
    return argv


def wrapper_run(pid: int, journal: pathlib.Path) -> str | None:
    """The run key (exits.run_key) of the process `pid` when it is an exit journal wrapper (exits.py) recording
    into `journal` (or about to exec one: _past_view), else None."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
    except OSError:
        return None
    if argv and argv[-1] == b"":
        argv.pop()
    argv = _past_view(argv)
    if len(argv) < 6 or argv[1] != b"-c" or argv[3] != exits.WRAPPER_NAME.encode():
        return None
    if os.fsdecode(argv[5]) != str(journal):
        return None
    return os.fsdecode(argv[4])


def wrapper_launch(pid: int) -> tuple[list[str], dict[bytes, bytes], str] | None:
    """How the exit journal's wrapper `pid` (exits.py) started its program: (its command line, the environment it
    was given, its working directory), or None (gone, not readable, not a wrapper)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    if argv and argv[-1] == b"":
        argv.pop()
    argv = _past_view(argv)
    if len(argv) < 7 or argv[1] != b"-c" or argv[3] != exits.WRAPPER_NAME.encode():
        return None
    pairs = (item.partition(b"=") for item in env.split(b"\0") if item)
    return [os.fsdecode(a) for a in argv[6:]], {k: v for k, _, v in pairs}, cwd


def process_env(pid: int, names: Iterable[str]) -> dict[str, str]:
    """The variables `names` of the process `pid`'s environment (those it has)."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
    except OSError:
        return {}
    wanted = {os.fsencode(n) + b"=": n for n in names}
    found: dict[str, str] = {}
    for item in env.split(b"\0"):
        name = wanted.get(item.partition(b"=")[0] + b"=")
        if name is not None:
            found[name] = os.fsdecode(item.partition(b"=")[2])
    return found


def _restarted(policy: str, init: bool, code: int) -> bool:
    """Whether the kubelet would have run the container again after it exited `code`."""
    if init:
        return code != 0 and policy != core.RestartPolicy.NEVER
    return policy == core.RestartPolicy.ALWAYS or (policy == core.RestartPolicy.ON_FAILURE and code != 0)


def lost_phase(init: list[podstatus.ContainerState], main: list[podstatus.ContainerState]) -> core.PodPhase:
    return podstatus.pod_phase(init, main, finished=True)


def processes_lost(init: list[podstatus.ContainerState], main: list[podstatus.ContainerState]) -> bool:
    """Whether the pod's end was the lost processes' (reason ProcessLost): a container lost, or one that never
    ran because the server was gone (a recorded end of every container that ran is the pod's own end)."""
    states = init + main
    return any((c.terminated or {}).get("reason") == PROCESS_LOST for c in states) or \
        (lost_phase(init, main) == core.PodPhase.FAILED and any(c.kind != podstatus.StateKind.TERMINATED
                                                                for c in states))


# ---- processes left behind (I/O) -------------------------------------------------------------------
def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, session id) of a live, non-zombie process, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] in (b"Z", b"X"):
        return None
    return int(fields[1]), int(fields[3])


def _pod_dir_of(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            env = fh.read()
    except OSError:
        return None
    for item in env.split(b"\0"):
        if item.startswith(POD_DIR_ENV):
            return item[len(POD_DIR_ENV):].decode(errors="replace")
    return None


def left_behind(workdir: pathlib.Path) -> dict[str, list[int]]:
    """Container process groups not started by this process whose pod directory is under `workdir`:
    pod directory -> session leader pids. Empty where /proc is not available."""
    root = pathlib.Path("/proc")
    if not root.is_dir():
        return {}
    base, me = str(workdir).rstrip("/") + "/", os.getpid()
    found: dict[str, list[int]] = {}
    for entry in root.iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        st = _stat(pid)
        if st is None or st[1] != pid or st[0] == me:   # not a session leader, or our own child
            continue
        pod_dir = _pod_dir_of(pid)
        if pod_dir and pod_dir.startswith(base):
            found.setdefault(pod_dir, []).append(pid)
    return found


def kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def live_groups(pgids: set[int]) -> set[int]:
    """The process groups of `pgids` that still have a process not yet a zombie (one that may still hold memory
    or a GPU: a process lets them go as it exits, before it is a zombie). Empty where /proc is not available."""
    live: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return live
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] not in (b"Z", b"X") and int(fields[2]) in pgids:
            live.add(int(fields[2]))
    return live


def wait_gone(pgids: set[int], timeout: float = KILL_WAIT) -> set[int]:
    """Wait until every process of the groups `pgids` (killed) has exited, at most `timeout` seconds; the groups
    still alive then."""
    deadline = time.monotonic() + timeout
    left = live_groups(pgids)
    while left and time.monotonic() < deadline:
        time.sleep(0.01)
        left = live_groups(left)
    return left
