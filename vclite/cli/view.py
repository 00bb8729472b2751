"""What `vcctl run` and `vcctl jobflow get -w` show: a live view of each JobFlow's DAG (per-flow state,
task progress, elapsed time, what a flow waits on), the phases whose changes make the lines written when
stdout is not a terminal (runlines.py), and the final summary with the reason of every failure.

The DAG (`dag_rows`) has one row per flow in dependency order: its dependency (targets, `any`,
the expression, probes, `when`), its state — the vcjob's phase, or from the JobFlow's status
condition when it has none: waiting (on what), waiting for a probe, suspended, Skipped (and why),
not created — and, under a loop flow, a row per item or iteration (the first LOOP_ROWS, then a
count). Retries and a job's output (its termination message) appear in the detail column.

A big flow is summarised, so that a frame costs the same for 10 jobs or 10,000: FAN_MIN or more sibling
flows (the same dependency, no loop) are one row — their names, the count of each state, why the first
pending one waits — with the failed and running ones listed under it (the first LISTED_ROWS, then a
count); a dependency on more than FAN_MIN flows names the first TARGETS_SHOWN; and the flows beyond
MAX_ROWS rows are one such row at the end. A smaller flow is drawn row by row as before.

Pure functions from a Snapshot of API objects to rows and lines of text; no API calls and no clock
reads (the caller passes `now`). viewdraw.py turns the rows into rich tables (loaded only to draw).
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import json
import re
from collections.abc import Collection
from typing import Any

from vclite.api import batch, flow, flowsyntax, kinds, meta, podfailure
from vclite.lib import clock as clock_mod
from vclite.lib import dag

Obj = dict[str, Any]

LOOP_ROWS = 8          # item / iteration rows shown under a loop flow
ITEM_SHOWN = 24        # characters of a loop item's value shown after its label
FAN_MIN = 20           # sibling flows (one dependency, no loop) drawn as one row from this many on
LISTED_ROWS = 8        # failed / running flows listed under a summary row
MAX_ROWS = 100         # rows of one JobFlow's DAG: the flows beyond are summarised in one row
TARGETS_SHOWN = 3      # targets named in a dependency on more than FAN_MIN flows
PENDING_ASKED = 50     # pending vcjobs of a summary row asked why they wait (the first that says is shown)
# the order of the states counted in a summary row (trouble first, finished last; any other after them)
COUNT_ORDER = ("Failed", "Terminated", "Terminating", "Aborted", "Aborting", "retrying", "Restarting", "Running",
               "Completing", "Pending", "probe", "suspended", "waiting", "not created", "Completed", "Skipped")
LISTED_STATES = frozenset(COUNT_ORDER[:COUNT_ORDER.index("Pending")])   # listed under a summary row
WAITING_STATES = {"WaitingForDependencies": "waiting", "WaitingForOutput": "waiting", "WaitingForOtherFlows": "waiting",
                  "WaitingForProbe": "probe", "Suspended": "suspended", "NotCreated": "not created",
                  "Retrying": "retrying", "JobTemplateNotFound": "waiting", "JobAlreadyExists": "waiting",
                  "UndefinedTarget": "waiting", "DependencyCycle": "waiting", "InvalidSpec": "waiting",
                  "Creating": "waiting"}


MIN_REDRAW_GAP = 0.1   # seconds between two redraws of a live view, at the least
REDRAW_SHARE = 0.1     # the share of time a live view may spend drawing


def redraw_gap(cost: float) -> float:
    """Seconds to wait before the next redraw of a live view whose last redraw took `cost` seconds."""
    return max(MIN_REDRAW_GAP, cost / REDRAW_SHARE)


@dataclasses.dataclass
class Snapshot:
    jobflows: list[Obj]
    jobs: list[Obj]
    podgroups: list[Obj]
    pods: list[Obj]
    # the latest FailedCreate message of each vcjob, by (namespace, name): its pods the API refused
    create_failures: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)
    # why the API refused a PodGroup, by (kind, namespace, name) of the vcjob (its latest PodGroupError Event) or
    # the bare pod (the PodGroup controller's last try) it was for
    podgroup_errors: dict[tuple[str, str, str], str] = dataclasses.field(default_factory=dict)
    # the latest PVCError message of each vcjob, by (namespace, name): a claim it names does not exist, so it has
    # no PodGroup yet (the vcjob controller's createJobIOIfNotExist)
    claim_errors: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)

    def job(self, namespace: str, name: str) -> Obj | None:
        return self._jobs.get((namespace, name))

    def __post_init__(self) -> None:
        self._jobs = {(meta.namespace(j), meta.name(j)): j for j in self.jobs}
        self._pods: dict[tuple[str, str], list[Obj]] = {}   # by (namespace, vcjob name): a view draws
        for p in self.pods:                                  # every job each tick, wide flows included
            self._pods.setdefault((meta.namespace(p), meta.labels(p).get(batch.JOB_NAME, "")), []).append(p)
        self._pgs: dict[tuple[str, str], Obj] = {}
        for pg in self.podgroups:
            ref = meta.controller_ref(pg)
            if ref:
                self._pgs[(meta.namespace(pg), ref.get("name", ""))] = pg

    def podgroup_of(self, job: Obj) -> Obj | None:
        return self._pgs.get((meta.namespace(job), meta.name(job)))

    def pods_of(self, job: Obj) -> list[Obj]:
        return list(self._pods.get((meta.namespace(job), meta.name(job)), ()))


def standalone_jobs(snap: Snapshot) -> list[Obj]:
    """vcjobs not created by a JobFlow."""
    return [j for j in snap.jobs if flow.CREATED_BY_JOB_FLOW not in meta.labels(j)]


def _seconds(a: str | None, b: dt.datetime | None) -> float:
    start = clock_mod.parse_time(a)
    return max(0.0, (b - start).total_seconds()) if start and b else 0.0


def elapsed(obj: Obj, now: dt.datetime) -> str:
    """How long a vcjob or JobFlow has run: from its creationTimestamp to `now`, both in whole seconds as the API
    writes times, so that the figure never drops when the job finishes: a finished vcjob shows its runningDuration
    (from the same whole-second stamps: its state's lastTransitionTime less its creationTimestamp), or that
    difference itself until the controller writes it."""
    md, status = obj.get("metadata", {}), obj.get("status") or {}
    created = md.get("creationTimestamp")
    if meta.phase(obj) in batch.FINISHED_PHASES:
        if status.get("runningDuration"):
            try:
                return _fmt_secs(clock_mod.parse_duration(status["runningDuration"]))
            except ValueError:
                pass
        ended = clock_mod.parse_time((status.get("state") or {}).get("lastTransitionTime"))
        if ended is not None:
            return _fmt_secs(_seconds(created, ended))
    return _fmt_secs(_seconds(created, now.replace(microsecond=0)))


def _fmt_secs(s: float) -> str:
    if s < 60:
        return f"{s:.1f}s" if s != int(s) else f"{int(s)}s"
    m, s = divmod(int(s), 60)
    return f"{m}m{s:02d}s" if m < 60 else f"{m // 60}h{m % 60:02d}m"


def task_progress(job: Obj) -> str:
    """`ps 1/1 running, worker 3/4 running, 1/4 succeeded` from the job's taskStatusCount."""
    counts = (job.get("status") or {}).get("taskStatusCount") or {}
    parts = []
    for task in (job.get("spec") or {}).get("tasks") or []:
        name, n = task.get("name", "?"), int(task.get("replicas", 0) or 0)
        phases = (counts.get(name) or {}).get("phase") or {}
        bits = []
        for phase, label in (("Running", "running"), ("Succeeded", "succeeded")):
            if phases.get(phase):
                bits.append(f"{phases[phase]}/{n} {label}")
        if phases.get("Failed"):
            bits.append(f"{phases['Failed']} failed")
        if phases.get("Pending"):
            bits.append(f"{phases['Pending']} pending")
        parts.append(f"{name} " + (", ".join(bits) if bits else f"0/{n}"))
    return "; ".join(parts)


# the waiting reasons of a container that is merely on its way (anything else keeps it from starting, and so
# does one of these with a message: a pod waiting for GPUs a pod being stopped still holds)
STARTING = frozenset({"", "ContainerCreating", "PodInitializing"})


def why_waiting(snap: Snapshot, job: Obj) -> str:
    """Why a job does not go on: the API's refusal of the pods it lacks (its FailedCreate, e.g. a
    ResourceQuota exceeded), else the scheduler's reason its pods are not placed (PodGroup
    Unschedulable condition; before it, the PVCError of a claim it names that does not exist), else the first of
    its pods whose container cannot start (e.g.
    `CreateContainerConfigError: configmap "x" not found`), else the first pod the scheduler could not place
    (a pod beyond its satisfied gang: its PodScheduled=False message)."""
    failure = snap.create_failures.get((meta.namespace(job), meta.name(job)))
    if failure and len(snap.pods_of(job)) < sum(int(t.get("replicas", 0) or 0)
                                                for t in (job.get("spec") or {}).get("tasks") or []):
        return f"FailedCreate: {failure}"   # (the gang then also misses them: this says why)
    pg = snap.podgroup_of(job)
    refused = snap.podgroup_errors.get((kinds.JOB.kind, meta.namespace(job), meta.name(job)))
    if pg is None and refused:
        return f"PodGroupError: {refused}"
    claim_error = snap.claim_errors.get((meta.namespace(job), meta.name(job)))
    if pg is None and claim_error:
        return f"PVCError: {claim_error}"
    for cond in ((pg or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Unschedulable" and cond.get("status") == "True":
            return cond.get("message") or cond.get("reason") or "unschedulable"
    pod = blocked_pod(snap, job)
    if pod is not None:
        return f"pod {meta.name(pod)}: {container_blocked(pod)}"
    for pod in sorted(snap.pods_of(job), key=meta.name):   # (a pod beyond a gang already placed: it fit no node)
        unplaced = unscheduled_message(pod)
        if unplaced:
            return f"pod {meta.name(pod)}: {unplaced}"
    return ""


def unscheduled_message(pod: Obj) -> str:
    """The scheduler's word on a pod it has not placed (its PodScheduled=False message), "" for one it placed."""
    if (pod.get("spec") or {}).get("nodeName"):
        return ""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return str(cond.get("message") or cond.get("reason") or "")
    return ""


def blocked_pod(snap: Snapshot, job: Obj) -> Obj | None:
    """The first of the job's pods (by name) whose container cannot start or keeps crashing, if any."""
    for pod in sorted(snap.pods_of(job), key=meta.name):
        if container_blocked(pod):
            return pod
    return None


def crash_looping(pod: Obj) -> list[str]:
    """The names of the pod's containers waiting in CrashLoopBackOff (their last run failed or ended)."""
    st = pod.get("status") or {}
    return [cs.get("name", "?") for cs in [*(st.get("initContainerStatuses") or []),
                                           *(st.get("containerStatuses") or [])]
            if ((cs.get("state") or {}).get("waiting") or {}).get("reason") == "CrashLoopBackOff"]


MESSAGE_SHOWN = 200   # characters of a last run's message in one line


def last_run(last: Obj) -> str:
    """`exit code 127`, `StartError, exit code 128: exec: "x": executable file not found in $PATH`: how a
    container's previous run ended (its lastState.terminated), in one line; "" when it did not end."""
    if not last:
        return ""
    reason = str(last.get("reason") or "")
    text = ("" if reason in ("", "Error", "Completed") else f"{reason}, ") + f"exit code {last.get('exitCode', '?')}"
    lines = [ln.strip() for ln in str(last.get("message") or "").splitlines() if ln.strip()]
    if lines:
        message = lines[-1]
        text += ": " + (message if len(message) <= MESSAGE_SHOWN else message[:MESSAGE_SHOWN] + "…")
    return text


def container_blocked(pod: Obj) -> str:
    """`container main CreateContainerConfigError: configmap "x" not found` for a pod whose container
    waits for a reason other than being started (CrashLoopBackOff included, with how its last run ended; a
    container that exited 0 only to be restarted names the restartPolicy that does it); "" otherwise."""
    st = pod.get("status") or {}
    if st.get("phase") not in ("Pending", "Running", None):
        return ""
    for cs in [*(st.get("initContainerStatuses") or []), *(st.get("containerStatuses") or [])]:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting and (waiting.get("reason", "") not in STARTING or waiting.get("message")):
            message = waiting.get("message") or ""
            text = f"container {cs.get('name', '?')} {waiting['reason']}" + (f": {message}" if message else "")
            last = (cs.get("lastState") or {}).get("terminated") or {}
            if last.get("exitCode") == 0 and (pod.get("spec") or {}).get("restartPolicy") in (None, "", "Always"):
                text += " (it exited 0 and restartPolicy Always restarts it; a task that should end wants Never or OnFailure)"
            elif last:   # why it keeps being restarted: a missing binary, a failing command
                text += f" (last run: {last_run(last)})"
            return text
    return ""


def flow_rows(jf: Obj, snap: Snapshot) -> list[tuple[str, str, Obj | None, list[str]]]:
    """(flow name, vcjob name, vcjob or None, targets) in dependency order."""
    flows = (jf.get("spec") or {}).get("flows") or []
    graph = {f.get("name", ""): list(((f.get("dependsOn") or {}).get("targets")) or []) for f in flows}
    try:
        order = dag.topological_order(graph)
    except ValueError:
        order = list(graph)
    ns = meta.namespace(jf)
    return [(name, flow.job_name(meta.name(jf), name), snap.job(ns, flow.job_name(meta.name(jf), name)),
             graph.get(name, [])) for name in order if name in graph]


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of a JobFlow's DAG: a flow; (indented) one item / iteration of a loop flow, or one flow listed
    under a summary row; or a summary row, standing for many flows: `members` (label, vcjob name) and
    `counts`, how many of them are in each state."""

    label: str
    depends: str
    key: str                 # the vcjob name, or `<jobflow>-<flow>` for a flow without one
    job: Obj | None
    child: bool = False
    members: tuple[tuple[str, str], ...] = ()
    counts: tuple[tuple[str, int], ...] = ()
    item: bool = False       # a loop's item or iteration: a narrow view may cut its label (its value is a preview)


# withParam: "{{outputs.split}}", "{{outputs.split.shards}}"
_OUTPUTS_REF = re.compile(r"^\s*\{\{\s*outputs\.([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_-]+)*)\s*\}\}\s*$")
_FAILURES_REF = re.compile(r"^\s*\{\{\s*workflow\.failures\s*\}\}\s*$")       # the exit handler's withParam


def loop_text(f: Obj) -> tuple[str, str]:
    """(the loop part of a flow's dependency, the target it names): `each of 4 items` (withItems), `split → each
    item` (withParam over `{{outputs.split}}`: split is named here, not again among the targets), `each failure`
    (the exit handler over `{{workflow.failures}}`), `repeat until <condition> (≤<limit>)`; ("", "") for none.
    Short: it is read in a narrow column (10 characters at 80 columns)."""
    if f.get("withItems") is not None:
        items = f["withItems"]
        count = len(items) if isinstance(items, list) else 0
        return f"each of {count} item{'' if count == 1 else 's'}", ""
    if f.get("withParam"):
        param = str(f["withParam"])
        source = _OUTPUTS_REF.match(param)
        if source:
            return f"{source[1]}{source[2]} → each item", source[1]
        return ("each failure", "") if _FAILURES_REF.match(param) else (f"each item of {param.strip()}", "")
    if isinstance(f.get("repeat"), dict):
        until = flowsyntax.as_written(str(f["repeat"].get("until")))
        return f"repeat until {until} (≤{f['repeat'].get('limit')})", ""
    return "", ""


def depends_text(f: Obj, loops: Collection[str] = ()) -> str:
    """A flow's dependency in a few words: `a, b`, `any of a, b` (`any item of w`: strategy any on one target
    among `loops`, the loop flows, whose first item completing is enough), the expression, probes, when, its loop
    (loop_text: `split → each item`; more than FAN_MIN targets: the first TARGETS_SHOWN and a count)."""
    dep = f.get("dependsOn") if isinstance(f.get("dependsOn"), dict) else {}
    loop, source = loop_text(f)
    targets = [t for t in dep.get("targets") or [] if isinstance(t, str)]
    if source and (dep.get("strategy") != "any" or targets == [source]):   # (not `split; split → each item`)
        targets = [t for t in targets if t != source]
    parts = []
    if targets:
        named = targets if len(targets) <= FAN_MIN else [*targets[:TARGETS_SHOWN],
                                                          f"… {len(targets) - TARGETS_SHOWN:,} more"]
        anyone = dep.get("strategy") == "any"
        lead = "any of " if anyone and len(targets) > 1 else "any item of " if anyone and targets[0] in loops else ""
        parts.append(lead + ", ".join(named))
    if dep.get("expression"):
        parts.append(flowsyntax.as_written(str(dep["expression"])))
    probe = dep.get("probe") if isinstance(dep.get("probe"), dict) else {}
    for e in probe.get("taskStatusList") or []:
        parts.append(f"probe {e.get('taskName')} {e.get('phase')}")
    for e in probe.get("httpGetList") or []:
        parts.append(f"probe {e.get('taskName')} GET :{e.get('port')}{e.get('path') or '/'}")
    for e in probe.get("tcpSocketList") or []:
        parts.append(f"probe {e.get('taskName')} tcp :{e.get('port')}")
    if f.get("when"):
        parts.append(f"when {flowsyntax.as_written(str(f['when']))}")
    if loop:
        parts.append(loop)
    return "; ".join(parts)


def _flow_refs(f: Obj) -> list[str]:
    """Flows this flow reads, for ordering rows (targets and names in its expression)."""
    dep = f.get("dependsOn") if isinstance(f.get("dependsOn"), dict) else {}
    refs = [t for t in dep.get("targets") or [] if isinstance(t, str)]
    expr = dep.get("expression")
    if isinstance(expr, str):
        refs += [w.split(".")[0] for w in expr.replace("(", " ").replace(")", " ").replace("!", " ")
                 .replace("&&", " ").replace("||", " ").split()]
    param = str(f.get("withParam") or "")
    if "outputs." in param:
        refs.append(param.split("outputs.")[1].split("}")[0].strip().split(".")[0])
    return refs


def _is_loop(f: Obj) -> bool:
    return f.get("withItems") is not None or bool(f.get("withParam")) or isinstance(f.get("repeat"), dict)


def _fans(flows: dict[str, Obj], order: list[str], exit_flow: Any) -> dict[str, list[str]]:
    """Sibling flows drawn as one row: FAN_MIN or more flows, none a loop or the exit handler, with the
    same dependency (targets, strategy, expression, probes, when). Maps the first of each fan (in `order`)
    to its flows, and each other flow of a fan to []."""
    if len(flows) < FAN_MIN:
        return {}
    siblings: dict[str, list[str]] = {}
    for fname in order:
        f = flows[fname]
        if fname != exit_flow and not _is_loop(f):
            siblings.setdefault(repr((f.get("dependsOn"), f.get("when"))), []).append(fname)
    out: dict[str, list[str]] = {}
    for names in siblings.values():
        if len(names) >= FAN_MIN:
            out.update(dict.fromkeys(names[1:], []))
            out[names[0]] = names
    return out


@dataclasses.dataclass(frozen=True)
class _Entry:
    """A flow of the DAG in dependency order, or a fan of flows (drawn as a summary row)."""

    name: str
    depends: str
    key: str                                  # its vcjob name (the first flow's, for a fan)
    loop_word: str = ""                       # "item" / "iteration" for a loop flow
    items: tuple[Any, ...] | None = None      # withItems' items (a withParam's: on each item's vcjob, ITEM_ANNOTATION)
    fan: tuple[tuple[str, str], ...] = ()     # a fan's flows: (name, vcjob name)


_layouts: dict[str, tuple[Obj, list[_Entry]]] = {}   # by JobFlow name: (its spec, its layout)
LAYOUTS_KEPT = 16


def layout(name: str, spec: Obj) -> list[_Entry]:
    """The DAG of JobFlow `name` with this spec: its flows in dependency order (the exit handler last),
    fans grouped. The same for every frame of a live view: kept for the last LAYOUTS_KEPT JobFlows drawn, with
    their specs (read-only, as every object drawn: a spec is never changed, a new version is a new object)."""
    kept = _layouts.get(name)
    if kept is not None and (kept[0] is spec or kept[0] == spec):
        return kept[1]
    flows = {f.get("name", ""): f for f in spec.get("flows") or [] if isinstance(f, dict)}
    graph = {n: [r for r in _flow_refs(f) if r in flows and r != n] for n, f in flows.items()}
    try:
        order = dag.topological_order(graph)
    except ValueError:
        order = list(graph)
    exit_flow = spec.get("onExit")
    if exit_flow in order:
        order = [n for n in order if n != exit_flow] + [exit_flow]
    fans = _fans(flows, order, exit_flow)
    loops = {n for n, f in flows.items() if _is_loop(f)}
    out = []
    for fname in order:
        f, base = flows[fname], flow.job_name(name, fname)
        if fname in fans:
            if fans[fname]:
                out.append(_Entry(fname, depends_text(f, loops), base,
                                  fan=tuple((m, flow.job_name(name, m)) for m in fans[fname])))
            continue
        word = ("iteration" if isinstance(f.get("repeat"), dict) else "item") if _is_loop(f) else ""
        depends = "; ".join(x for x in ("on exit" if fname == exit_flow else "", depends_text(f, loops)) if x)
        items = f.get("withItems")
        out.append(_Entry(fname, depends, base, word, items=tuple(items) if isinstance(items, list) else None))
    if len(_layouts) >= LAYOUTS_KEPT:
        _layouts.clear()
    _layouts[name] = (spec, out)
    return out


def dag_rows(jf: Obj, snap: Snapshot, max_rows: int = MAX_ROWS) -> list[Row]:
    """The rows of a JobFlow's DAG, flows in dependency order (the exit handler last); a fan of FAN_MIN or
    more flows as a summary row, and the flows beyond `max_rows` rows as one summary row at the end."""
    ns = meta.namespace(jf)
    conditions = (jf.get("status") or {}).get("conditions") or {}
    states = _States(jf, snap)
    units: list[tuple[list[Row], list[tuple[str, str]], int]] = []   # the rows of a flow or a fan, its members, flows
    for e in layout(meta.name(jf), jf.get("spec") or {}):
        if e.fan:
            members = list(e.fan)
            label = f"{members[0][0]} … {members[-1][0]} ({len(members):,} flows)"
            units.append((summary_rows(label, e.depends, members, states), members, len(members)))
            continue
        rows = [Row(e.name, e.depends, e.key, None if e.loop_word else snap.job(ns, e.key))]
        units.append((rows, [(e.name, e.key)], 1))
        if not e.loop_word:
            continue
        cond = conditions.get(e.key) or {}
        count = int(cond.get("items") or cond.get("iterations") or 0)
        for i in range(min(count, LOOP_ROWS)):
            job = snap.job(ns, f"{e.key}-{i}")
            rows.append(Row(f"  {e.loop_word} {i}{item_shown(e, i, job)}", "", f"{e.key}-{i}", job, child=True,
                            item=True))
        if count > LOOP_ROWS:
            rows.append(Row(f"  … {count - LOOP_ROWS} more", "", "", None, child=True))
        if count:
            units[-1] = (rows, [(f"{e.name} {e.loop_word} {i}", f"{e.key}-{i}") for i in range(count)], 1)
    if sum(len(rows) for rows, _, _ in units) <= max_rows:
        return [row for rows, _, _ in units for row in rows]
    out: list[Row] = []
    room = max(0, max_rows - LISTED_ROWS - 2)   # (the rows of the summary at the end)
    for i, (rows, _, _) in enumerate(units):
        if len(out) + len(rows) > room:
            rest = units[i:]
            return out + summary_rows(f"… {sum(n for _, _, n in rest):,} more flows", "",
                                      [m for _, ms, _ in rest for m in ms], states)
        out.extend(rows)
    return out


_FAILURE = re.compile(r'\{"name":("(?:[^"\\]|\\.)*"),"outcome":"(\w+)"')


def item_shown(e: _Entry, index: int, job: Obj | None, limit: int = ITEM_SHOWN) -> str:
    """`: <the item>` after a loop item's label, `limit` characters at most (`: resnet50`, `: {"lr":0.1,…`):
    withItems' from the spec, a withParam's from its vcjob (flow.ITEM_ANNOTATION; the exit handler's over
    `{{workflow.failures}}`: `train Failed`); "" when not known (no vcjob yet) or for an iteration."""
    if e.loop_word != "item":
        return ""
    if e.items is not None:
        return f": {flow.item_text(e.items[index], limit)}" if index < len(e.items) else ""
    text = meta.annotations(job).get(flow.ITEM_ANNOTATION) if job is not None else None
    if not isinstance(text, str) or not text:
        return ""
    failure = _FAILURE.match(text)   # (a failure the exit handler reads: its JSON may be cut after them)
    if failure:
        text = f"{json.loads(failure[1])} {failure[2]}"
    return f": {flow.item_text(text, limit)}"


REPORT_ITEM_SHOWN = 60   # characters of a loop item's value in a line of a report (no column to fit)


def loop_item(jf: Obj, key: str, snap: Snapshot | None = None, limit: int = REPORT_ITEM_SHOWN) -> tuple[str, str]:
    """(flow name, `item 2: resnet50` / `iteration 2`) for vcjob `key` of JobFlow `jf` when it is a loop's item or
    a repeat's iteration, named as the live view names its row (the value cut at `limit`; a withParam's item is
    read from its vcjob in `snap`: without it, `item 2`); ("", "") for any other vcjob."""
    head, _, index = key.rpartition("-")
    if not index.isdigit():
        return "", ""
    for e in layout(meta.name(jf), jf.get("spec") or {}):
        if e.loop_word and e.key == head:
            job = snap.job(meta.namespace(jf), key) if snap is not None else None
            return e.name, f"{e.loop_word} {int(index)}{item_shown(e, int(index), job, limit)}"
    return "", ""


def job_item(snap: Snapshot, job: Obj) -> str:
    """`flow train, item 12: 0.013` for a vcjob a JobFlow of `snap` made for a loop's item (or a repeat's
    iteration); "" for any other vcjob."""
    owner = meta.labels(job).get(flow.CREATED_BY_JOB_FLOW, "")
    for jf in snap.jobflows:
        if owner == f"{meta.namespace(jf)}.{meta.name(jf)}":
            name, item = loop_item(jf, meta.name(job), snap)
            return f"flow {name}, {item}" if item else ""
    return ""


class _States:
    """The state drawn for each flow of one JobFlow (its row's state cell), by vcjob name."""

    def __init__(self, jf: Obj, snap: Snapshot):
        self.snap, self.namespace, self.suspended = snap, meta.namespace(jf), is_suspended(jf)
        self.conditions = (jf.get("status") or {}).get("conditions") or {}

    def job(self, key: str) -> Obj | None:
        return self.snap.job(self.namespace, key)

    def of(self, key: str) -> str:
        return flow_state(self.conditions.get(key) or {}, self.job(key), self.suspended) or "unknown"


def summary_rows(label: str, depends: str, members: list[tuple[str, str]], states: _States) -> list[Row]:
    """A summary row for many flows (`members`: label and vcjob name), with the failed and running ones
    listed under it: the first LISTED_ROWS, then a row counting the others."""
    by_state: dict[str, list[tuple[str, str]]] = {}
    for member in members:
        by_state.setdefault(states.of(member[1]), []).append(member)
    rows = [Row(label, depends, "", None, members=tuple(members), counts=_counts(by_state))]
    listed = [m for state in COUNT_ORDER if state in LISTED_STATES for m in by_state.get(state, ())]
    rows += [Row(f"  {lbl}", "", key, states.job(key), child=True) for lbl, key in listed[:LISTED_ROWS]]
    if len(listed) > LISTED_ROWS:
        rest: dict[str, list[tuple[str, str]]] = {}
        for member in listed[LISTED_ROWS:]:
            rest.setdefault(states.of(member[1]), []).append(member)
        rows.append(Row(f"  … {len(listed) - LISTED_ROWS:,} more", "", "", None, child=True, counts=_counts(rest)))
    return rows


def _counts(by_state: dict[str, list[Any]]) -> tuple[tuple[str, int], ...]:
    ranked = sorted(by_state, key=lambda s: (COUNT_ORDER.index(s) if s in COUNT_ORDER else len(COUNT_ORDER), s))
    return tuple((state, len(by_state[state])) for state in ranked)


def flow_state(cond: Obj, job: Obj | None, suspended: bool) -> str:
    """The state drawn for a flow: its vcjob's phase (`retrying` between attempts, `suspended` in a
    suspended flow's back-off), or without a vcjob its JobFlow condition's (waiting, probe, suspended,
    Skipped, not created ...)."""
    if job is None:
        phase, reason = cond.get("phase") or "", cond.get("reason") or ""
        if phase in ("", batch.JobPhase.PENDING) and (reason in WAITING_STATES or not reason):
            return WAITING_STATES.get(reason, "waiting")
        return phase
    if cond.get("reason") in ("RetryBackoff", "Retrying"):   # the failed attempt is about to run again
        return "suspended" if suspended and cond.get("reason") == "RetryBackoff" else "retrying"
    return meta.phase(job) or "Pending"


def first_pending_reason(snap: Snapshot, jf: Obj, row: Row) -> str:
    """Why the first pending vcjob of a summary row that says why waits (`m7: 0/1 tasks in gang
    unschedulable ...`), among its first PENDING_ASKED pending vcjobs; "" if none says."""
    ns, asked = meta.namespace(jf), 0
    for label, key in row.members:
        job = snap.job(ns, key)
        if job is not None and (meta.phase(job) or "Pending") == "Pending":
            reason = why_waiting(snap, job)
            if reason:
                return f"{label}: {reason}"
            asked += 1
            if asked == PENDING_ASKED:
                break
    return ""


_FINISHED_FLOW = frozenset({flow.FlowPhase.SUCCEED, flow.FlowPhase.FAILED})


def is_suspended(jf: Obj) -> bool:
    return str(meta.annotations(jf).get(flow.SUSPEND_ANNOTATION, "")).lower() == "true"


def phases(snap: Snapshot) -> dict[str, str]:
    """Current phase of every JobFlow and vcjob, keyed for transition detection; a JobFlow suspended (`vcctl
    jobflow suspend`) while it runs is `Running (suspended)`, so a watch without the live view says so too."""
    out = {f"JobFlow {meta.key(jf)}": jobflow_phase(jf) for jf in snap.jobflows}
    out.update({f"vcjob {meta.key(j)}": meta.phase(j) for j in snap.jobs})
    return out


def jobflow_phase(jf: Obj) -> str:
    """A JobFlow's phase in a line: `Running (suspended)` while `vcctl jobflow suspend` holds it unfinished."""
    phase = meta.phase(jf)
    return phase + (" (suspended)" if phase and phase not in _FINISHED_FLOW and is_suspended(jf) else "")


failed_init_containers = podfailure.failed_init_containers
pod_failure_reasons = podfailure.pod_failure_reasons


def is_bare_pod(pod: Obj) -> bool:
    """A pod no controller made (kubectl-applied): `vcctl run` follows it as it follows a vcjob."""
    return not any(isinstance(r, dict) and r.get("controller")
                   for r in (pod.get("metadata") or {}).get("ownerReferences") or [])


def bare_pods(snap: Snapshot) -> list[Obj]:
    return [p for p in snap.pods if is_bare_pod(p)]


def why_pod_waits(snap: Snapshot, pod: Obj) -> str:
    """Why a bare pod does not run: its scheduler, its PodGroup's Unschedulable condition (the group
    Volcano's podgroup controller made is owned by the pod), or a container that cannot start."""
    scheduler = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
    if scheduler != "volcano" and not (pod.get("spec") or {}).get("nodeName"):
        return (f"schedulerName {scheduler}: only Volcano's scheduler runs here "
                "(set schedulerName: volcano, or make it a vcjob)")
    pg = snap.podgroup_of(pod)
    refused = snap.podgroup_errors.get((kinds.POD.kind, meta.namespace(pod), meta.name(pod)))
    if pg is None and refused:
        return refused
    for cond in ((pg or {}).get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Unschedulable" and cond.get("status") == "True":
            return cond.get("message") or cond.get("reason") or "unschedulable"
    return container_blocked(pod)


def failure_reason(snap: Snapshot, job: Obj) -> str:
    """Why a vcjob failed, from its pods (podfailure.job_failure: `pod a-t-0: container main exited with code 3
    (Error)`), else its state's reason."""
    return podfailure.job_failure(job, snap.pods_of(job))
