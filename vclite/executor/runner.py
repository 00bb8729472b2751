"""Runs one pod's containers as host processes (see processes.py): the process half of the kubelet.

Layout of a pod's directory `<poddir>` (the executor uses `<workdir>/<namespace>/<pod>/`):
- `logs/<container>.log` — stdout and stderr of the container's current run (a new run of the
  same pod starts a new file, as the kubelet's); `logs/<container>.previous.log` — the run before
  (`kubectl logs --previous`). A pod made again under the same name starts with neither;
  `logs/<container>.log.times` (and `.previous.log.times`) — when the log grew, for a container
  that ran longer than half a second (logtimes.py: `kubectl logs --timestamps`, `--since`);
- `logs/<container>.termination-log` — the container's termination message file, whatever its
  terminationMessagePath says; its path is in `$TERMINATION_MESSAGE_PATH` (removed before each run,
  created by the container if it writes one). After the process exits, its last 4096 bytes (as the kubelet) become
  `state.terminated.message` (with terminationMessagePolicy FallbackToLogsOnError, a missing or empty
  file and a non-zero exit take the log's last 80 lines / 2 KiB);
- `<mountPath>` — each volumeMount, as a symlink: `/etc/volcano` is `$VC_POD_DIR/etc/volcano`, so the
  `worker.host` file Volcano's svc plugin mounts is `$VC_POD_DIR/etc/volcano/worker.host` locally.
  configMap and secret volumes are written as files (keys or `items`, defaultMode / mode applied), emptyDir and
  any other volume type is an empty directory, hostPath is the host path itself (a DirectoryOrCreate one made), and
  a persistentVolumeClaim is its bound volume's path, given by the executor (claims.py: `claims`), taken as a hostPath
  of that path and type (`<workdir>/<namespace>/_pvc/<claim>` for a volume vclite provisioned; with `readOnly: true`
  bound read-only in a container's view). The mount paths `/logs` and `/.vclite` are reserved;
- `.vclite/volumes/<volume>` — emptyDir, configMap and secret volumes (made only for pods that have some).
- `.vclite/root` — an empty directory a container's view of the file system is mounted on, inside its own mount
  namespace (mountview.py; made only for pods with such a container).
Each container log carries the pod's uid as an extended attribute (`user.vclite.pod-uid`: its start, for a
restarted server; `logs/.started` where the file system has no xattrs). Nothing else is created at a
pod's start: a directory or file costs a few hundred microseconds on some disks, and a
pod of a fast chain would pay them on every hop.
The process environment is the host's (as the executor found it when it started), plus VC_POD_DIR,
TERMINATION_MESSAGE_PATH and HOSTNAME (the pod's hostname), plus its GPUs' CUDA_VISIBLE_DEVICES and
NVIDIA_VISIBLE_DEVICES when the run has GPUs (devices.py), plus the container's env (see envvars), plus its
owner mark VCLITE_OWNER (strays.py: the pod's uid and directory, the container, the run), which the container's
env cannot change. Where the container's env, its command line or a ConfigMap volume's file names a pod by its DNS
name (`<hostname>.<subdomain>`, as the svc plugin's hosts do), the process sees 127.0.0.1 (localnames.py). A shell
script that calls `nc` where the host has none (pytorch's wait-for-master) gets a stand-in function (localtools.py).
The working directory is `workingDir` when that is an existing host directory not under a mount;
otherwise `<poddir>/<workingDir>` (created); with no workingDir, `<poddir>`.
A container with a volumeMount, a terminationMessagePath of its own, or a command line that names its termination
message path runs in a view of its own (mountview.py, where the host can make mount namespaces): each volume at its
mountPath, the termination message file at terminationMessagePath (made empty before each run;
$TERMINATION_MESSAGE_PATH names that path then), a workingDir kept in the pod's directory at its own path; the
host's file system everywhere else. Its program is looked up in that view (a start error as exec would give it),
and a `kubectl exec` joins that view (mountview.joined); a view that cannot be made is a StartError naming the field (viewstart.py). Every
StartError comes with the kubelet's Warning Event `Failed`.

Given an exit journal, each program runs under exits.py's /bin/sh wrapper, which records how it ended for
a server restarted after a crash (a program exec cannot start is started directly, to fail as before).

A process's stdin is /dev/null, or for a container with `stdin: true` a pipe the runner keeps open
while it runs, written by `kubectl attach -i` (podattach.py; `stdinOnce` closes it after one client).
Init containers run one at a time, then all app containers at once. Each process starts in its own
session; when it exits, or the pod is stopped, its whole process group is killed (SIGTERM, then
SIGKILL after the grace period), grandchildren included, and so are the processes that left the group
(strays.py: a setsid, a daemon) — at once, waited for, when the container had GPUs or the pod is being
stopped, else by the executor soon after (`unswept`); a container given GPUs ends once all of them have
exited (a process lets a GPU's memory go as it exits: the next pod to get the GPU must find it free).
restartPolicy Always restarts every exit, OnFailure a non-zero exit (init containers restart on failure
unless the pod's policy is Never), waiting `restart_backoff` × 2^restarts (capped at 30 × restart_backoff)
in CrashLoopBackOff.
State changes are reported by calling `on_change(pod_key)`; the caller reads `phase()`, `init`
and `main`. This module knows nothing of the API client.
"""
from __future__ import annotations

import asyncio
import dataclasses
import errno
import os
import pathlib
import posixpath
import shutil
import signal
from typing import Any, Callable, Iterable

from vclite.api import core, meta
from vclite.executor import envvars, exits, logtimes, memory, podattach, podexec, podstatus, processes, recovery
from vclite.executor import localnames, localtools, mountview, strays, viewstart
from vclite.lib import clock as clock_mod

Obj = dict[str, Any]
Path = pathlib.Path

DEFAULT_GRACE = 30.0
MAX_MESSAGE = core.TERMINATION_MESSAGE_LIMIT
FALLBACK_LINES, FALLBACK_BYTES = 80, 2048
START_ERROR_EXIT = 128
RESERVED = ("logs", ".vclite")
# volumes a kubelet always mounts read-only, whatever the volumeMount says (its files are the API's data)
API_DATA_VOLUMES = ("configMap", "secret", "downwardAPI", "projected")
_NSENTER = shutil.which("nsenter")   # util-linux's: a `kubectl exec` joins its container's view (mountview.joined)
VIEW_UNAVAILABLE = "MountPathsNotMapped"   # a Warning Event: the container wanted a view this host cannot give


