"""Whether a vcjob's `status` decodes into Volcano's Go type `v1alpha1.JobStatus` (decoding.py asks, for the
components' view): a typed informer cannot decode a vcjob whose `taskStatusCount` holds a word where a count
goes, and leaves the whole vcjob out; vclite's components, which read these fields (the JobFlow controller
copies `taskStatusCount` into its own status), leave it out too.

`mismatch` follows the decoder's rules as vcctl's typed reads apply them (cli/gotyped.py over
cli/kindtypes.JOB_STATUS; a unit test holds the two to the same answers): a null decodes into anything, fields the
type does not have are skipped, an int32 is an integral JSON number in its range, a time a string that parses.
Written out by hand rather than walking the type's description: it runs on every vcjob status write the
components watch (once per version: decoding.py remembers the last one), about 3 µs for a running job's status on
the development VM (`python -m timeit`). A field whose value is the very object the previous version held
(`before`) is not looked at again; times that parsed are remembered (a few hundred texts), as a job's times repeat
across its versions.
"""
from __future__ import annotations

from typing import Any

from vclite.lib import clock as clock_mod

Obj = dict[str, Any]
Mismatch = tuple[str, Any, str]   # the field's path as Go's error names it (no keys, no indexes), value, Go type

_BOUND = 1 << 31
_NOTHING: Obj = {}
_TIMES_KEPT = 512
_good_times: dict[str, None] = {}   # texts that parsed as times, the latest last
_COUNTERS = ("minAvailable", "pending", "running", "succeeded", "failed", "terminating", "unknown", "version",
             "retryCount")
_STRINGS = {"runningDuration": "v1.Duration"}
_STATE_STRINGS = (("phase", "v1alpha1.JobPhase"), ("reason", "string"), ("message", "string"))


def _int32(value: Any) -> bool:
    kind = type(value)
    if kind is int:
        return -_BOUND <= value < _BOUND
    if kind is float:
        return value.is_integer() and -_BOUND <= value < _BOUND
    return value is None


def _time(value: Any) -> bool:
    if value is None:
        return True
    if type(value) is not str:
        return False
    if value in _good_times:
        return True
    try:
        clock_mod.parse_time(value)
    except ValueError:
        return False
    _good_times[value] = None
    if len(_good_times) > _TIMES_KEPT:
        del _good_times[next(iter(_good_times))]
    return True


def mismatch(status: Any, before: Obj | None = None) -> Mismatch | None:
    """The first field of `status` (a vcjob's) that does not decode into v1alpha1.JobStatus, or None. `before`: a
    status found to decode; a field whose value is the very object `before` holds is not looked at again."""
    if status is None:
        return None
    if type(status) is not dict:
        return ("status", status, "v1alpha1.JobStatus")
    if before is None:
        before = _NOTHING
    for key, value in status.items():   # (in the JSON's order, as the decoder reads it)
        if value is None:
            continue
        if before.get(key) is value:
            continue   # (looked at in `before`)
        if key in _COUNTERS:
            if not _int32(value):
                return (f"status.{key}", value, "int32")
        elif key == "state":
            found = _state(value)
            if found:
                return found
        elif key == "taskStatusCount":
            found = _task_status_count(value)
            if found:
                return found
        elif key in _STRINGS:
            if type(value) is not str:
                return (f"status.{key}", value, _STRINGS[key])
        elif key == "controlledResources":
            if type(value) is not dict:
                return ("status.controlledResources", value, "map[string]string")
            for item in value.values():
                if item is not None and type(item) is not str:
                    return ("status.controlledResources", item, "string")
        elif key == "conditions":
            found = _conditions(value)
            if found:
                return found
    return None


def _state(state: Any) -> Mismatch | None:
    if type(state) is not dict:
        return ("status.state", state, "v1alpha1.JobState")
    for key, go in _STATE_STRINGS:
        value = state.get(key)
        if value is not None and type(value) is not str:
            return (f"status.state.{key}", value, go)
    if not _time(state.get("lastTransitionTime")):
        return ("status.state.lastTransitionTime", state["lastTransitionTime"], "v1.Time")
    return None


def _task_status_count(counts: Any) -> Mismatch | None:
    if type(counts) is not dict:
        return ("status.taskStatusCount", counts, "map[string]v1alpha1.TaskState")
    for task in counts.values():
        if task is None:
            continue
        if type(task) is not dict:
            return ("status.taskStatusCount", task, "v1alpha1.TaskState")
        phases = task.get("phase")
        if phases is None:
            continue
        if type(phases) is not dict:
            return ("status.taskStatusCount.phase", phases, "map[v1.PodPhase]int32")
        for n in phases.values():
            if not _int32(n):
                return ("status.taskStatusCount.phase", n, "int32")
    return None


def _conditions(conditions: Any) -> Mismatch | None:
    if type(conditions) is not list:
        return ("status.conditions", conditions, "[]v1alpha1.JobCondition")
    for cond in conditions:
        if cond is None:
            continue
        if type(cond) is not dict:
            return ("status.conditions", cond, "v1alpha1.JobCondition")
        value = cond.get("status")
        if value is not None and type(value) is not str:
            return ("status.conditions.status", value, "v1alpha1.JobPhase")
        if not _time(cond.get("lastTransitionTime")):
            return ("status.conditions.lastTransitionTime", cond["lastTransitionTime"], "v1.Time")
    return None
