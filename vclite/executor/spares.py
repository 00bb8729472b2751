"""Spare pod directories, made at idle moments, so that starting a pod costs two renames.

On some disks (this project's VMs at busy moments; network file systems, common for HPC home
directories) creating a directory or a file costs several hundred microseconds — a new pod's
directory, its `logs/` and its first log file up to 1.3 ms, a quarter of a hop from one job's end to
the next job's start — while renaming one costs 10–25 µs. So `SparePodDirs` keeps up to `target`
skeletons ready under `<workdir>/.spare-pod-dirs/<n>/` (the directory, its `logs/` and an empty
`logs/.spare` file), and the executor moves one into place for each new pod (`take`); the first
container's log is the spare file renamed (`use_log`) when its process starts.

- Skeletons are made one at a time by `make_one`, which the runtime calls when it is about to wait
  (pods running, nothing ready): never between a job's end and the next job's start. A worker thread
  was tried: it cost more than it saved (each of its system calls hands the GIL back and forth with
  the event loop). With no spare ready, `take` says so at once and the pod's directory is made as
  before.
- Nothing is made before the first pod asks (`take`): a run without pods leaves no trace.
- The spare directory is on the same file system as the pods (inside the work directory), as
  rename needs. Its name begins with a dot: it can be no namespace, and no pod's glob sees it.
- A failure to make a skeleton (disk full, the work directory removed) stops making them: pods
  then make their directories themselves, which reports the error where it matters.
- `close` removes the skeletons left; a directory left by a crash is removed before the first new
  skeleton is made.
"""
from __future__ import annotations

import collections
import itertools
import logging
import os
import pathlib
import shutil

log = logging.getLogger("vclite.executor")
SPARE_DIR = ".spare-pod-dirs"
SPARE_LOG = ".spare"    # in a skeleton's logs/: becomes the first container's log
TARGET = 8              # skeletons kept ready (a gang of up to 8 pods starts without making any)


class SparePodDirs:
    def __init__(self, workdir: pathlib.Path, target: int = TARGET):
        self.root = pathlib.Path(workdir) / SPARE_DIR
        self.target = target
        self._ready: collections.deque[pathlib.Path] = collections.deque()
        self._wanted = False    # a pod has asked for one: worth making
        self._stopped = False   # closed, or making one failed
        self._cleared = False   # what a crashed process left has been removed
        self._names = itertools.count()

    def take(self, pod_dir: pathlib.Path) -> bool:
        """Move a ready skeleton to `pod_dir` (which must not exist; its parent must). False when no
        skeleton is ready or the move fails (the caller makes the directory itself)."""
        self._wanted = True
        if not self._ready:
            return False
        spare = self._ready.popleft()
        try:
            os.rename(spare, pod_dir)
        except OSError:    # (the parent is missing, or a directory of that name is there: kept for later)
            self._ready.appendleft(spare)
            return False
        return True

    def ready(self) -> int:
        return len(self._ready)

    def short(self) -> bool:
        """Whether make_one would make one now."""
        return self._wanted and not self._stopped and len(self._ready) < self.target

    def make_one(self) -> bool:
        """Make one skeleton if fewer than `target` are ready (and a pod has asked); True if made."""
        if not self.short():
            return False
        try:
            if not self._cleared:   # (what a crashed process left is not known to be whole)
                shutil.rmtree(self.root, ignore_errors=True)
                self.root.mkdir(parents=True, exist_ok=True)
                self._cleared = True
            path = self.root / str(next(self._names))
            os.mkdir(path)
            os.mkdir(path / "logs")
            os.close(os.open(path / "logs" / SPARE_LOG, os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644))
        except OSError as e:
            self._stopped = True
            log.debug("spare pod directories: no longer made: %s", e)
            return False
        self._ready.append(path)
        return True

    def close(self) -> None:
        """Make no more, and remove the ones left (and the spare directory)."""
        self._stopped = True
        self._ready.clear()
        if self._cleared:
            shutil.rmtree(self.root, ignore_errors=True)


def use_log(logs_dir: pathlib.Path, log_path: pathlib.Path) -> None:
    """Make `log_path` (not yet there) from the spare file of `logs_dir`, if it still has one: a rename
    instead of a new file."""
    try:
        os.rename(logs_dir / SPARE_LOG, log_path)
    except FileNotFoundError:
        pass
