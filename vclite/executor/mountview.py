"""A container's own view of the file system: its volumeMounts (and termination message file) at their paths.

On Kubernetes a container sees each volume at its `mountPath` (`/data`, `/etc/volcano/worker.host`,
`/etc/config/app.yaml`) and writes its termination message to `terminationMessagePath`
(`/dev/termination-log`). Run locally, a container is a host process, so those absolute paths would be the
host's own. For a container that has any of them, the runner starts its program through this file (run as a
script, `python -I -S mountview.py SPEC... -- PROGRAM ARGS...`), which gives the process a mount namespace of its
own and execs the program in it, where:

- `/` is a fresh tmpfs that carries every entry of the host's `/` (directories bound from the host, recursively:
  `/usr`, `/home`, `/tmp`, `/proc`, `/dev`…; symbolic links as they are), so everything on the host is where it
  was, and writes to it reach the host;
- each bind (a volume's directory or file, the termination message file, a workingDir kept in the pod's
  directory) is mounted at its path (read-only where the bind says so: the runner's for a volumeMount's `readOnly`
  and for ConfigMap and Secret volumes). A path that does not exist is made: inside another volume, in that
  volume's directory (as runc does); inside a host directory, the directory is shadowed — a tmpfs in its place that
  carries its entries, bound from the host (the volumes already mounted on some of them mounted again), plus the
  new one — so nothing is ever created on the host outside the volumes. A new file written next to such a mount
  point (in `/etc` for `/etc/config`, in `/` for `/data`) lives only in the container's view, as in a container's
  root file system;
- the working directory is the given one (in the view).

The namespace is made with unshare(2): as root only a mount namespace; as another user, a user namespace too
(the user mapped to itself, no other capability kept after exec) where the host allows unprivileged user
namespaces. `available()` tries it once; where it fails the runner starts programs as before (paths unmapped)
and says so. The process tree, signals, network, /proc and exit codes are the host's as before: only what the
paths lead to changes, for the container's process and what it starts (and a `kubectl exec` into it, which
joins it: `joined`, util-linux's nsenter; the same view made again where there is none).

Costs: one Python start (about 15–25 ms) and one mount per entry of each shadowed directory, per container
start — paid only by containers that have a volumeMount or name their termination message path.

Arguments: optionally `--report FD` (a descriptor the script writes what failed to, as JSON — a bind it could not
make, by its target, or the program's exec error — and that the exec closes unwritten: viewstart.py reads it), then
`ROOT CWD`, `--bind SOURCE TARGET` / `--ro-bind SOURCE TARGET` triples, `--` and the program (`encode`/`decode`).
A view that cannot be made exits FAILED (127) after saying why on stderr (the container's log). ROOT is an empty
directory the new root is mounted on (any will do: it is only seen from inside the namespace). Only the standard
library is used here (this file runs before vclite is importable).
"""
from __future__ import annotations

import ctypes
import os
import stat
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_UNBINDABLE, MS_PRIVATE = 32, 4096, 16384, 1 << 17, 1 << 18
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
# statvfs's f_flag bits -> mount(2) flags: a read-only remount must keep the flags the mount has (a user namespace
# may not clear them)
_KEPT_FLAGS = ((1, MS_RDONLY), (2, MS_NOSUID), (4, MS_NODEV), (8, MS_NOEXEC), (1024, MS_NOATIME),
               (2048, MS_NODIRATIME), (4096, MS_RELATIME))
DEFAULT_TERMINATION_PATH = "/dev/termination-log"   # Kubernetes' default terminationMessagePath
OFF = "VCLITE_MOUNT_VIEW"   # set to "off" (in the environment of vclite itself): no views, paths unmapped
MAX_LINKS = 40   # symbolic links followed while resolving one path (the kernel's limit)
FAILED = 127     # the exit code when the view cannot be made or the program cannot be exec'd


class _Value:
    """A plain value (no dataclasses here: importing them would double this script's start-up time)."""
    __slots__: tuple[str, ...] = ()

    def _fields(self) -> tuple:
        return tuple(getattr(self, f) for f in self.__slots__)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self._fields() == other._fields()   # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self._fields()!r}"


