"""Warnings for manifests that are valid but most likely not what their author meant.

Nothing here refuses anything (Volcano and Kubernetes accept these manifests, and vclite runs
them the same way); `vcctl validate` and `vcctl run` print each as a warning:

- a vcjob / JobTemplate task whose pod template has no `restartPolicy`: Kubernetes defaults it to
  `Always`, so the task's containers are restarted whenever they exit — even with code 0 — and the
  vcjob never completes. Right for a server task (a parameter server ended by a policy); a batch
  task wants `Never` or `OnFailure`. (An explicit `Always` is taken as meant.)
- a container with a terminationMessagePath other than Kubernetes' default, or a command that writes the
  default `/dev/termination-log` by name — only where this host cannot give a container its own view of
  the file system (`paths_mapped()` False; executor/mountview.py): the local executor then gives every
  container its own message file, `$TERMINATION_MESSAGE_PATH`, so a script that writes to the written
  path itself produces no output (a JobFlow reads it) when run locally (`/dev/termination-log` being this
  machine's own file).
- a JobFlow whose suspend annotation (`flow.volcano.sh/suspend`) is neither "true" nor "false" (`yes`):
  only "true" suspends it.
- a JobFlow flow whose `dependsOn` has a `probe` or a `strategy` but no `targets`: both apply to the
  targets, so with none they are never looked at (the flow starts at once).
- (across documents) a probe entry whose `taskName` is not a task of its target's JobTemplate: no
  entry covers that target, so the flow waits for it to be Completed, as without a probe.
- (across documents) a flow placeholder in a JobTemplate that means nothing in the flow using it
  (`{{item}}` outside a loop, `{{params.x}}` without spec.arguments…): left as written, as Volcano does.
- a vcjob / JobTemplate, or one of its tasks' pod templates, naming a `schedulerName` other than
  `volcano`: vclite runs Volcano's scheduler only, so run here such pods are never placed and the
  vcjob stays Pending.
- a vcjob / JobTemplate whose `minSuccess` is more than all its tasks' replicas: it can never be
  reached, so the vcjob ends Failed once its pods have ended, however they end.
- a job plugin argument the plugin's Go flag set cannot parse (`--workers=w`, `--port=abc`): Volcano's
  plugin logs the error and goes on with the flags read before it, so that argument and every one
  after it are ignored.

Pure functions over plain dicts.
"""
from __future__ import annotations

from typing import Any, Callable

from vclite.api import batch, flow, flowsyntax, flowtemplate
from vclite.lib import goflags

RESTART_POLICY_UNSET = ("not set, so Kubernetes' default Always applies: this task's containers restart whenever "
                        "they exit (even with code 0) and the vcjob never completes; set Never or OnFailure for a "
                        "task that should end")
_KINDS = ("Job", "JobTemplate")
DEFAULT_TERMINATION_PATH = "/dev/termination-log"
OUTPUT_TASK = flow.OUTPUT_TASK_ANNOTATION


def other_scheduler(name: str) -> str:
    return (f'"{name}" is not {batch.DEFAULT_SCHEDULER}: vclite (`vcctl run`, `vcctl server`) runs Volcano\'s '
            "scheduler only, so run here these pods are never placed and the vcjob stays Pending")


def custom_termination_path(path: str) -> str:
    return (f'"{path}" is used on a cluster; run locally, each container writes its termination message (a '
            f'JobFlow output) to the file $TERMINATION_MESSAGE_PATH names, not to "{path}": write to '
            f'"${{TERMINATION_MESSAGE_PATH:-{path}}}" to work in both')


PROBE_LISTS = ("taskStatusList", "httpGetList", "tcpSocketList")


def _dicts(value: Any) -> list[tuple[int, dict]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, dict)] if isinstance(value, list) else []


def _left_alone(obj: Any, base: str) -> list[tuple[str, str]]:
    """`{{x}}` text whose root is not a flow placeholder's: used as it is (as Volcano does), said once."""
    return [(path, f"{{{{{name}}}}} is not a flow placeholder ({', '.join(flowtemplate.ROOTS)}): "
                   f"it is left as it is") for name, path in
            flowtemplate.placeholder_paths(obj, base, flowtemplate.OTHER_BRACES).items()]


def _flows_advice(spec: dict) -> list[tuple[str, str]]:
    out = []
    for i, f in _dicts(spec.get("flows")):
        patch = f.get("patch")
        if isinstance(patch, dict):
            out += _left_alone(patch.get("jobSpec"), f"spec.flows[{i}].patch.jobSpec")
        dep = f.get("dependsOn")
        if not isinstance(dep, dict) or dep.get("targets") or dep.get("expression") is not None:
            continue   # (with an expression, a probe or strategy is an error)
        for field in ("probe", "strategy"):
            if dep.get(field):
                out.append((f"spec.flows[{i}].dependsOn.{field}",
                            f"applies to dependsOn.targets, and there are none: it is never looked at "
                            f"(flow {f.get('name')!r} starts without waiting)"))
    return out


