"""The start of a container in a view of its own (mountview.py), from the runner's side.

The view is made in the started process, before its program's exec; where it cannot be (a volume that is a
directory mounted on a file of the host, a mount the kernel refuses), the container never started: as a kubelet
reports a mount runc could not make, it ends in StartError (exit code 128) with what failed, named by the
container's field (`volumeMounts[1]`, `terminationMessagePath`, `workingDir`), and a Warning Event `Failed`.
The script says so on a pipe (`--report FD`) that its exec closes unwritten: `outcome` waits for one or the other.
"""
from __future__ import annotations

import asyncio
import errno as errno_mod
import json
import os
import posixpath
from typing import Any, Callable

from vclite.executor import mountview

Obj = dict[str, Any]


def pipe() -> tuple[int, int]:
    """(read end, write end), neither inherited by other children (the write end is passed to the script alone)."""
    return os.pipe2(os.O_CLOEXEC)


async def outcome(fd: int) -> Obj | None:
    """What the script reported on `fd` (closed here): None once its program was exec'd (or it died before
    saying anything: it is then waited for as any run)."""
    loop = asyncio.get_running_loop()
    os.set_blocking(fd, False)
    chunks: list[bytes] = []
    done: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        try:
            data = os.read(fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            chunks.append(data)
        elif not done.done():
            done.set_result(None)
    loop.add_reader(fd, readable)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)
    if not chunks:
        return None
    raw = b"".join(chunks)
    try:
        report = json.loads(raw)
    except ValueError:
        report = None
    return report if isinstance(report, dict) else {"target": "", "error": raw.decode(errors="replace")}


def exec_error(report: Obj) -> OSError | None:
    """The program's exec error the script reported (None: the view failed)."""
    if "errno" not in report:
        return None
    code = report.get("errno") or errno_mod.ENOENT
    return OSError(code, report.get("error") or os.strerror(code), report.get("program"))


def failure_message(container: Obj, report: Obj, pod_dir: str) -> str:
    """The view's failure in the container's fields' words: `error mounting volume "d" at "/etc/hostname"
    (volumeMounts[0]): not a directory: …`."""
    target, detail = report.get("target") or "", report.get("error") or "unknown error"
    return f"error mounting {what(container, target, pod_dir)}: {detail}" if target else \
        f"cannot make the container's view of its volumeMounts: {detail}"


def what(container: Obj, target: str, pod_dir: str) -> str:
    """Which of the container's fields a view path `target` comes from."""
    same: Callable[[str], bool] = lambda p: bool(p) and posixpath.normpath(p) == posixpath.normpath(target)
    for k, vm in enumerate(container.get("volumeMounts") or []):
        if same(vm.get("mountPath", "")):
            return f'volume "{vm.get("name", "")}" at "{vm.get("mountPath")}" (volumeMounts[{k}])'
    path = mountview.termination_path(container)
    if same(path):
        return f'the termination message file at "{path}" (terminationMessagePath)'
    wd = container.get("workingDir") or ""
    if same(wd):
        return f'the working directory "{wd}" (workingDir)'
    if same(pod_dir):
        return f'the pod\'s directory "{target}" ($VC_POD_DIR)'
    return f'"{target}"'