class Bind(_Value):
    """`source` (a host directory or file) mounted at `target` (an absolute path in the view)."""
    __slots__ = ("source", "target", "read_only")

    def __init__(self, source: str, target: str, read_only: bool = False):
        self.source, self.target, self.read_only = source, target, read_only


class Spec(_Value):
    """A view: its root's mount point (an empty host directory), working directory (in the view), binds."""
    __slots__ = ("root", "cwd", "binds")

    def __init__(self, root: str, cwd: str, binds: tuple[Bind, ...]):
        self.root, self.cwd, self.binds = root, cwd, tuple(binds)


def encode(spec: Spec) -> list[str]:
    """The script's arguments before `--`."""
    out = [spec.root, spec.cwd]
    for b in spec.binds:
        out += ["--ro-bind" if b.read_only else "--bind", b.source, b.target]
    return out


def decode(args: list[str]) -> tuple[Spec, list[str]]:
    """(the spec, the program and its arguments); ValueError for arguments `encode` cannot have made."""
    if "--" not in args:
        raise ValueError("no '--' before the program")
    end = args.index("--")
    head, program = args[:end], args[end + 1:]
    if len(head) < 2 or (len(head) - 2) % 3 or not program:
        raise ValueError("expected ROOT CWD [--bind|--ro-bind SOURCE TARGET]... -- PROGRAM [ARGS...]")
    binds = []
    for k in range(2, len(head), 3):
        flag, source, target = head[k:k + 3]
        if flag not in ("--bind", "--ro-bind") or not target.startswith("/"):
            raise ValueError(f"bad bind {flag} {source} {target}")
        binds.append(Bind(source, target, flag == "--ro-bind"))
    return Spec(head[0], head[1], tuple(binds)), program


def command(spec: Spec, argv: list[str], python: str = sys.executable, report: int | None = None) -> list[str]:
    """`argv` started in the view `spec`; `report`: a file descriptor (inherited) the script writes what failed to,
    as JSON (`report_of`), and closes unwritten at the program's exec."""
    head = [] if report is None else ["--report", str(report)]
    return [python, "-I", "-S", __file__, *head, *encode(spec), "--", *argv]


class Failure(Exception):
    """The view could not be made: at `target` (a bind's, or the working directory; "" for the view itself), what
    failed (`detail`, the view's paths in it)."""

    def __init__(self, target: str, detail: str):
        super().__init__(f"{target}: {detail}" if target else detail)
        self.target, self.detail = target, detail


def report_of(failure: Failure | None, program: str = "", error: OSError | None = None) -> bytes:
    """What the script writes to its report descriptor: the view's `failure`, or the program's exec `error`."""
    import json   # (only on a failure: a start needs no JSON)
    if failure is not None:
        return json.dumps({"target": failure.target, "error": failure.detail}).encode()
    assert error is not None
    return json.dumps({"program": program, "errno": error.errno, "error": error.strerror or str(error)}).encode()


def termination_path(container: dict) -> str:
    return container.get("terminationMessagePath") or DEFAULT_TERMINATION_PATH


def wants_view(container: dict) -> bool:
    """Whether the container needs its own view: it has a volumeMount, a terminationMessagePath of its own (its
    program writes there by name), or a command line that names its termination message path (not as the
    fallback of `${TERMINATION_MESSAGE_PATH:-…}`). (Every other container starts directly: a view costs a
    Python start.)"""
    if container.get("volumeMounts"):
        return True
    path = termination_path(container)
    if path != DEFAULT_TERMINATION_PATH:
        return True
    words = [w for key in ("command", "args") for w in container.get(key) or [] if isinstance(w, str)]
    return any(path in w and "TERMINATION_MESSAGE_PATH" not in w for w in words)


def ordered(binds: tuple[Bind, ...] | list[Bind]) -> list[Bind]:
    """Outer mount points before the ones inside them (`/data` before `/data/cache`); a later bind of the same
    target wins, as it would be mounted on top."""
    return sorted(binds, key=lambda b: len([p for p in b.target.split("/") if p]))