def _suspend_advice(md: Any) -> list[tuple[str, str]]:
    """The suspend annotation with a value that is neither "true" nor "false": only "true" suspends."""
    value = (md.get("annotations") or {}).get(flow.SUSPEND_ANNOTATION) if isinstance(md, dict) and \
        isinstance(md.get("annotations"), dict) else None
    if value is None or str(value).lower() in ("true", "false", ""):
        return []
    return [(f"metadata.annotations[{flow.SUSPEND_ANNOTATION}]",
             f"\"{value}\" is not \"true\": the JobFlow is not suspended (only \"true\" suspends it)")]


def _why_left(name: str, flow_name: str, flows: set[str], params: bool) -> str:
    root, _, rest = name.partition(".")
    return {"item": f'flow "{flow_name}" has no withItems or withParam',
            "iteration": f'flow "{flow_name}" has no repeat',
            "params": "the JobFlow declares no spec.arguments.parameters",
            "outcomes": f'flow "{flow_name}" is not the exit handler (spec.onExit)' if rest.split(".")[0] in flows
            else f'no flow is called "{rest.split(".")[0]}"',
            "workflow": f'flow "{flow_name}" is not the exit handler (spec.onExit)'
            if rest.split(".")[0] in flowsyntax.WORKFLOW_FIELDS else
            f'workflow has no field "{rest.split(".")[0]}" ({", ".join(flowsyntax.WORKFLOW_FIELDS)})',
            }.get(root, f'no flow is called "{rest.split(".")[0]}"')


def template_context_advice(jobflow: Any, template_spec: Callable[[str], Any]) -> list[tuple[str, str]]:
    """(field path, warning) for each flow placeholder of a JobTemplate that means nothing in the flow
    using it (`{{item}}` in a flow that is not a loop…, flowtemplate.in_context): it is left as written,
    as Volcano leaves all of them. `template_spec(name)`: the spec of JobTemplate `name`, None if unknown."""
    spec = jobflow.get("spec") if isinstance(jobflow, dict) else None
    if not isinstance(spec, dict):
        return []
    flows = {f["name"] for _, f in _dicts(spec.get("flows")) if isinstance(f.get("name"), str)}
    params = bool(flowtemplate.arguments(spec))
    out = []
    for i, f in _dicts(spec.get("flows")):
        name = f.get("name")
        template = template_spec(name) if isinstance(name, str) else None
        if template is None:
            continue
        loop, repeat = f.get("withItems") is not None or f.get("withParam") is not None, f.get("repeat") is not None
        exit = name == spec.get("onExit")
        for placeholder, where in flowtemplate.placeholder_paths(template, "spec").items():
            if not flowtemplate.in_context(placeholder, flows, params=params, loop=loop, repeat=repeat, exit=exit):
                out.append((f"spec.flows[{i}].name",
                            f'JobTemplate "{name}": {where}: {{{{{placeholder}}}}} is left as it is: '
                            f"{_why_left(placeholder, name, flows, params)}"))
    return out


def probe_task_advice(jobflow: Any, template_tasks: Callable[[str], "list[str] | None"]) -> list[tuple[str, str]]:
    """(field path, warning) for each probe entry of a JobFlow naming a task that no target's
    JobTemplate has; `template_tasks(name)`: the task names of JobTemplate `name`, None if unknown."""
    spec = jobflow.get("spec") if isinstance(jobflow, dict) else None
    out = []
    for i, f in _dicts(spec.get("flows") if isinstance(spec, dict) else None):
        dep = f.get("dependsOn")
        probe = dep.get("probe") if isinstance(dep, dict) else None
        targets = [t for t in dep.get("targets") or () if isinstance(t, str)] if isinstance(dep, dict) else []
        if not isinstance(probe, dict) or not targets:
            continue
        known = {t: template_tasks(t) for t in targets}
        if any(tasks is None for tasks in known.values()):
            continue   # (a template not among the documents: it may have the task)
        for kind in PROBE_LISTS:
            for j, entry in _dicts(probe.get(kind)):
                task = entry.get("taskName")
                if isinstance(task, str) and task and not any(task in tasks for tasks in known.values()):
                    have = "; ".join(f'JobTemplate "{t}": {", ".join(tasks) or "no tasks"}' for t, tasks in known.items())
                    out.append((f"spec.flows[{i}].dependsOn.probe.{kind}[{j}].taskName",
                                f'no target has a task "{task}" ({have}): this entry never applies, so the '
                                f"flow waits for its targets to be Completed"))
    return out


