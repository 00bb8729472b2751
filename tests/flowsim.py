"""A JobFlow engine driven like the controller drives it, with vcjobs as plain dicts and no API: the
harness of the engine tables and the flow-primitive properties.

`Sim(flows, **spec)` builds the engine; `step()` lets it decide, "creates" the vcjobs it asks for
(recording the order and, for each, whether its dependency held at that moment) and deletes the
attempts it replaces; `finish(name, phase, output)` plays the vcjob controller. Time is a virtual
datetime advanced with `advance(seconds)`.
"""
from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

from vclite.api import flowexpr, meta
from vclite.controllers.jobflow import controller as controller_mod, engine, objects, plan as plan_mod, readiness
from vclite.controllers.jobflow import runstate
from vclite.lib import clock as clock_mod

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
NAME = "jf"


def jobflow(flows: list[dict], status: dict | None = None, annotations: dict | None = None, **spec: Any) -> dict:
    obj = {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow",
           "metadata": {"name": NAME, "namespace": "default", "uid": "jf-uid", "annotations": annotations or {}},
           "spec": {"flows": flows, **spec}}
    if status is not None:
        obj["status"] = status
    return obj


class _Builder:
    """The JobFlow controller's own vcjob building (`_build`: placeholders, patch, waiting for outputs, skipping
    a flow whose template reads an output that cannot be read), without its API."""
    _build = controller_mod.JobFlowController._build
    _note = controller_mod.JobFlowController._note

    @staticmethod
    def _placeholders_of(template: dict) -> list[str]:
        return objects.placeholders(template.get("spec") or {})


def job_template(flow: str, command: str) -> dict:
    """A JobTemplate whose container runs `command` (where its placeholders are)."""
    pod = {"spec": {"containers": [{"name": "c", "image": "busybox", "command": ["sh", "-c", command]}],
                    "restartPolicy": "Never"}}
    return {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobTemplate",
            "metadata": {"name": flow, "namespace": "default"},
            "spec": {"tasks": [{"name": "main", "replicas": 1, "template": pod},
                               {"name": "ps", "replicas": 1, "template": pod}]}}