def unmapped_message(container: Obj, why: str) -> str:
    """The Event's message: where the container's paths are instead."""
    paths = [vm.get("mountPath", "") for vm in container.get("volumeMounts") or []]
    where = (f"its volumeMounts are at $VC_POD_DIR<mountPath> ({', '.join(paths)}), " if paths else "")
    return (f"this host cannot give the container its own mount namespace ({why}): {where}and its termination "
            f"message goes to $TERMINATION_MESSAGE_PATH, not {mountview.termination_path(container)}")
_RESTARTS = {  # restart policy -> does an exit with this code restart the container?
    core.RestartPolicy.ALWAYS: lambda code: True,
    core.RestartPolicy.ON_FAILURE: lambda code: code != 0,
    core.RestartPolicy.NEVER: lambda code: False,
}


ContainerEvent = Callable[[str, str, str, str], None]   # (field path, type, reason, message): an Event to record


def start_error_message(program: str, error: OSError) -> str:
    """Why a container's process could not start, in runc's words (the core of the kubelet's StartError
    message): `exec: "mpiexec": executable file not found in $PATH` for a name the PATH lacks,
    `exec: "/usr/sbin/sshd": stat /usr/sbin/sshd: no such file or directory` for a missing path. An
    error about another file (the working directory) names that file."""
    if error.filename is not None and str(error.filename) != program:
        return f"failed to start {program!r}: {error.strerror or error}: {error.filename}"
    if isinstance(error, FileNotFoundError):
        if "/" not in program:
            return f'exec: "{program}": executable file not found in $PATH'
        return f'exec: "{program}": stat {program}: no such file or directory'
    if isinstance(error, PermissionError):
        return f'exec: "{program}": permission denied'
    return f'exec: "{program}": {(error.strerror or str(error)).lower()}'


def view_exec_error(program: str, env: dict[bytes, bytes], view: mountview.Spec) -> OSError | None:
    """The error exec of `program` would raise in `view` (its PATH, its working directory), or None."""
    if exits.resolve(program, env, view.cwd, lambda path: mountview.host_path(path, view.binds)) is not None:
        return None
    found = exits.resolve(program, env, view.cwd, lambda path: mountview.host_path(path, view.binds), executable=False)
    if found is not None:
        return PermissionError(errno.EACCES, os.strerror(errno.EACCES), program)
    return FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), program)


class NoCommandError(envvars.ConfigError):
    reason = envvars.NO_COMMAND


@dataclasses.dataclass(frozen=True)
class Launch:
    """Everything needed to start one container's process."""

    argv: list[str]
    env: dict[bytes, bytes]   # encoded as the process gets it (subprocess would encode it at every start)
    cwd: Path
    log: Path
    termination_log: Path
    fallback_to_logs: bool
    memory_limit: int | None = None   # resources.limits.memory in bytes (memory.py)
    stdin: bool = False               # `stdin: true`: a pipe kept open for `kubectl attach -i` (podattach.py)
    stdin_once: bool = False          # `stdinOnce: true`: closed when an attached client's stdin ends
    view: mountview.Spec | None = None   # the program's own view of the file system (mountview.py), if it has one

    @property
    def previous_log(self) -> Path:
        return previous_log_of(self.log)

    def command(self, argv: list[str], env: dict[bytes, bytes], report: int | None = None) -> list[str]:
        """`argv` (this launch's program or a command exec'd in its container) as started: in the launch's view
        if it has one. Raises the OSError exec would (a program the view does not have), as Popen would — unless
        given `report`: the script says on it what failed (viewstart.py), a mount before the program."""
        if self.view is None:
            return argv
        problem = view_exec_error(argv[0], env, self.view) if report is None else None
        if problem is not None:
            raise problem
        return mountview.command(self.view, argv, report=report)

    def locate(self) -> Callable[[str], str] | None:
        """A path of the program's view -> the host's (None: no view, the host's own paths)."""
        view = self.view
        return None if view is None else (lambda path: mountview.host_path(path, view.binds))

    def end_message(self, code: int) -> str:
        """The termination message of a run that exited `code`: its file's, else (FallbackToLogsOnError, a failure)
        its log's tail."""
        message = read_message(self.termination_log)
        if not message and code != 0 and self.fallback_to_logs:
            message = log_tail(self.log)
        return message


def _NO_HOSTS(namespace: str, subdomain: str) -> tuple[str, ...]:
    return ()


def _memo(hosts_of: localnames.HostsOf) -> localnames.HostsOf:
    """`hosts_of`, each subdomain asked once (a pod's start reads them all from one moment)."""
    seen: dict[tuple[str, str], Any] = {}

    def hosts(namespace: str, subdomain: str) -> Any:
        key = (namespace, subdomain)
        if key not in seen:
            seen[key] = hosts_of(namespace, subdomain)
        return seen[key]
    return hosts


def _rel(path: str, what: str) -> str:
    rel = posixpath.normpath("/" + str(path)).lstrip("/")
    if not rel or rel == "." or rel.split("/")[0] == "..":
        raise envvars.ConfigError(f"{what} {path!r} cannot be mapped into the pod directory")
    return rel


def make_pod_dirs(pod_dir: Path) -> bool:
    """The pod's directory and its `logs`, in as few system calls as the usual case allows (a new pod
    in a namespace seen before: two mkdirs, where pathlib tries three). True if the pod's directory
    was made now (so it is empty: no old log, termination message or volume to look at)."""
    made = True
    try:
        os.mkdir(pod_dir)
    except FileExistsError:
        if not pod_dir.is_dir():
            raise
        made = False
    except FileNotFoundError:   # the first pod of its namespace (or of the work directory)
        pod_dir.mkdir(parents=True)
    try:
        os.mkdir(pod_dir / "logs")
    except FileExistsError:
        if made or not (pod_dir / "logs").is_dir():
            raise
    return made


# A pod's start, recorded before its status says so: a server killed in between must not run it again.
# The pod's uid goes on each container log as an extended attribute (a few microseconds: the log is
# made anyway); where the file system has none, in the file logs/.started (a new file: slower).
STARTED_XATTR = "user.vclite.pod-uid"
STARTED_MARK = ".started"
_xattrs_work: bool | None = None


