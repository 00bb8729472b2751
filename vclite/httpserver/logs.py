"""`pods/<name>/log`: a container's log file written by the local executor, as kubectl reads it.

- A pod no node runs yet has an empty log (kube-apiserver's LogLocation: no node, no location).
- `container` names the container; a pod with one container needs none, with several the error
  lists them (as the kubelet). Init containers are accepted too.
- `tailLines=N` starts N lines before the end; `limitBytes=N` stops after N bytes.
- `follow=true` keeps the response open and sends what is appended, until the pod is finished
  (Succeeded/Failed) or deleted, the client goes away, or the server stops. The file is checked
  every FOLLOW_INTERVAL seconds (a log is a file another process appends to).
- `previous=true` reads the log of the container's run in `lastState.terminated` (the executor
  keeps the run before the current one; while the container backs off after a crash, that is the
  current file); without a terminated last state, 400 with the kubelet's words. A followed log
  ends when its run does (the file renamed away at a restart), as kubectl's with the kubelet.
- `timestamps=true` starts each line with its time, as the kubelet does (RFC 3339, nine fractional
  digits, UTC); `sinceSeconds=N` / `sinceTime=T` leave out the lines before (after `tailLines` picked
  its lines, as the kubelet). A line's time is when the executor saw it (executor/logtimes.py: at
  most half a second late). `limitBytes` counts what is sent, prefixes included.
Only `resolve`, `since` and `tail_offset` decide anything; they are pure or read one file.
"""
from __future__ import annotations

import os
import pathlib
from typing import Any

from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
FOLLOW_INTERVAL = 0.2
CHUNK = 64 * 1024
TERMINAL = ("Succeeded", "Failed")


def container_names(pod: Obj) -> tuple[list[str], list[str]]:
    spec = pod.get("spec") or {}
    return ([c.get("name", "") for c in spec.get("containers") or []],
            [c.get("name", "") for c in spec.get("initContainers") or []])


def resolve(pod: Obj, container: str | None) -> str:
    """The container whose log is asked for, or BadRequest with the kubelet's wording."""
    name = (pod.get("metadata") or {}).get("name", "")
    main, init = container_names(pod)
    if not container:
        if len(main) == 1:
            return main[0]
        raise errors.BadRequest(f"a container name must be specified for pod {name}, choose one of: "
                                f"[{' '.join(main)}]" + (f" or one of the init containers: [{' '.join(init)}]"
                                                         if init else ""))
    if container not in main and container not in init:
        raise errors.BadRequest(f"container {container} is not valid for pod {name}")
    return container


def waiting_message(pod: Obj, container: str) -> str:
    name = (pod.get("metadata") or {}).get("name", "")
    status = pod.get("status") or {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if cs.get("name") == container:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason"):
                return f'container "{container}" in pod "{name}" is waiting to start: {waiting["reason"]}'
    return f'container "{container}" in pod "{name}" is waiting to start: ContainerCreating'


def _status_of(pod: Obj, container: str) -> Obj:
    status = pod.get("status") or {}
    return next((cs for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or [])
                 if cs.get("name") == container), {})


def has_previous(pod: Obj, container: str) -> bool:
    """The kubelet serves `previous` only for a container with a terminated last state."""
    return bool((_status_of(pod, container).get("lastState") or {}).get("terminated"))


def backing_off(pod: Obj, container: str) -> bool:
    """Waiting to be started again after a run ended (CrashLoopBackOff): no run is current."""
    cs = _status_of(pod, container)
    return bool((cs.get("state") or {}).get("waiting")) and has_previous(pod, container)


def replaced(path: pathlib.Path, fh: Any) -> bool:
    """The file at `path` is no longer the one open (renamed away when the container restarted)."""
    try:
        return os.stat(path).st_ino != os.fstat(fh.fileno()).st_ino
    except FileNotFoundError:
        return True


def finished_at(pod: Obj, container: str, previous: bool) -> float | None:
    """When the container's current run (or, with `previous`, the run before) ended; None if it runs."""
    state = _status_of(pod, container).get("lastState" if previous else "state") or {}
    try:
        ended = clock_mod.parse_time((state.get("terminated") or {}).get("finishedAt"))
    except ValueError:
        return None
    return ended.timestamp() if ended is not None else None


def since(seconds: int | None, time_text: str | None, now: float) -> float | None:
    """The unix time before which lines are left out (`sinceSeconds` or `sinceTime`), or None.
    BadRequest with the API server's words for both, a zero, or a time that is not RFC 3339."""
    if seconds is not None and time_text:
        raise errors.BadRequest("at most one of `sinceTime` or `sinceSeconds` may be specified")
    if seconds is not None:
        if seconds < 1:
            raise errors.BadRequest(f"sinceSeconds: Invalid value: {seconds}: must be greater than 0")
        return now - seconds
    if not time_text:
        return None
    try:
        when = clock_mod.parse_time(time_text)
    except ValueError:
        when = None
    if when is None:
        raise errors.BadRequest(f'invalid value for sinceTime: "{time_text}" (want an RFC 3339 time, '
                                f'e.g. 2006-01-02T15:04:05Z)')
    return when.timestamp()


def previous_missing(pod: Obj, container: str) -> str:
    name = (pod.get("metadata") or {}).get("name", "")
    return f'previous terminated container "{container}" in pod "{name}" not found'


def tail_offset(path: pathlib.Path, lines: int) -> int:
    """The byte offset where the last `lines` lines of the file begin (reads backwards in chunks)."""
    size = path.stat().st_size
    if lines <= 0:
        return size
    with open(path, "rb") as f:
        pos, found = size, 0
        if size and _byte_at(f, size - 1) == b"\n":
            pos -= 1  # the final newline ends the last line; it does not start another
        while pos > 0:
            start = max(0, pos - CHUNK)
            f.seek(start)
            block = f.read(pos - start)
            idx = len(block)
            while True:
                idx = block.rfind(b"\n", 0, idx)
                if idx < 0:
                    break
                found += 1
                if found == lines:
                    return start + idx + 1
            pos = start
    return 0


def _byte_at(f: Any, offset: int) -> bytes:
    f.seek(offset)
    return f.read(1)