class Sim:
    def __init__(self, flows: list[dict], probe: dict | None = None, suspended: bool = False,
                 templates: dict[str, str] | None = None, **spec: Any):
        self.now = T0
        self.obj = jobflow(flows, annotations={"flow.volcano.sh/suspend": "true"} if suspended else {}, **spec)
        self.plan = plan_mod.compile_spec(self.obj["spec"], NAME)
        self.jobs: dict[str, dict] = {}
        self.outputs: dict[str, str] = {}
        self.created: list[str] = []
        self.early: list[str] = []      # vcjobs created while their flow's dependency did not hold
        self.deleted: list[str] = []
        self.created_at: list[tuple[str, dt.datetime, int | None]] = []   # (vcjob, when, activeDeadlineSeconds)
        self.probe = probe if probe is not None else {}
        # flow -> the command of its JobTemplate, or its whole spec: vcjobs are then built as the controller builds
        # them, and the command each was created with is kept in `commands` — its spec in `specs`, for a spec given
        # whole (None: every vcjob is a plain two-task job)
        self.templates = {f: job_template(f, c) if isinstance(c, str) else {**job_template(f, ""), "spec": c}
                          for f, c in templates.items()} if templates is not None else None
        self.whole = {f for f, c in (templates or {}).items() if not isinstance(c, str)}
        self.commands: list[tuple[str, str]] = []
        self.specs: list[tuple[str, dict]] = []
        self.notes: dict = {}
        self._uids = itertools.count(1)
        self.eng = engine.Engine(self.obj, self.plan, reader=lambda inst: self.outputs.get(inst.name, ""),
                                 prober=lambda job, entry: self.probe.get((meta.name(job), entry.task)))   # None: ask again
        self.eng.load([], self.now)
        self.status: dict = {}
        self.acts = self.step()

    # ---- playing the controller -----------------------------------------------------------------
    def step(self) -> runstate.Actions:
        tried: set[str] = set()     # (as the controller's sync: each vcjob tried once — one waiting stays waiting)
        for _ in range(1000):
            acts = self.eng.decide(self.now)
            if acts.delete:
                for name, _ in acts.delete:
                    self.jobs.pop(name, None)
                    self.deleted.append(name)
                    self.eng.observe(name, None, self.now)
                continue
            todo = [i for i in acts.create if i.name not in tried or i.note is None]
            if not todo:
                break
            built = []
            while todo:                    # (as controller._create: every vcjob of the moment built first, and
                for inst in todo:          # those what building decided: a flow started, an output come)
                    tried.add(inst.name)
                    spec = self._build(inst)
                    if spec is not None:
                        built.append((inst, spec))
                self.eng.built(self.now)
                done = {i.name for i, _ in built}
                todo = [i for i in self.eng.to_build() if i.name not in done and i.note is None]
            for inst, spec in built:
                if self.eng.still_to_create(inst):
                    self._create(inst, spec)
        self.status = self.eng.status(self.now)
        self.acts = acts
        return acts

    def _build(self, inst: runstate.Inst) -> dict | None:
        """The vcjob's spec, or None when it is not made now (waiting for an output, its flow Skipped, refused)."""
        if self.templates is None:
            return {"tasks": [{"name": "main", "replicas": 1}, {"name": "ps", "replicas": 1}]}
        built = _Builder._build(_Builder(), self.obj, self.eng, self.templates[inst.flow], inst, self.notes)
        return None if built is None else built["spec"]

    def _create(self, inst: runstate.Inst, spec: dict) -> None:
        d = self.plan.flows[inst.flow]
        if inst.flow in self.whole:
            self.specs.append((inst.name, spec))
        elif self.templates is not None:
            self.commands.append((inst.name, spec["tasks"][0]["template"]["spec"]["containers"][0]["command"][2]))
        if not d.exit and d.dependency is not None and not self._holds(d):
            self.early.append(inst.name)
        job = {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
               "metadata": {"name": inst.name, "namespace": "default", "uid": f"u{next(self._uids)}",
                            "creationTimestamp": clock_mod.format_time(self.now)},
               "spec": spec,
               "status": {"state": {"phase": "Pending", "lastTransitionTime": clock_mod.format_time(self.now)}}}
        self.jobs[inst.name] = job
        self.created.append(inst.name)
        self.created_at.append((inst.name, self.now, self.eng.attempt_deadline(inst, self.now)))
        self.eng.observe(inst.name, job, self.now)

    def _holds(self, d: plan_mod.FlowDef) -> bool:
        def facts(name: str) -> frozenset[str]:
            if name.startswith(plan_mod.PROBE_PREFIX):
                return self.eng._probe_facts(d, name[len(plan_mod.PROBE_PREFIX):])
            return self.eng._facts(name)
        return flowexpr.evaluate_depends(d.dependency, {a: facts(a) for a in d.atoms}) is True

    # ---- playing the vcjob controller ------------------------------------------------------------
    def set(self, name: str, phase: str, output: str | None = None, tasks: dict | None = None) -> None:
        job = self.jobs[name]
        job = {**job, "status": {**job["status"], "state": {"phase": phase,
                                                            "lastTransitionTime": clock_mod.format_time(self.now)}}}
        if tasks is not None:
            job["status"]["taskStatusCount"] = tasks
        if phase == "Failed":
            job["status"]["failed"] = 1
        self.jobs[name] = job
        if output is not None:
            self.outputs[name] = output
        self.eng.observe(name, job, self.now)
        self.step()

    def finish(self, name: str, phase: str = "Completed", output: str | None = None) -> None:
        """The vcjob runs, then ends in `phase` (with the output its pod wrote)."""
        if self.jobs[name]["status"]["state"]["phase"] == "Pending":
            self.set(name, "Running")
        self.set(name, phase, output)

    def suspend(self, on: bool) -> None:
        """`vcctl jobflow suspend` (on) or `resume`: the annotation changes."""
        annotations = {"flow.volcano.sh/suspend": "true"} if on else {}
        self.obj["metadata"]["annotations"] = annotations
        self.eng.set_meta(jobflow([], annotations=annotations))
        self.step()

    def restart(self) -> None:
        """The controller restarts: a new engine from the stored status, the JobFlow's metadata and the vcjobs
        there are now (as controller._engine builds one), then it decides."""
        spec = {k: v for k, v in self.obj["spec"].items() if k != "flows"}
        stored = jobflow(self.obj["spec"]["flows"], self.status, annotations=self.obj["metadata"]["annotations"],
                         **spec)
        self.eng = engine.Engine(stored, self.plan, reader=self.eng.reader, prober=self.eng.prober)
        self.eng.load(list(self.jobs.values()), self.now)
        self.step()

    def advance(self, seconds: float) -> None:
        self.now += dt.timedelta(seconds=seconds)
        self.step()

    # ---- reading ---------------------------------------------------------------------------------
    @property
    def phase(self) -> str:
        return self.status["state"]["phase"]

    def cond(self, key: str) -> dict:
        return self.status.get("conditions", {}).get(f"{NAME}-{key}", {})

    def reason(self, key: str) -> str:
        return self.cond(key).get("reason", "")

    def verdicts(self) -> dict[str, readiness.State]:
        return {n: fr.verdict.state for n, fr in self.eng.flows.items() if fr.verdict is not None}

    def rebuilt(self) -> dict:
        """The status a freshly started controller computes from this status and these vcjobs."""
        eng = engine.build(jobflow(self.obj["spec"]["flows"], self.status,
                                   **{k: v for k, v in self.obj["spec"].items() if k != "flows"}),
                           list(self.jobs.values()), self.now, reader=lambda inst: self.outputs.get(inst.name, ""))
        return eng.status(self.now)


def normalized(status: dict) -> dict:
    """A status with its lists sorted: they are in transition order, which a rebuild cannot know."""
    return {k: sorted(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else v
            for k, v in status.items()}