def mark_started(log_fd: int, pod_dir: Path, uid: str) -> None:
    """The pod `uid` starts a process whose log is open as `log_fd`."""
    global _xattrs_work
    if _xattrs_work is not False and hasattr(os, "setxattr"):
        try:
            os.setxattr(log_fd, STARTED_XATTR, uid.encode())
            _xattrs_work = True
            return
        except OSError:
            _xattrs_work = False
    (pod_dir / "logs" / STARTED_MARK).write_text(uid)


def started_here(pod_dir: Path, uid: str, containers: Iterable[str]) -> bool:
    """Whether the pod `uid` had a process started in `pod_dir` (mark_started), its status aside."""
    if not uid:
        return False
    logs = pod_dir / "logs"
    for name in containers:
        try:
            if os.getxattr(logs / f"{name}.log", STARTED_XATTR) == uid.encode():
                return True
        except (OSError, AttributeError):
            pass
    try:
        return (logs / STARTED_MARK).read_text() == uid
    except OSError:
        return False


def _replace_if_there(source: Path, target: Path) -> None:
    try:
        os.replace(source, target)
    except FileNotFoundError:   # (the run before never started, so it logged nothing)
        target.unlink(missing_ok=True)


def previous_log_of(log: Path) -> Path:
    """The log of the run before the current one (container names have no dots: no clash)."""
    return log.with_name(log.name[:-len(".log")] + ".previous.log")


def read_message(path: Path, limit: int = MAX_MESSAGE) -> str:
    """The termination message: the file's last `limit` bytes, as the kubelet keeps them (tail.ReadAtMost)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - limit))
            return fh.read(limit).decode(errors="replace")
    except OSError:
        return ""


def log_tail(path: Path) -> str:
    """The last 80 lines / 2 KiB of the log."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.path.getsize(path) - FALLBACK_BYTES * 4))
            data = fh.read()
    except OSError:
        return ""
    lines = data.decode(errors="replace").splitlines()[-FALLBACK_LINES:]
    return "\n".join(lines)[-FALLBACK_BYTES:]


_ENCODED_HOST_ENV: list[tuple[dict[str, str], dict[bytes, bytes]]] = []   # [(host env, encoded)]: the last one


_MARK = os.fsencode(strays.MARK)


def _encode(env: dict[str, str]) -> dict[bytes, bytes]:
    return {os.fsencode(k): os.fsencode(v) for k, v in env.items()}


def _encoded(host_env: dict[str, str]) -> dict[bytes, bytes]:
    """The host environment encoded, once per environment (the executor reads it once per run)."""
    if not _ENCODED_HOST_ENV or _ENCODED_HOST_ENV[0][0] is not host_env:
        _ENCODED_HOST_ENV[:] = [(host_env, _encode(host_env))]
    return _ENCODED_HOST_ENV[0][1]