def advice_in(obj: Any, paths_mapped: Callable[[], bool] = lambda: False) -> list[tuple[str, str]]:
    """(field path, warning) for each likely mistake in one API object."""
    if isinstance(obj, dict) and obj.get("kind") == "JobFlow" and isinstance(obj.get("spec"), dict):
        return _suspend_advice(obj.get("metadata")) + _flows_advice(obj["spec"])
    if not isinstance(obj, dict) or obj.get("kind") not in _KINDS or not isinstance(obj.get("spec"), dict):
        return []
    tasks = obj["spec"].get("tasks")
    out = _left_alone(obj["spec"], "spec") if obj.get("kind") == "JobTemplate" else []
    output_task = ((obj.get("metadata") or {}).get("annotations") or {}).get(OUTPUT_TASK) \
        if obj.get("kind") == "JobTemplate" and isinstance(obj.get("metadata"), dict) else None
    out += _plugin_args_advice(obj["spec"].get("plugins"))
    out += _scheduler_advice(obj["spec"], "spec")
    out += _min_success_advice(obj["spec"], tasks)
    names = [t.get("name") for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []
    if isinstance(output_task, str) and output_task and output_task not in names:
        out.append((f"metadata.annotations[{OUTPUT_TASK}]",
                    f'no task "{output_task}" (tasks: ' f"{', '.join(map(str, names)) or 'none'}): the job's output "
                    f"(the termination message of that task's first pod) will be empty"))
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        template = task.get("template") if isinstance(task, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        if not isinstance(pod_spec, dict):
            continue
        if pod_spec.get("restartPolicy") in (None, ""):
            out.append((f"spec.tasks[{i}].template.spec.restartPolicy", RESTART_POLICY_UNSET))
        out += _scheduler_advice(pod_spec, f"spec.tasks[{i}].template.spec")
        containers = pod_spec.get("containers")
        for j, c in enumerate(containers if isinstance(containers, list) else []):
            path = c.get("terminationMessagePath") if isinstance(c, dict) else None
            if isinstance(path, str) and path not in ("", DEFAULT_TERMINATION_PATH):
                found = [(f"spec.tasks[{i}].template.spec.containers[{j}].terminationMessagePath",
                          custom_termination_path(path))]
            elif isinstance(c, dict):
                found = _writes_default_path(c, f"spec.tasks[{i}].template.spec.containers[{j}]")
            else:
                found = []
            if found and not paths_mapped():   # (asked only then: finding out starts a process)
                out += found
    return out


def _min_success_advice(spec: dict, tasks: Any) -> list[tuple[str, str]]:
    wanted = spec.get("minSuccess")
    replicas = [t.get("replicas", 1) for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []
    if not isinstance(wanted, int) or isinstance(wanted, bool) or \
            not all(isinstance(r, int) and not isinstance(r, bool) for r in replicas):
        return []   # (a placeholder or a mistyped value: admission's to report)
    if wanted > sum(replicas):
        return [("spec.minSuccess", f"{wanted} is more than the job's {sum(replicas)} pods (all its tasks' replicas): "
                                    "it can never be reached, so the vcjob ends Failed once its pods have ended")]
    return []


def _scheduler_advice(spec: dict, base: str) -> list[tuple[str, str]]:
    name = spec.get("schedulerName")
    if isinstance(name, str) and name not in ("", batch.DEFAULT_SCHEDULER) and "{{" not in name:
        return [(f"{base}.schedulerName", other_scheduler(name))]
    return []


def _plugin_args_advice(plugins: Any) -> list[tuple[str, str]]:
    """An argument a job plugin cannot parse (Go's flag package: an unknown flag, a bad or missing value)."""
    out = []
    for name, args in plugins.items() if isinstance(plugins, dict) else ():
        flags = batch.PLUGIN_FLAGS.get(name)
        if flags is None or not isinstance(args, list) or any(not isinstance(a, str) or "{{" in a for a in args):
            continue   # (another problem, or a flow placeholder: its value is known when the vcjob is made)
        error = goflags.parse(args, flags)[1]
        if error:   # the argument that stopped the parsing: the shortest prefix that fails
            k = next(k for k in range(len(args)) if goflags.parse(args[:k + 1], flags)[1])
            known = ", ".join(f"--{f}" for f in flags)
            out.append((f"spec.plugins.{name}[{k}]", f"{error}: Volcano's {name} plugin ignores this argument and "
                                                     f"every one after it (its flags: {known})"))
    return out


def _writes_default_path(container: dict, base: str) -> list[tuple[str, str]]:
    """A command naming /dev/termination-log itself: run locally, that is this machine's own file (shared
    by every pod, and usually not writable), so the output would be lost."""
    for key in ("command", "args"):
        words = container.get(key)
        for k, word in enumerate(words if isinstance(words, list) else []):
            if isinstance(word, str) and DEFAULT_TERMINATION_PATH in word and "TERMINATION_MESSAGE_PATH" not in word:
                return [(f"{base}.{key}[{k}]", f"writes {DEFAULT_TERMINATION_PATH} itself: "
                                                + custom_termination_path(DEFAULT_TERMINATION_PATH))]
    return []