def host_path(path: str, binds: tuple[Bind, ...] | list[Bind]) -> str:
    """Where the view's absolute `path` is on the host: its symbolic links followed as the view has them (each read
    where it is: in a volume or on the host; `/var/run/x` is `/run/x`, a volume mounted at `/run/x` included), then
    under the deepest bind that covers it, in its source; elsewhere the host's own path. Each bind's target is
    resolved so too, in the order they are mounted (as `enter` mounts them)."""
    placed: list[Bind] = []
    for b in ordered(binds):
        placed.append(Bind(b.source, _follow(b.target, placed), b.read_only))
    return _lookup(_follow(path, placed), placed)


def _lookup(path: str, binds: list[Bind]) -> str:
    """`path` (normalized, no symbolic link left) on the host: in the deepest bind covering it (the later of two
    at one target: mounted on top), else the host's."""
    best: Bind | None = None
    for b in binds:
        t = b.target
        if (path == t or path.startswith(t.rstrip("/") + "/")) and (best is None or len(t) >= len(best.target)):
            best = b
    if best is None:
        return path
    rest = path[len(best.target):].lstrip("/")
    return os.path.join(best.source, rest) if rest else best.source


def _follow(path: str, binds: list[Bind]) -> str:
    """The view's absolute `path` with its symbolic links followed (`binds`' targets have none); a path with too
    many links is given back normalized (looked up, it is not found)."""
    parts = [p for p in path.split("/") if p]
    done, links = "/", 0
    while parts:
        part = parts.pop(0)
        if part in (".", ".."):
            done = os.path.dirname(done) if part == ".." else done
            continue
        candidate = os.path.join(done, part)
        host = _lookup(candidate, binds)
        if all(b.target != candidate for b in binds) and os.path.islink(host):   # (a mount point is no link)
            links += 1
            if links > MAX_LINKS:
                return os.path.normpath(path)
            target = os.readlink(host)
            parts = [p for p in target.split("/") if p] + parts
            done = "/" if target.startswith("/") else done
            continue
        done = candidate
    return done


def mount_flags(f_flag: int) -> int:
    """The flags a bind's remount keeps, from its statvfs f_flag."""
    return sum(ms for st, ms in _KEPT_FLAGS if f_flag & st)


# ---- making the view (in the process that will exec the program) -----------------------------------------------
_libc = None


def _call(name: str, *args: object) -> None:
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    fn = getattr(_libc, name)
    if fn(*args) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{name}: {os.strerror(errno)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    enc = (lambda s: None if s is None else os.fsencode(s))
    try:
        _call("mount", enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data))
    except OSError as e:
        raise OSError(e.errno, f"mount {source or fstype}: {os.strerror(e.errno or 0)}", target) from None