class PodRunner:
    def __init__(self, pod: Obj, pod_dir: Path, config_maps: dict[str, Obj], clock: clock_mod.Clock,
                 on_change: Callable[[str], None], restart_backoff: float = 10.0,
                 host_env: dict[str, str] | None = None, on_event: ContainerEvent | None = None,
                 device_env: dict[str, dict[str, str]] | None = None, exit_journal: Path | None = None,
                 hosts_of: localnames.HostsOf | None = None,
                 claims: dict[str, tuple[Path, str]] | None = None, spawns: processes.SpawnTurns | None = None):
        """`claims`: claim name -> (its volume's path, hostPath type) of the pod's persistentVolumeClaim volumes
        (claims.resolve); a claim volume not in it cannot be prepared (envvars.ConfigError). `spawns`: the turns
        its process starts wait for (shared by the executor's runners: processes.SpawnTurns)."""
        # (absolute: the mounts' symlinks point into it, and $VC_POD_DIR is read from the container's own
        # working directory — a relative `vcctl run --workdir` left both pointing nowhere)
        self.pod, self.pod_dir, self.key = pod, Path(pod_dir).absolute(), meta.key(pod)
        self._host_env = host_env if host_env is not None else dict(os.environ)
        self._claims = dict(claims or {})
        self._spawns = spawns
        self._inherited_mark = self._host_env.get(strays.MARK)
        self._config_maps, self._clock, self._on_change = config_maps, clock, on_change
        self._on_event = on_event
        self._device_env = device_env or {}   # container -> its GPU variables (executor/devices.py)
        self._backoff = restart_backoff
        self._exit_journal = exit_journal   # each process's exit is recorded there too (exits.py), when given
        self._hosts_of = _memo(hosts_of) if hosts_of is not None else _NO_HOSTS   # pods' DNS names (localnames.py)
        spec = pod.get("spec") or {}
        self.node = spec.get("nodeName")
        try:
            self.restart_policy = core.RestartPolicy(spec.get("restartPolicy") or core.RestartPolicy.ALWAYS)
            self.grace = float(spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE))
        except (ValueError, TypeError) as e:
            raise envvars.ConfigError(f"invalid pod spec: {e}") from None
        inits, apps = spec.get("initContainers") or [], spec.get("containers") or []
        self.init = [podstatus.ContainerState(c.get("name", ""), c.get("image", "")) for c in inits]
        first = podstatus.Reason.INITIALIZING if inits else podstatus.Reason.CREATING
        self.main = [podstatus.ContainerState(c.get("name", ""), c.get("image", ""), reason=first) for c in apps]
        self._specs = {c.get("name", ""): c for c in list(inits) + list(apps)}
        self._run_envs: dict[str, dict[bytes, bytes]] = {}   # container -> its current run's environment
        self.unswept: set[str] = set()   # owners (strays.py) of runs ended whose strays are the executor's to kill
        self._field_paths = {**{c.get("name", ""): f"spec.containers{{{c.get('name', '')}}}" for c in apps},
                             **{c.get("name", ""): f"spec.initContainers{{{c.get('name', '')}}}" for c in inits}}
        self.launches: dict[str, Launch] | None = None
        self._fresh_logs = False
        self._procs: dict[str, processes.Child] = {}
        self._wrapped: set[int] = set()   # process groups led by the exit journal's wrapper shell (exits.py)
        self._execs: dict[str, set[podexec.Session]] = {}   # container -> commands exec'd in it (kubectl exec)
        self._stdins: dict[str, podattach.ContainerStdin] = {}   # container -> its running process's stdin pipe
        self._attached: dict[str, set[podattach.Attachment]] = {}   # container -> clients attached (kubectl attach)
        self._oom: set[str] = set()   # containers killed for using more than their memory limit
        self._adopted: dict[str, tuple[processes.Child | None, str]] = {}   # container -> its adopted run, run key
        self._adopted_ends: dict[str, exits.Exit | None] = {}   # run key -> how an adopted run ended (the journal)
        self._adopted_at = False   # the pod's run was taken over from a previous server (adopt)
        self._stopping = False
        self._stop = asyncio.Event()
        self._done = asyncio.Event()
        self.started = False
        self.finished = False
        self.start_time: str | None = None

    # ---- preparation (synchronous, may raise envvars.ConfigError) ------------------------------------
    def prepare(self, adopting: dict[str, int] | None = None) -> None:
        """Create the pod directory, materialize volumes and resolve every container's launch; `adopting`: the
        pod's processes run already (adopt; container -> its running wrapper's pid): resolve the launches only, its
        directory and volumes as they are (a launch its ConfigMaps cannot give now: `_adopted_launches`)."""
        if self.launches is not None:
            return
        missing = envvars.missing_commands(self.pod)
        if missing:
            raise NoCommandError(envvars.no_command_message(self.pod, missing))
        if adopting is not None:
            sources = self._volume_sources(write=False)
            mounts = self._mount(sources, link=False)
            self.launches = self._adopted_launches(mounts, adopting)
            return
        self._fresh_logs = make_pod_dirs(self.pod_dir)   # (made now: empty, no old log or message to look at)
        sources = self._materialize_volumes(fresh=self._fresh_logs)
        mounts = self._mount(sources)
        self.launches = {name: self._launch(c, mounts) for name, c in self._specs.items()}
        if any(launch.view for launch in self.launches.values()):
            (self.pod_dir / ".vclite" / "root").mkdir(parents=True, exist_ok=True)
        for name, c in self._specs.items():
            if self.launches[name].view is None and mountview.wants_view(c):
                self._event(name, "Warning", VIEW_UNAVAILABLE, unmapped_message(c, mountview.available() or ""))

    def _adopted_launches(self, mounts: dict[str, Path], running: dict[str, int]) -> dict[str, Launch]:
        """An adopted pod's launches (prepare). A ConfigMap, Secret or key a container's environment names may be
        gone since its start (deleted while it ran, as a kubelet lets it run on): a running container's launch is
        then its process's — command line, environment, working directory, as its wrapper started it —, an init
        container (all have ended: none runs again) has none; any other raises envvars.ConfigError."""
        launches: dict[str, Launch] = {}
        inits = {st.name for st in self.init}
        for name, c in self._specs.items():
            try:
                launches[name] = self._launch(c, mounts)
            except envvars.ConfigError:
                started = recovery.wrapper_launch(running[name]) if name in running else None
                if started is not None:
                    argv, env, cwd = started
                    launch = self._launch(c, mounts, env_of=False)
                    # (a process in a view: /proc says where its directory is in that view, not on the host)
                    launches[name] = dataclasses.replace(launch, argv=argv, env=env,
                                                         cwd=Path(cwd) if launch.view is None else launch.cwd)
                elif name not in inits:
                    raise
        return launches

    def _materialize_volumes(self, fresh: bool = False) -> dict[str, Path]:
        """`fresh`: the pod's directory was just made (nothing of an earlier run to clear)."""
        root = self.pod_dir / ".vclite" / "volumes"
        if not fresh and os.path.lexists(root):   # (a pod started again after a restart of vclite)
            shutil.rmtree(root, ignore_errors=True)   # made again below, only if a volume needs it
        return self._volume_sources()

    def _volume_sources(self, write: bool = True) -> dict[str, Path]:
        """Volume name -> its directory; with `write`, made and filled (configMap and secret files)."""
        root = self.pod_dir / ".vclite" / "volumes"
        sources: dict[str, Path] = {}
        for vol in (self.pod.get("spec") or {}).get("volumes") or []:
            name = vol.get("name", "")
            host = vol.get("hostPath") or self._claim_host(vol.get("persistentVolumeClaim"))
            if host:
                sources[name] = Path(host.get("path", "/"))
                if write and host.get("type") == "DirectoryOrCreate":
                    sources[name].mkdir(parents=True, exist_ok=True)
                continue
            d = root / _rel(name, "volume name")
            sources[name] = d
            if not write:
                continue
            d.mkdir(parents=True, exist_ok=True)
            if vol.get("configMap") is not None:
                self._write_config_map(vol["configMap"], d)
            elif vol.get("secret") is not None:
                src = vol["secret"]
                self._write_config_map({**src, "name": src.get("secretName", "")}, d, "secret")
        return sources

    def _claim_host(self, source: Obj | None) -> Obj | None:
        """A persistentVolumeClaim volume source as the hostPath of its volume's data (None: not a claim)."""
        if not isinstance(source, dict):
            return None
        name = source.get("claimName") or ""
        if name not in self._claims:
            raise envvars.ConfigError(f'persistentvolumeclaim "{name}" is not resolved')
        path, type_ = self._claims[name]
        return {"path": str(path), "type": type_}

    def _write_config_map(self, src: Obj, d: Path, ref_kind: str = "configmap") -> None:
        """A configMap (or secret, its `secretName` as `name`) volume's files."""
        cm = self._config_maps.get(envvars.source_name(ref_kind, src.get("name", "")))
        if cm is None:
            if src.get("optional"):
                return
            raise envvars.ConfigError(f'{ref_kind} "{src.get("name", "")}" not found')
        data = envvars.config_map_data(cm)
        mode = int(src.get("defaultMode", 0o644))
        items = src.get("items") or [{"key": k, "path": k} for k in data]
        for item in items:
            if item.get("key") not in data:
                if src.get("optional"):
                    continue
                raise envvars.ConfigError(f"{ref_kind} {src.get('name')!r} has no key {item.get('key')!r}")
            target = d / _rel(item.get("path") or item["key"], f"{ref_kind} item path")
            target.parent.mkdir(parents=True, exist_ok=True)
            value = data[item["key"]]
            if ref_kind == "configmap":   # (a hosts file of the svc plugin names pods: localnames.py)
                value = localnames.localize_bytes(value, meta.namespace(self.pod), self._hosts_of)
            target.write_bytes(value)
            target.chmod(int(item.get("mode", mode)))

    def _mount(self, sources: dict[str, Path], link: bool = True) -> dict[str, Path]:
        """Symlink every volumeMount into the pod directory (`link`; else they are there); returns relative mount
        path -> source."""
        made: dict[str, Path] = {}
        mounts = [(_rel(vm.get("mountPath", ""), "mountPath"), vm) for c in self._specs.values()
                  for vm in c.get("volumeMounts") or []]
        # outer mount points first (/data before /data/cache, whichever the manifest names first): an inner one's
        # symlink is made in the outer volume, as a runtime makes its mount point there
        for rel, vm in sorted(mounts, key=lambda m: m[0].count("/")):
            if rel.split("/")[0] in RESERVED:
                raise envvars.ConfigError(f"mountPath {vm.get('mountPath')!r} is reserved by the local executor "
                                          f"(it keeps {', '.join('/' + r for r in RESERVED)} in the pod directory)")
            if vm.get("name") not in sources:
                raise envvars.ConfigError(f"volumeMount {vm.get('name')!r}: no volume of that name")
            src = sources[vm["name"]]
            if vm.get("subPath"):
                src = src / _rel(vm["subPath"], "subPath")
                if link and not src.exists():
                    src.mkdir(parents=True, exist_ok=True)
            if rel in made:
                if made[rel] != src:
                    raise envvars.ConfigError(f"mountPath {vm.get('mountPath')!r} is used for two volumes")
                continue
            if link:
                self._link(self.pod_dir / rel, src)
            made[rel] = src
        return made

    @staticmethod
    def _link(target: Path, src: Path) -> None:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        elif target.is_dir() and not any(target.iterdir()):
            target.rmdir()
        elif target.exists():
            raise envvars.ConfigError(f"cannot mount at {target}: a file is already there")
        target.symlink_to(src)

    def _launch(self, c: Obj, mounts: dict[str, Path], env_of: bool = True) -> Launch:
        """How to start the container `c` (`env_of`: its environment resolved — ConfigMaps, Secrets —; else only
        what vclite injects, for a launch whose env and command line come from elsewhere: _adopted_launches)."""
        name = c.get("name", "")
        term = self.pod_dir / "logs" / f"{name}.termination-log"
        spec = self.pod.get("spec") or {}
        cwd = self._working_dir(c.get("workingDir"), mounts)
        view = self._view(c, mounts, term, cwd)
        injected = {"VC_POD_DIR": str(self.pod_dir),
                    "TERMINATION_MESSAGE_PATH": mountview.termination_path(c) if view else str(term),
                    "HOSTNAME": spec.get("hostname") or meta.name(self.pod), **self._device_env.get(name, {})}
        if not env_of:
            c = {k: v for k, v in c.items() if k not in ("env", "envFrom")}
        env = self._localized(envvars.container_env(self.pod, c, self._config_maps, injected), injected)
        namespace = meta.namespace(self.pod)
        argv = [localnames.localize(a, namespace, self._hosts_of) for a in envvars.argv(c, env)]
        argv = localtools.with_stand_ins(argv, env.get("PATH", self._host_env.get("PATH")))
        return Launch(argv=argv, env={**_encoded(self._host_env), **_encode(env)},
                      cwd=cwd, log=self.pod_dir / "logs" / f"{name}.log", termination_log=term,
                      fallback_to_logs=c.get("terminationMessagePolicy") == "FallbackToLogsOnError",
                      memory_limit=memory.limit_of(c), stdin=c.get("stdin") is True,
                      stdin_once=c.get("stdinOnce") is True, view=view)

    def _view(self, c: Obj, mounts: dict[str, Path], term: Path, cwd: Path) -> mountview.Spec | None:
        """The container's view of the file system (mountview.py), if it wants one and the host can give it: its
        volumeMounts at their paths, its termination message file at terminationMessagePath, a workingDir kept
        in the pod's directory at its own path."""
        if not mountview.wants_view(c) or mountview.available() is not None:
            return None
        binds = []
        api_data = {v.get("name") for v in (self.pod.get("spec") or {}).get("volumes") or []
                    if any(v.get(kind) is not None for kind in API_DATA_VOLUMES)
                    or (v.get("persistentVolumeClaim") or {}).get("readOnly") is True}   # (and read-only claims)
        for vm in c.get("volumeMounts") or []:
            rel = _rel(vm.get("mountPath", ""), "mountPath")
            source = mounts[rel]
            if not os.path.exists(source):   # (a hostPath with no type the host lacks: its path as it is, missing)
                continue
            read_only = vm.get("readOnly") is True or vm.get("name") in api_data
            if str(source) != "/" + rel or read_only:   # (a hostPath at its own path: as it is)
                binds.append(mountview.Bind(str(source), "/" + rel, read_only))
        binds.append(mountview.Bind(str(term), mountview.termination_path(c)))
        wd = c.get("workingDir")
        if wd and os.path.isabs(wd) and cwd != Path(wd) and not any(
                wd.rstrip("/") == b.target or wd.startswith(b.target + "/") for b in binds):
            binds.append(mountview.Bind(str(cwd), posixpath.normpath(wd)))   # (kept in the pod's directory)
        # vclite's own directories under a volume's mount point (an emptyDir at /tmp, the work directory under /tmp):
        # bound again at their paths on top, so $VC_POD_DIR and the exit journal stay reachable
        for own in {str(self.pod_dir), *([str(self._exit_journal.parent)] if self._exit_journal else [])}:
            if any(own == b.target or own.startswith(b.target.rstrip("/") + "/") for b in binds):
                binds.append(mountview.Bind(own, own))
        in_view = posixpath.normpath(wd) if wd and os.path.isabs(wd) else str(cwd)
        return mountview.Spec(str(self.pod_dir / ".vclite" / "root"), in_view, tuple(binds))

    def _localized(self, env: dict[str, str], injected: dict[str, str]) -> dict[str, str]:
        """The pod's variables with pods' DNS names as 127.0.0.1 (localnames.py); vclite's own as they are."""
        namespace = meta.namespace(self.pod)
        for name, value in env.items():
            if "." in value and injected.get(name) != value:
                env[name] = localnames.localize(value, namespace, self._hosts_of)
        return env

    def _working_dir(self, wd: str | None, mounts: dict[str, Path]) -> Path:
        if not wd:
            return self.pod_dir
        rel = _rel(wd, "workingDir")
        under_mount = any(rel == m or rel.startswith(m + "/") for m in mounts)
        if os.path.isabs(wd) and os.path.isdir(wd) and not under_mount:
            return Path(wd)
        mapped = self.pod_dir / rel
        mapped.mkdir(parents=True, exist_ok=True)
        return mapped

    # ---- running ----------------------------------------------------------------------------------
    def _now(self) -> str:
        return clock_mod.format_time(self._clock.now()) or ""

    def _changed(self) -> None:
        self._on_change(self.key)

    def _event(self, container: str, event_type: str, reason: str, message: str) -> None:
        """An Event about one container, in the kubelet's words."""
        if self._on_event is not None:
            self._on_event(self._field_paths.get(container, ""), event_type, reason, message)

    def phase(self) -> core.PodPhase:
        return podstatus.pod_phase(self.init, self.main, self.finished)

    def alive(self) -> int:
        """How many container processes are running now."""
        return len(self._procs)

    def process_groups(self) -> dict[str, int]:
        """Container name -> the process group of its running processes (`kubectl top`)."""
        return {name: p.pid for name, p in self._procs.items()}

    def wrapped_groups(self) -> set[int]:
        """The process groups of running containers whose leader is the exit journal's wrapper shell (exits.py),
        not the container's program: what it uses is not the container's (usage.add)."""
        return set(self._wrapped)

    def memory_limits(self) -> dict[int, int]:
        """Process group -> memory limit (bytes) of each running container that has one."""
        if not self.launches:
            return {}
        return {p.pid: limit for name, p in self._procs.items()
                if (limit := self.launches[name].memory_limit) is not None}

    def oom_kill(self, group: int) -> None:
        """Kill the running container whose process group this is: it used more than its memory limit
        (it ends OOMKilled, exit code 137, as the kernel's cgroup would have it)."""
        for name, p in list(self._procs.items()):
            if p.pid == group:
                self._oom.add(name)
                _signal_group(p, signal.SIGKILL)

    def running_logs(self) -> list[Path]:
        """The log files of the containers whose processes run now."""
        return [self.launches[name].log for name in self._procs] if self.launches else []

    async def exec(self, container: str, argv: list[str], *, stdin: bool, stdout: bool, stderr: bool,
                   tty: bool) -> podexec.Session:
        """Start `argv` in a running container's context (podexec.py); it is killed when the container's
        process ends. Raises podexec.ExecError if the container does not run now."""
        problem = self.exec_problem(container)
        if problem:
            raise podexec.ExecError(problem)
        assert self.launches is not None
        launch = self.launches[container]
        env = self._run_envs.get(container, launch.env)
        if argv:
            try:
                started = launch.command(argv, env)
            except OSError as e:
                raise podexec.ExecError(podexec.start_error(argv[0], e)) from None
            if launch.view is not None:   # (in the container's own view, where it can: what it wrote there too)
                argv = mountview.joined(self._procs[container].pid, launch.view.cwd, argv, _NSENTER) or started
            else:
                argv = started
        session = await podexec.start(argv, cwd=launch.cwd, env=env, stdin=stdin, stdout=stdout, stderr=stderr,
                                      tty=tty)
        sessions = self._execs.setdefault(container, set())
        sessions.add(session)
        return session

    def exec_problem(self, container: str) -> str | None:
        """Why a command cannot be exec'd in `container` now (the kubelet's words), or None."""
        if container not in self._procs or self._stopping or self.launches is None:
            return f'container not found ("{container}")'
        return None

    def _end_execs(self, container: str) -> None:
        for session in self._execs.pop(container, ()):
            session.kill_left_behind()

    def attach(self, container: str, *, stdin: bool, output: int | None) -> podattach.Attachment:
        """Attach a client to a running container (podattach.py): its output from now on (as stream id
        `output`; None: none), and with `stdin` the container's stdin if it has one. The attachment ends
        with the container's process. Raises podexec.ExecError if the container does not run now."""
        problem = self.attach_problem(container)
        if problem:
            raise podexec.ExecError(problem)
        assert self.launches is not None
        try:
            log = open(self.launches[container].log, "rb")
        except OSError as e:
            raise podexec.ExecError(f"error attaching to container: {e.strerror or e}") from None
        log.seek(0, os.SEEK_END)
        attached = self._attached.setdefault(container, set())
        attachment = podattach.Attachment(log, self._stdins.get(container) if stdin else None, output,
                                          lambda a: self._attached.get(container, set()).discard(a))
        attached.add(attachment)
        return attachment

    def attach_problem(self, container: str) -> str | None:
        """Why a client cannot attach to `container` now (the kubelet's words), or None."""
        if container not in self._procs or self._stopping or self.launches is None:
            return f"container {container} not found in pod {meta.name(self.pod)}_{meta.namespace(self.pod)}"
        return None

    def _end_attaches(self, container: str) -> None:
        """The container's process ended: so does its stdin, and every attachment (after its output)."""
        stdin = self._stdins.pop(container, None)
        if stdin is not None:
            stdin.close()
        for attachment in list(self._attached.pop(container, ())):
            attachment.container_ended()

    # ---- adoption (a previous server's run, recovery.adoption) ---------------------------------------------
    def adopt(self, plan: dict[str, int | None]) -> bool:
        """Take over the pod's run as the previous server left it (recovery.adoption: container -> its running
        wrapper's pid, None for a run that ended meanwhile, as the journal recorded): states from its status,
        launches without touching its directory (its processes use it). run() then awaits each adopted process
        and goes on from there (restarts per policy). False where it cannot (no exit journal, no pidfds). Raises
        envvars.ConfigError as prepare() does."""
        if self._exit_journal is None:
            return False
        status = self.pod.get("status") or {}
        for key, states in (("initContainerStatuses", self.init), ("containerStatuses", self.main)):
            reported = {cs.get("name"): cs for cs in status.get(key) or []}
            states[:] = [recovery.container_state(self._specs.get(st.name) or {}, reported.get(st.name))
                         for st in states]
        self.prepare(adopting={name: pid for name, pid in plan.items() if pid is not None})
        assert self.launches is not None
        by_name = {st.name: st for st in self.main}
        recorded = exits.read(self._exit_journal) if None in plan.values() else {}
        for name, pid in plan.items():
            st = by_name[name]
            run_key = exits.run_key(meta.uid(self.pod), name, st.restart_count)
            if st.kind != podstatus.StateKind.RUNNING:   # (started, its status not yet written: when it started)
                ended = recorded.get(run_key)
                at = recovery.process_started_at(pid) if pid is not None else ended.finished_at if ended else None
                st.start(clock_mod.format_time(at) or self._now(), pid)
            if pid is None:
                self._adopted[name] = (None, run_key)
                continue
            child = processes.adopt(pid, self._journal_code(run_key))
            if child is None:
                for other, _ in self._adopted.values():
                    if other is not None:
                        processes.unwatch(other)
                self._procs.clear()
                self._wrapped.clear()
                return False
            self._adopted[name] = (child, run_key)
            # (running now: kubectl exec, top and the memory check see it at once)
            owner = self._owner(name, st.restart_count)
            self._run_envs[name] = {**self.launches[name].env,
                                    _MARK: os.fsencode(strays.mark(self._inherited_mark, owner))}
            self._procs[name] = child
            self._wrapped.add(child.pid)
        starts = [st.started_at for st in self.main if st.started_at]
        self.started, self.start_time = True, status.get("startTime") or min(starts, default=None) or self._now()
        self._adopted_at = True
        return True

    def _journal_code(self, run_key: str) -> Callable[[], int]:
        """How the adopted run `run_key` ended, asked when its wrapper has exited: its recorded exit code, else
        −SIGKILL (its group was killed: nothing was recorded)."""
        def code() -> int:
            ended = exits.read(self._exit_journal).get(run_key) if self._exit_journal is not None else None
            self._adopted_ends[run_key] = ended
            return ended.code if ended is not None else -signal.SIGKILL
        return code

    async def _await_adopted(self, st: podstatus.ContainerState) -> None:
        """The adopted run of `st` (started by the previous server) to its end, or the end the journal recorded."""
        assert self.launches is not None
        child, run_key = self._adopted.pop(st.name)
        launch = self.launches[st.name]
        owner = self._owner(st.name, st.restart_count)

        def finished_at() -> str | None:
            ended = self._adopted_ends.get(run_key)
            return clock_mod.format_time(ended.finished_at) if ended is not None and ended.finished_at else None
        if child is None:   # (it ended while no server ran: nothing of it is left to wait for)
            code = self._journal_code(run_key)()
            code = code if code >= 0 else recovery.LOST_EXIT_CODE
            self.unswept.add(owner)
            st.finish(code, max(finished_at() or "", st.started_at or "") or self._now(),
                      message=launch.end_message(code))
            return
        await self._await_end(st, child, launch, owner, finished_at)

    def _owner(self, container: str, run: int) -> str:
        """The owner mark (strays.py) of the container's run `run`."""
        return strays.owner(strays.pod_owner(meta.uid(self.pod), self.pod_dir), container, run)

    async def run(self) -> None:
        """Run init containers, then app containers, until none runs or will run again (or stop()); an adopted
        pod's (adopt) carries on from where the previous server left it."""
        resumed = bool(self._adopted_at)
        if not resumed:
            self.prepare()
            self.started, self.start_time = True, self._now()   # reported with the first container's start
        init_policy = core.RestartPolicy.NEVER if self.restart_policy == core.RestartPolicy.NEVER \
            else core.RestartPolicy.ON_FAILURE
        try:
            for st in [] if resumed else self.init:
                if not await self._keep_running(st, init_policy):
                    return
            if len(self.main) == 1:   # (no task of its own: the process starts in this task's first step)
                await self._keep_running(self.main[0], self.restart_policy, resumed)
            else:
                await asyncio.gather(*(self._keep_running(st, self.restart_policy, resumed) for st in self.main))
        finally:
            for st in self.init + self.main:
                if st.kind == podstatus.StateKind.WAITING:
                    st.wait(st.reason, st.message)
            self.finished = True
            self._done.set()
            self._changed()

    async def _keep_running(self, st: podstatus.ContainerState, policy: core.RestartPolicy,
                            resumed: bool = False) -> bool:
        """Run (and restart per `policy`) one container; True if it ended with exit code 0. `resumed`: an adopted
        pod's container (adopt): its adopted run is awaited, or its last exit goes on as if it had just ended."""
        if resumed and st.name in self._adopted:   # (awaited even when a stop came first: it signals it)
            await self._await_adopted(st)
        if resumed and st.kind == podstatus.StateKind.WAITING and st.terminated is None:
            resumed = False   # (never started: the previous server was killed before it started it)
        while not self._stopping:
            if not resumed:
                await self._run_once(st)
            resumed = False
            code = st.exit_code
            if self._stopping or code is None or not _RESTARTS[policy](code):
                break
            delay = min(self._backoff * 2 ** st.restart_count, self._backoff * 30)
            st.back_off(f"back-off {clock_mod.format_duration(delay)} restarting failed container={st.name} "
                        f"pod={meta.name(self.pod)}_{meta.namespace(self.pod)}({meta.uid(self.pod)})")
            self._event(st.name, "Warning", "BackOff", f"Back-off restarting failed container {st.name} in pod "
                                                       f"{meta.name(self.pod)}_{meta.namespace(self.pod)}"
                                                       f"({meta.uid(self.pod)})")
            self._changed()
            try:
                await asyncio.wait_for(self._stop.wait(), timeout=delay)
            except asyncio.TimeoutError:
                pass
        return st.exit_code == 0

    async def _run_once(self, st: podstatus.ContainerState) -> None:
        assert self.launches is not None
        launch = self.launches[st.name]
        if st.terminated is not None:   # a restart: this pod's run before is kept for --previous
            launch.termination_log.unlink(missing_ok=True)   # a message is this run's, never the last one's
            _replace_if_there(launch.log, launch.previous_log)
            _replace_if_there(logtimes.times_path(launch.log), logtimes.times_path(launch.previous_log))
        elif not self._fresh_logs:   # left by an earlier pod of this name (or a run vclite never started)
            for path in (launch.termination_log, launch.log, launch.previous_log,
                         logtimes.times_path(launch.log), logtimes.times_path(launch.previous_log)):
                path.unlink(missing_ok=True)
        stdin = podattach.ContainerStdin(launch.stdin_once) if launch.stdin else None
        # the run's owner mark (strays.py), behind the one vclite inherited; the container's env cannot change it
        run = st.restart_count + (st.terminated is not None)
        owner = self._owner(st.name, run)
        env = self._run_envs[st.name] = {**launch.env, _MARK: os.fsencode(strays.mark(self._inherited_mark, owner))}
        report: int | None = None
        try:
            if self._spawns is not None:
                await self._spawns.take()
            if stdin is not None:
                await stdin.open()
            with open(launch.log, "ab") as log:
                mark_started(log.fileno(), self.pod_dir, meta.uid(self.pod))
                if launch.view is not None:   # (bound at terminationMessagePath: it must be there, and empty)
                    launch.termination_log.write_bytes(b"")
                cwd = launch.view.cwd if launch.view is not None else launch.cwd
                argv = launch.argv if self._exit_journal is None else exits.wrap(
                    launch.argv, env, cwd, self._exit_journal, exits.run_key(meta.uid(self.pod), st.name, run),
                    launch.locate())
                report, report_end = viewstart.pipe() if launch.view is not None else (None, None)
                try:
                    proc = await processes.start(launch.command(argv, env, report_end), cwd=launch.cwd, env=env,
                                                 log=log, stdin=stdin.read_end if stdin is not None else None,
                                                 pass_fds=(report_end,) if report_end is not None else ())
                finally:
                    if report_end is not None:
                        os.close(report_end)
        except OSError as e:
            if report is not None:
                os.close(report)
            self._start_failed(st, stdin, start_error_message(launch.argv[0], e))
            return
        if report is not None:   # (in a view: made, and the program exec'd, or what failed — the run never began)
            failed = await self._view_outcome(proc, report)
            if failed is not None:
                await proc.wait()
                error = viewstart.exec_error(failed)
                self._start_failed(st, stdin, start_error_message(launch.argv[0], error) if error is not None
                                   else viewstart.failure_message(self._specs[st.name], failed, str(self.pod_dir)))
                return
        if argv is not launch.argv:
            self._wrapped.add(proc.pid)
        if stdin is not None:
            stdin.started()
            self._stdins[st.name] = stdin
        self._procs[st.name] = proc
        st.start(self._now(), proc.pid)
        self._changed()
        self._event(st.name, "Normal", "Started", f"Started container {st.name}")   # (no Created: one step here)
        if self._stopping:  # stop() ran while the process was being started: no grace left to give
            _signal_group(proc, signal.SIGKILL)
        await self._await_end(st, proc, launch, owner)

    async def _view_outcome(self, proc: processes.Child, report: int) -> dict | None:
        """viewstart.outcome of the process `proc` making its view; a stop meanwhile kills it (a view stuck on a
        file system that does not answer must not hold the pod's stop)."""
        outcome = asyncio.ensure_future(viewstart.outcome(report))
        stopped = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({outcome, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
        if not outcome.done():
            _signal_group(proc, signal.SIGKILL)   # (its pipe then closes: the outcome is None, the run ends 137)
        return await outcome

    def _start_failed(self, st: podstatus.ContainerState, stdin: podattach.ContainerStdin | None, message: str) -> None:
        """The container's process could not be started: StartError (exit code 128) and, as a kubelet, a Warning
        Event `Failed` saying why."""
        if stdin is not None:
            stdin.close()
        st.finish(START_ERROR_EXIT, self._now(), reason=podstatus.Reason.START_ERROR, message=message)
        self._event(st.name, "Warning", "Failed", f"Error: {message}")
        self._changed()

    async def _await_end(self, st: podstatus.ContainerState, proc: processes.Child, launch: Launch, owner: str,
                         finished_at: Callable[[], str | None] | None = None) -> None:
        """Wait for the run's process to exit, clean up after it, and record how it ended (`finished_at`: when, if
        known better than now — an adopted run that ended while no server ran)."""
        rc = await proc.wait()
        self._procs.pop(st.name, None)
        self._wrapped.discard(proc.pid)
        _signal_group(proc, signal.SIGKILL)  # the container is gone: so is everything it started
        gpus = bool(self._device_env.get(st.name, {}).get("CUDA_VISIBLE_DEVICES"))
        if gpus:
            await _group_gone(proc.pid)      # (its GPUs go to the next pod: not while a process still exits)
        if gpus or self._stopping:           # and what left its group (strays.py): at once, waited for
            await strays.sweep({owner}, recovery.KILL_WAIT)
        else:                                # (or by the executor, with others: a scan of /proc costs)
            self.unswept.add(owner)
        self._end_execs(st.name)             # and what was exec'd in it
        self._end_attaches(st.name)          # its stdin closes, attached clients get the end of its output
        code = rc if rc >= 0 else 128 - rc
        message = launch.end_message(code)
        now = (finished_at() if finished_at is not None else None) or self._now()
        if st.name in self._oom:
            self._oom.discard(st.name)
            st.finish(code, now, message=message or memory.message(launch.memory_limit or 0),
                      reason=podstatus.Reason.OOM_KILLED)
            return
        st.finish(code, now, message=message)
        # no report here: the caller reports next (the back-off, the next container's start, or the end)

    async def stop(self, grace: float | None = None) -> None:
        """Stop the pod: no more restarts; SIGTERM every process group, SIGKILL after `grace` seconds
        (default: the pod's terminationGracePeriodSeconds); return when run() has finished."""
        self._stopping = True
        self._stop.set()
        grace = self.grace if grace is None else grace
        procs = list(self._procs.values())
        for name, p in list(self._procs.items()):
            _signal_group(p, signal.SIGTERM)
            self._event(name, "Normal", "Killing", f"Stopping container {name}")
        if procs:
            await asyncio.wait([asyncio.ensure_future(p.wait()) for p in procs], timeout=max(grace, 0))
            for p in procs:
                if p.returncode is None:
                    _signal_group(p, signal.SIGKILL)
        if self.started:
            await self._done.wait()

    def kill(self) -> None:
        """SIGKILL every process group now (a stop under way stops waiting out its grace period)."""
        for p in list(self._procs.values()):
            _signal_group(p, signal.SIGKILL)
        for name in list(self._execs):
            self._end_execs(name)


async def _group_gone(pgid: int) -> None:
    """Wait until every process of the group has exited (at most recovery.KILL_WAIT seconds)."""
    deadline = asyncio.get_running_loop().time() + recovery.KILL_WAIT
    while recovery.live_groups({pgid}) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.01)


def _signal_group(proc: processes.Child, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
