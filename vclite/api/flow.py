"""flow.volcano.sh/v1alpha1 names: JobFlow phases, retain policies, labels written on created vcjobs."""
from __future__ import annotations

import enum
import json
import re
from typing import Any

from vclite.lib import clock


class FlowPhase(enum.StrEnum):
    """JobFlow status.state.phase (Volcano spells success `Succeed`)."""

    PENDING = "Pending"
    RUNNING = "Running"
    SUCCEED = "Succeed"
    FAILED = "Failed"
    TERMINATING = "Terminating"


class RetainPolicy(enum.StrEnum):
    RETAIN = "retain"
    DELETE = "delete"


CREATED_BY_JOB_TEMPLATE = "volcano.sh/createdByJobTemplate"
CREATED_BY_JOB_FLOW = "volcano.sh/createdByJobFlow"


def job_name(jobflow: str, flow: str) -> str:
    """The vcjob a flow creates: `<jobflow>-<flow>`."""
    return f"{jobflow}-{flow}"


def object_string(namespace: str, name: str) -> str:
    """The `<ns>.<name>` label value Volcano writes."""
    return f"{namespace}.{name}"


# vclite's flow primitives (annotations, so they work on a cluster with Volcano's CRDs unchanged).
SUSPEND_ANNOTATION = "flow.volcano.sh/suspend"          # "true": no new vcjob of the JobFlow starts
OUTPUT_TASK_ANNOTATION = "flow.volcano.sh/output-task"  # on a JobTemplate: whose termination message is the output
# on a loop item's vcjob: its item, as item_text shows it (what the live view names the item by: a withParam's items
# are in no status — a 10,000-item fan would grow it by all their values —, only in the output they were read from)
ITEM_ANNOTATION = "flow.volcano.sh/item"
ITEM_ANNOTATION_MAX = 200   # characters of an item kept in ITEM_ANNOTATION


def item_text(item: Any, limit: int = ITEM_ANNOTATION_MAX) -> str:
    """A loop item in one line: a string as it is, anything else as compact JSON (`{"lr":0.1}`), cut at `limit`
    characters with `…`."""
    if isinstance(item, str):
        text = " ".join(item.split())
    else:
        try:
            text = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
        except (TypeError, ValueError):
            text = str(item)
    return text if len(text) <= limit else text[:max(0, limit - 1)] + "…"


# ---- retry values, read as Argo's retryStrategy reads them ------------------------------------------

_DIGITS = re.compile(r"\s*[0-9]+\s*")
_SECONDS = re.compile(r"\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*")


def retry_limit(value: Any) -> int | None:
    """`retry.limit`: an integer, or a string of digits (Argo's IntOrString); None if neither."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        return int(value)
    return None


MAX_BACKOFF_SECONDS = clock.MAX_DURATION_SECONDS   # Go's longest time.Duration, as Argo parses
MAX_BACKOFF_FACTOR = 1000.0


def backoff_factor(value: Any) -> float | None:
    """`retry.backoff.factor`: a number from 1 to MAX_BACKOFF_FACTOR, or a string of one (Argo's IntOrString);
    None if neither."""
    if isinstance(value, str) and _SECONDS.fullmatch(value):
        value = float(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 1 <= value <= MAX_BACKOFF_FACTOR:
        return float(value)
    return None


def backoff_seconds(value: Any) -> float | None:
    """A back-off duration: a Go duration ("10s", "1m30s"), or seconds as a number or a string of one
    (Argo: "Default unit is seconds"); None if it is neither, negative, or longer than Go's longest."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    elif not isinstance(value, str):
        return None
    elif _SECONDS.fullmatch(value):
        seconds = float(value)
    else:
        try:
            seconds = clock.parse_duration(value)
        except ValueError:
            return None
    return seconds if 0 <= seconds <= MAX_BACKOFF_SECONDS else None   # (NaN compares false: refused too)