def _unshare() -> None:
    uid, gid = os.geteuid(), os.getegid()
    if uid == 0:
        try:
            _call("unshare", CLONE_NEWNS)
            return
        except OSError:   # (root without CAP_SYS_ADMIN, as in some containers: a user namespace may still do)
            pass
    _call("unshare", CLONE_NEWUSER | CLONE_NEWNS)
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{uid} {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{gid} {gid} 1")


class _Builder:
    """Mounts the view under `root`, keeping track of which of its directories are bound from the host (nothing
    may be created there: they get shadowed first), which are the view's own tmpfs, and which are volumes."""

    def __init__(self, root: str):
        self.root = root.rstrip("/")
        self.host_bound: set[str] = set()   # view paths bound from the host's same path
        self.attached: list[tuple[str, Bind]] = []   # (its resolved target, the bind) of each bind made, in order

    def real(self, path: str) -> str:
        return self.root + path if path != "/" else self.root

    def start(self) -> None:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        _mount("tmpfs", self.root, "tmpfs", 0, "mode=755")
        _mount(None, self.root, None, MS_UNBINDABLE)   # (left out of the host directories bound into it)
        self._replicate("/")

    def _replicate(self, directory: str) -> None:
        """The host's entries of `directory` into the view's (a tmpfs there, empty); none of a directory this user
        may not list (root's home for another user: its entries were out of reach anyway)."""
        try:
            entries = list(os.scandir(directory))
        except PermissionError:
            entries = []
        for entry in entries:
            host = entry.path
            view = self.real(host)
            if entry.is_symlink():
                os.symlink(os.readlink(host), view)
                continue
            if entry.is_dir(follow_symlinks=False):
                os.mkdir(view)
                self.host_bound.add(host)
            else:
                with open(view, "w"):
                    pass
            try:
                _mount(host, view, None, MS_BIND | MS_REC)
            except OSError:
                if entry.is_dir(follow_symlinks=False):   # (one not readable: left as an empty directory)
                    self.host_bound.discard(host)

    def described(self, e: OSError) -> str:
        """`e` in the view's paths (the root's mount point left out)."""
        if e.filename is None:
            return str(e.strerror or e)
        name = os.fsdecode(e.filename)
        name = name[len(self.root):] or "/" if name.startswith(self.root + "/") or name == self.root else name
        return f"{name}: {e.strerror}"

    def _bound_from_host(self, path: str) -> bool:
        """True when `path` is inside a directory bound from the host (so it is the host's own)."""
        return any(path == d or path.startswith(d + "/") for d in self.host_bound)

    def resolve(self, path: str) -> str:
        """`path` in the view with its symbolic links followed (an absolute link within the view)."""
        parts = [p for p in path.split("/") if p]
        done = "/"
        links = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                done = os.path.dirname(done)
                continue
            candidate = os.path.join(done, part)
            real = self.real(candidate)
            if os.path.islink(real):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(40, f"{path}: too many levels of symbolic links")
                target = os.readlink(real)
                parts = [p for p in target.split("/") if p] + parts
                if target.startswith("/"):
                    done = "/"
                continue
            done = candidate
        return done

    def ensure(self, path: str, is_file: bool) -> str:
        """`path` exists in the view (made where missing: see the module's docstring); returns it resolved."""
        path = self.resolve(path)
        if os.path.lexists(self.real(path)):
            return path
        parent = os.path.dirname(path)
        parent = self.ensure(parent, False) if parent != path else parent
        path = os.path.join(parent, os.path.basename(path))
        if self._bound_from_host(parent):
            top = next(d for d in sorted(self.host_bound, key=len) if parent == d or parent.startswith(d + "/"))
            self._shadow_down(top, parent)
        if is_file:
            with open(self.real(path), "w"):
                pass
        else:
            os.mkdir(self.real(path))
        return path

    def _shadow_down(self, top: str, parent: str) -> None:
        """Shadow `top` (a host-bound directory) and each host directory below it on the way to `parent`."""
        d = top
        rest = parent[len(top):].strip("/").split("/") if parent != top else []
        while True:
            self.host_bound.discard(d)
            mode = stat.S_IMODE(os.stat(d).st_mode)
            _mount("tmpfs", self.real(d), "tmpfs", 0, "mode=" + format(mode, "o"))
            self._replicate(d)
            # a bind made earlier inside `d` (/dev/shm, before /dev/termination-log shadowed /dev) was under the
            # host's entries replicated just now: made again on top (nothing below `d` was shadowed: `d` was the
            # host's, so each of those binds is on a host entry, or inside another of them)
            for target, b in self.attached:
                if target.startswith(d.rstrip("/") + "/"):
                    self._attach(b, target)
            if not rest:
                return
            d = os.path.join(d, rest.pop(0))

    def bind(self, b: Bind) -> None:
        """Mount `b` at its target (made where missing); Failure where it cannot."""
        try:
            if not os.path.exists(b.source):
                raise Failure(b.target, f"{b.source}: no such file or directory")
            is_file = not os.path.isdir(b.source)
            target = self.ensure(b.target, is_file)
            if os.path.isdir(self.real(target)) == is_file:
                kinds = ("a file", "a directory") if is_file else ("a directory", "a file")
                raise Failure(b.target, f"{kinds[0]} ({b.source}) cannot be mounted on {kinds[1]} ({target})")
            self._attach(b, target)
        except OSError as e:
            raise Failure(b.target, self.described(e)) from None
        self.attached.append((target, b))

    def _attach(self, b: Bind, target: str) -> None:
        """Mount `b` at `target` (resolved, there)."""
        _mount(b.source, self.real(target), None, MS_BIND | MS_REC)
        self.host_bound -= {d for d in self.host_bound if d == target or d.startswith(target + "/")}
        if b.read_only:
            flags = mount_flags(os.statvfs(self.real(target)).f_flag)
            _mount(None, self.real(target), None, MS_BIND | MS_REMOUNT | MS_RDONLY | flags)


def enter(spec: Spec) -> None:
    """Make the view and move into it (this process: it is about to exec)."""
    builder = _Builder(spec.root)
    try:
        _unshare()
        builder.start()
    except OSError as e:
        raise Failure("", builder.described(e)) from None
    for b in ordered(spec.binds):
        builder.bind(b)
    try:
        cwd = builder.ensure(spec.cwd, False)
        os.chroot(builder.root)
        os.chdir(cwd)
    except OSError as e:
        raise Failure(spec.cwd, builder.described(e)) from None


_PROBE = None


def available(python: str = sys.executable) -> str | None:
    """None where a view can be made on this host; else why not (tried once: a throwaway process makes one)."""
    global _PROBE
    if os.environ.get(OFF, "").lower() in ("off", "0", "false", "no"):
        return f"{OFF}={os.environ[OFF]}"
    if _PROBE is None:
        import subprocess
        import tempfile
        with tempfile.TemporaryDirectory(prefix="vclite-view-") as root:
            try:
                done = subprocess.run(command(Spec(root, "/", ()), ["true"], python), capture_output=True,
                                      timeout=30)
                _PROBE = "" if done.returncode == 0 else (done.stderr.decode(errors="replace").strip()
                                                          or f"exit code {done.returncode}")
            except (OSError, subprocess.SubprocessError) as e:
                _PROBE = str(e)
    return _PROBE or None


def joined(pid: int, cwd: str, argv: list[str], nsenter: str | None) -> list[str] | None:
    """`argv` started in the view the running process `pid` has (its mount namespace — and user namespace, where
    it has one of its own —, its root, `cwd` in it), through util-linux's nsenter: what the container wrote
    outside its volumes is there too (a `kubectl exec`). None where that cannot be (no nsenter, `pid` gone)."""
    if nsenter is None:
        return None
    try:
        own_user = os.readlink(f"/proc/{pid}/ns/user") != os.readlink("/proc/self/ns/user")
    except OSError:
        return None
    user = ["--user", "--preserve-credentials"] if own_user else []
    return [nsenter, f"--target={pid}", "--mount", *user, "--root", f"--wdns={cwd}", "--", *argv]


def parse(args: list[str]) -> tuple[int | None, Spec, list[str]]:
    """The script's arguments (`command`'s after the script): (the report's file descriptor, the spec, the
    program and its arguments); ValueError (or IndexError) for arguments `command` cannot have made."""
    report = None
    if args[:1] == ["--report"]:
        report, args = int(args[1]), args[2:]
    spec, program = decode(args)
    return report, spec, program


def main(args: list[str]) -> int:
    try:
        report, spec, program = parse(args)
    except (ValueError, IndexError) as e:
        print(f"mountview: {e or 'expected --report FD'}", file=sys.stderr)
        return 2
    try:
        enter(spec)
    except Failure as e:
        print(f"vclite: cannot give the container its volumeMounts' paths: {e}", file=sys.stderr)
        _report(report, report_of(e))
        return FAILED
    if report is not None:
        os.set_inheritable(report, False)   # (closed at the exec: nothing written, the program runs)
    try:
        os.execvp(program[0], program)
    except OSError as e:
        print(f"vclite: exec {program[0]!r}: {e.strerror or e}", file=sys.stderr)
        _report(report, report_of(None, program[0], e))
    return FAILED


def _report(fd: int | None, text: bytes) -> None:
    if fd is not None:
        try:
            os.write(fd, text)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
