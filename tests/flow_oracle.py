"""An oracle for the JobFlow outcome rules, written from docs/jobflow-primitives.md and
docs/jobflow-expressions.md (not from the engine): which vcjobs run, which flows are Skipped and why,
and the JobFlow's final phase, given each vcjob's predetermined attempts (phase and output).

It covers `targets` with `strategy: all|any`, probes (`taskStatusList` on the `ps` task, `httpGetList` and
`tcpSocketList` on `main`, entries on a task no vcjob has), `dependsOn.expression` (three-valued, with
`Finished` and the fan-out outcomes `AnyCompleted` … `AllFailed`), outputs (a vcjob's termination message; a
fan-out's JSON list, a repeat's last iteration's), `when` and `repeat.until` as `||`/`&&` of comparisons over
`params`, `outputs` and `iteration`, `withItems`, `withParam` over an earlier flow's output, `repeat` with `limit`,
`retry.limit`, `spec.onExit`, suspend / resume, a finished vcjob deleted (its TTL, a user: the outcome
stands; a plain Volcano JobFlow re-creates a Completed one a user deleted while it runs), `when` over JSON
outputs (`outputs.f.acc.0`, null, mixed types), and JobTemplates' placeholders (`{{params.p}}`, `{{item}}`,
`{{iteration}}`, `{{outputs.f}}`: a read waits for its flow, skips the reader when that flow did not complete
unless its expression names it, is refused for the reader's own flow outside a repeat; the command each vcjob
gets), `patch.jobSpec` merged onto a JobTemplate's whole spec (`patched`, from the rules of
docs/jobflow-expressions.md "Patches": job fields replaced, tasks by name, vcjob volumes by mountPath, plugin
arguments appended, pod templates merged through their keyed lists; a patch that cannot be merged refuses the
vcjob) with its placeholders filled in and its output reads part of the flow's dependency (the spec each vcjob
gets). The property module plays restarts of the controller too (nothing changes). Back-off timing and
`maxDuration` are tests/retry_oracle.py's. A Skipped flow's message is checked where the docs give its words
(`never_message`), and so are the entries of docs/jobflow-primitives.md "Status" that say what a flow waits for
(`Waiting…`), that its `when` is false (`WhenFalse`) or that a stop left it uncreated (`NotCreated`): `conditions`,
at every step; other status messages (retries, loop summaries, `Suspended`'s words) are not covered.

`Oracle` is a state machine played in step with the engine: `running` is the set of vcjobs running
now; `finish(job)` ends the current attempt of `job` with its next predetermined phase and output,
`ps_up(job)` brings a running vcjob's ps task up, `suspend(on)` sets or removes the annotation; each
is one moment (`_settle`). `predict` plays it to the end in a given order. The rules, as the docs
state them:

- a flow's dependency is true, false or undecided: its `dependsOn`, and every output it reads (in
  `when`, `withParam`) from a flow its expression does not name, which must have Completed (one its
  expression names need only have finished); false skips it (`DependencyNeverMet`); true starts it
  unless the JobFlow is suspended (it is held, `Suspended`) or has stopped, or its `when` is false
  (`WhenFalse`) or cannot be evaluated (Failed, `InvalidCondition`), or its `withParam` is not a JSON
  list (Failed, `InvalidParam`: one failed item);
- an atom `x.<Outcome>` is undecided until `x` has an outcome, except `AnyCompleted` / `AnyFailed`,
  true as soon as one item did, `AllCompleted` false as soon as one item Failed and `AllFailed` as soon
  as one Completed; a flow without items counts as one item; `strategy: any` meets a fan-out target as
  soon as one of its items completed; a fan-out with no items is Completed at once (`NoItems`);
- a probe holds while every current vcjob of the target (every item, a repeat's last iteration) runs
  with every entry holding: its ps task Running (`taskStatusList`), its main task answering (`httpGetList`,
  `tcpSocketList`); entries naming a task the target does not have cover nothing — a target no entry covers
  is waited for as usual (Completed); it is false once the target finished before that (a fan-out with no items is
  met), and it never accepts the target's failure;
- a repeat runs iteration after iteration until `until` holds (Completed); an iteration that did not
  complete ends it in its phase; `until` that cannot be evaluated, or still false after `limit`
  iterations, fails it;
- a failure (Failed or Terminated, once no retry is left) is handled while a flow that accepts it (reads
  it in its `dependsOn`) is not Skipped and its dependency is not false; the first unhandled failure
  stops the JobFlow: nothing new starts — not even what became ready in the same moment: the vcjobs
  that moment would make are not made —, no retry or iteration starts (but the exit handler's), flows
  whose dependency is false are still Skipped, the others are `NotCreated` (a loop that started keeps
  `Pending`, no outcome);
- the exit handler runs once every other flow has an outcome, or after a stop once no other vcjob runs;
  it reads outputs as they are ("" for a flow that never ran);
- the JobFlow is Failed after a stop or when the exit handler failed, else Succeed;
- a JobTemplate's `{{outputs.f}}` reads are decided as its vcjobs are made (once resumed, while suspended): it
  waits while `f` runs; when `f` did not complete the reader is Skipped (`DependencyNeverMet`) — unless its
  expression names `f`, or it is the exit handler —, settled with the moment's other starts; a vcjob still
  waiting when the JobFlow stops is never made (`NotCreated`); outside a repeat its own output cannot be read
  (the vcjob is refused: a failure).
"""
from __future__ import annotations

import dataclasses
import json
import operator
import re
from typing import Callable, Iterable, Mapping, Sequence

FAILURES = ("Failed", "Terminated")
TASKS = ("main", "ps")                  # every vcjob's tasks (a probe entry naming another task covers nothing)
OUTCOMES = ("Completed", "Failed", "Terminated", "Skipped")
ALIASES = {"Succeeded": "Completed", "AnySucceeded": "AnyCompleted", "AllSucceeded": "AllCompleted"}

# ---- three-valued logic (None: undecided) --------------------------------------------------------------


def and3(values: Iterable[bool | None]) -> bool | None:
    values = list(values)
    return False if False in values else (None if None in values else True)


def or3(values: Iterable[bool | None]) -> bool | None:
    values = list(values)
    return True if True in values else (None if None in values else False)


def not3(value: bool | None) -> bool | None:
    return None if value is None else not value


# ---- dependency expressions -------------------------------------------------------------------------------

TOKEN = re.compile(r"\s*(&&|\|\||!|\(|\)|[A-Za-z0-9_][A-Za-z0-9_-]*(?:\.[A-Za-z]+)?)")
Expr = tuple   # ("atom", flow, outcome) | ("not", e) | ("and", l, r) | ("or", l, r)


def parse(text: str) -> Expr:
    """`!` binds tighter than `&&`, which binds tighter than `||`; a bare name means `.Completed`."""
    tokens, pos = [], 0
    while pos < len(text.rstrip()):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError(f"bad expression {text!r} at {pos}")
        tokens.append(m.group(1))
        pos = m.end()
    expr, rest = _or(tokens)
    if rest:
        raise ValueError(f"trailing {rest} in {text!r}")
    return expr


def _or(tokens: list[str]) -> tuple[Expr, list[str]]:
    left, tokens = _and(tokens)
    while tokens[:1] == ["||"]:
        right, tokens = _and(tokens[1:])
        left = ("or", left, right)
    return left, tokens


def _and(tokens: list[str]) -> tuple[Expr, list[str]]:
    left, tokens = _unary(tokens)
    while tokens[:1] == ["&&"]:
        right, tokens = _unary(tokens[1:])
        left = ("and", left, right)
    return left, tokens


def _unary(tokens: list[str]) -> tuple[Expr, list[str]]:
    if tokens[0] == "!":
        inner, rest = _unary(tokens[1:])
        return ("not", inner), rest
    if tokens[0] == "(":
        inner, rest = _or(tokens[1:])
        if rest[:1] != [")"]:
            raise ValueError("missing )")
        return inner, rest[1:]
    flow, _, outcome = tokens[0].partition(".")
    outcome = outcome or "Completed"
    return ("atom", flow, ALIASES.get(outcome, outcome)), tokens[1:]


def atoms(expr: Expr) -> set[str]:
    if expr[0] == "atom":
        return {expr[1]}
    return set().union(*(atoms(e) for e in expr[1:]))


def evaluate(expr: Expr, fact: Callable[[str, str], bool | None]) -> bool | None:
    kind = expr[0]
    if kind == "atom":
        return fact(expr[1], expr[2])
    if kind == "not":
        return not3(evaluate(expr[1], fact))
    values = [evaluate(e, fact) for e in expr[1:]]
    return and3(values) if kind == "and" else or3(values)


# ---- conditions (`when`, `repeat.until`) -----------------------------------------------------------------

COMPARE = re.compile(r"^\s*(iteration|params\.[A-Za-z0-9_-]+|outputs\.[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_]+)*)\s*"
                     r"(==|!=|>=|<=|<|>)\s*(?:'([^']*)'|(-?[0-9]+(?:\.[0-9]+)?))\s*$")
NUMBER = re.compile(r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$")
ORDER = {"==": operator.eq, "!=": operator.ne, ">=": operator.ge, "<=": operator.le, "<": operator.lt,
         ">": operator.gt}


class ConditionError(ValueError):
    """A condition that cannot be evaluated (a string that is not a number compared with a number)."""


@dataclasses.dataclass(frozen=True)
class Env:
    params: Mapping[str, str]
    output: Callable[[str], str]        # flow -> its output (the docs: surrounding whitespace removed)
    iteration: int | None = None


def output_reads(text: str | None) -> set[str]:
    return set(re.findall(r"outputs\.([A-Za-z0-9_-]+)", text or ""))


def json_field(output: str, path: list[str]):
    """`outputs.<flow>.<field>.<index>…`: the output parsed as JSON, then fields and list indexes; a missing
    output, field or index (or an output that is not JSON) is an error."""
    try:
        value = json.loads(output)
    except ValueError:
        raise ConditionError(f"{output!r} is not JSON") from None
    for part in path:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise ConditionError(f"no {part} in {value!r}")
    return value


def condition(text: str | None, env: Env) -> bool:
    """The oracle reads `a || b`, `a && b` (`&&` binds tighter; both short-circuit) of comparisons
    `<iteration | params.p | outputs.f | outputs.f.<field>.<index>…> <op> <'string' | number>`; None (no `when`)
    holds."""
    if text is None:
        return True
    return any(all(compare(part, env) for part in alternative.split("&&")) for alternative in text.split("||"))


def compare(text: str, env: Env) -> bool:
    m = COMPARE.match(text)
    if not m:
        raise ValueError(f"the oracle does not read the condition {text!r}")
    ref, op, string, number = m.groups()
    if ref == "iteration":
        left = float(env.iteration)
    elif ref.startswith("params."):
        left = env.params[ref.split(".", 1)[1]]
    else:
        _, flow, *path = ref.split(".")
        left = env.output(flow).strip()
        if path:
            left = json_field(left, path)
    if left is None and op in ("==", "!="):      # `null` equals only `null`
        return op == "!="
    if isinstance(left, bool) or left is None or isinstance(left, (dict, list)):
        raise ConditionError(f"{left!r} compared with a {'number' if number else 'string'}")   # (mixed types)
    if number is not None:                      # a string compared with a number is read as a number
        if isinstance(left, str) and not NUMBER.match(left):
            raise ConditionError(f"{left!r} is not a number")
        return ORDER[op](float(left), float(number))
    if op not in ("==", "!="):
        raise ValueError("the oracle orders numbers only")
    if not isinstance(left, str):               # a JSON number compared with a string: the string read as one
        if not NUMBER.match(string):
            raise ConditionError(f"{string!r} is not a number")
        return ORDER[op](float(left), float(string))
    return ORDER[op](left, string)


def param_items(output: str) -> int | None:
    """withParam: the number of items of the JSON list `output`, None when it is not one (InvalidParam)."""
    try:
        value = json.loads(output)
    except ValueError:
        return None
    return len(value) if isinstance(value, list) else None


def fan_out_output(messages: Sequence[str]) -> str:
    """A fan-out's output: the compact JSON list of its items' outputs (a JSON object as the object, else the
    string, surrounding whitespace removed)."""
    def item(message: str):
        try:
            value = json.loads(message)
        except ValueError:
            return message.strip()
        return value if isinstance(value, dict) else message.strip()
    return json.dumps([item(m) for m in messages], separators=(",", ":"))


# ---- the run ----------------------------------------------------------------------------------------------

FAN_OUT = ("items", "param")
PARAM = re.compile(r"\{\{outputs\.([A-Za-z0-9_-]+)\}\}")
TEMPLATE_READ = PARAM
PLACEHOLDER = re.compile(r"\{\{(params\.[A-Za-z0-9_-]+|outputs\.[A-Za-z0-9_-]+|item|iteration)\}\}")


@dataclasses.dataclass
class Flow:
    name: str
    kind: str                       # "none", "all", "any", "expression", "probe" (targets all + probe entries)
    targets: tuple[str, ...]
    expr: Expr | None
    when: str | None
    loop: str                       # "", "items" (withItems), "param" (withParam), "repeat"
    n_items: int | None             # withItems: how many
    item_values: list | None        # withItems: the items
    param: str | None               # withParam: the flow whose output it reads
    until: str | None               # repeat
    limit: int
    retry: int
    exit: bool
    probes: tuple = ()              # its probe entries (kind, taskName): taskStatus (Running), httpGet, tcpSocket
    expression: str = ""            # its `dependsOn.expression` as written
    probe_words: tuple = ()         # each entry as the status says it: `task ps Running`, `task main accepts TCP :6379`
    template: str = ""              # its JobTemplate's command (where its `{{…}}` placeholders are), or its spec's JSON
    spec: dict | None = None        # its JobTemplate's spec, when given whole (else a command: `template`)
    patch: dict | None = None       # its `patch.jobSpec`
    state: str = "Pending"          # Pending, Running, Completed, Failed, Terminated, Skipped, Unmade (NotCreated)
    reason: str = ""                # DependencyNeverMet, WhenFalse, InvalidCondition, InvalidParam, NoItems, ...
    message: tuple = ("", "")       # Skipped (DependencyNeverMet): (its condition's message, how: never_message)
    item_outcomes: list = dataclasses.field(default_factory=list)   # per item: None while it runs
    jobs: list = dataclasses.field(default_factory=list)            # its vcjobs, in the order they were made

    @property
    def named(self) -> set[str]:
        """The flows its `dependsOn` names (targets, or the expression's atoms)."""
        return atoms(self.expr) if self.expr is not None else set(self.targets)

    @property
    def accepts(self) -> set[str]:
        """The flows whose failure it may handle: a probe never accepts its target's failure."""
        return set() if self.kind == "probe" else self.named

    @property
    def reads_outputs(self) -> set[str]:
        read = output_reads(self.when) | output_reads(self.until) | ({self.param} if self.param else set())
        return (read | set(TEMPLATE_READ.findall(json.dumps(self.patch)))) - {self.name}   # (a patch's: its dependency)

    @property
    def finished(self) -> bool:
        return self.state in OUTCOMES

    def template_reads(self, flows: Iterable[str]) -> set[str]:
        """The flows whose output its JobTemplate reads (`{{outputs.<flow>}}` of a flow of the JobFlow)."""
        return set(TEMPLATE_READ.findall(self.template)) & set(flows) - {self.name}


def make_flow(f: Mapping, on_exit: str | None) -> Flow:
    dep = f.get("dependsOn") or {}
    if "expression" in dep:
        kind, expr = "expression", parse(dep["expression"])
    elif dep.get("targets"):
        kind, expr = ("probe" if dep.get("probe") else dep.get("strategy", "all")), None
    else:
        kind, expr = "none", None
    loop = ("items" if "withItems" in f else "param" if "withParam" in f else "repeat" if "repeat" in f else "")
    param = PARAM.fullmatch(f["withParam"]).group(1) if loop == "param" else None
    repeat = f.get("repeat") or {}
    probe = dep.get("probe") or {}
    kinds = (("taskStatusList", "taskStatus"), ("httpGetList", "httpGet"), ("tcpSocketList", "tcpSocket"))
    entries = tuple((kind, e["taskName"]) for key, kind in kinds for e in probe.get(key) or [])
    words = tuple({"taskStatus": f"task {e['taskName']} {e.get('phase')}",
                   "httpGet": f"task {e['taskName']} answers HTTP GET :{e.get('port')}{e.get('path') or '/'}",
                   "tcpSocket": f"task {e['taskName']} accepts TCP :{e.get('port')}"}[kind]
                  for key, kind in kinds for e in probe.get(key) or [])
    return Flow(f["name"], kind, tuple(dep.get("targets") or ()), expr, f.get("when"), loop,
                len(f["withItems"]) if loop == "items" else None, f.get("withItems"), param, repeat.get("until"),
                int(repeat.get("limit", 1)), int((f.get("retry") or {}).get("limit", 0)), f["name"] == on_exit, entries,
                dep.get("expression") or "", patch=(f.get("patch") or {}).get("jobSpec"), probe_words=words)


# ---- patch.jobSpec (docs/jobflow-expressions.md "Patches") ----------------------------------------------------

class PatchError(ValueError):
    """A patch that cannot be applied (an element without its key where the rule does not allow it): the vcjob is
    refused, its flow fails (`InvalidTemplate`)."""


POD_KEYED = {"containers": "name", "initContainers": "name", "volumes": "name", "tolerations": "key",
             "hostAliases": "ip"}                       # lists of a pod spec merged by a key (the docs' table)
CONTAINER_KEYED = {"env": "name", "volumeMounts": "mountPath", "ports": "containerPort"}
WHOLE = {"affinity", "securityContext", "livenessProbe", "readinessProbe", "startupProbe"}   # replaced whole


def patched(template: dict, patch: dict | None) -> dict:
    """The JobTemplate's spec with a flow's `patch.jobSpec` merged onto it, by the docs' rules: only what the patch
    sets changes (absent or null keeps the template's value); job fields and `policies` are replaced; `tasks` merge
    by name (a matched task's fields replaced, but its pod template, merged), `volumes` by mountPath (a matched one
    replaced whole), `plugins` append the patch's arguments the template's lack. New elements are appended."""
    spec = json.loads(json.dumps(template))
    for key, value in (patch or {}).items():
        if value is None:
            continue
        if key == "tasks":
            spec[key] = by_key(spec.get(key) or [], value, "name", merge_task)
        elif key == "volumes":
            spec[key] = by_key(spec.get(key) or [], value, "mountPath", lambda old, new: new)
        elif key == "plugins":
            plugins = dict(spec.get(key) or {})
            for name, args in value.items():
                if args is None:
                    continue
                have = list(plugins.get(name) or [])
                for arg in args:
                    if arg not in have:
                        have.append(arg)
                plugins[name] = have
            spec[key] = plugins
        else:
            spec[key] = value
    return json.loads(json.dumps(spec))


def by_key(old: list, new: list, key: str, merge_one: Callable[[dict, dict], dict]) -> list:
    """A keyed list: a patch element merges onto the template's element of the same key, else is appended; one
    without its key applies to the template's element when both lists have exactly one, else it is an error."""
    out = list(old)
    for element in new:
        if element.get(key) is None:
            if len(old) != 1 or len(new) != 1:
                raise PatchError(f"an element without {key}: the template has {len(old)}, the patch {len(new)}")
            out[0] = merge_one(out[0], element)
            continue
        at = [i for i, e in enumerate(out) if e.get(key) == element[key]]
        if at:
            out[at[0]] = merge_one(out[at[0]], element)
        else:
            out.append(element)
    return out


def merge_task(old: dict, new: dict) -> dict:
    task = dict(old)
    for key, value in new.items():
        if value is not None:
            task[key] = pod_template(task[key], value) if key == "template" and key in task else value
    return task


def merge_fields(old: dict, new: dict, keyed: Mapping[str, str], inner: Mapping[str, Callable]) -> dict:
    """Objects merge key by key: scalars and unkeyed lists replaced, WHOLE sections replaced whole, the `keyed` lists
    element by element (`inner` says how a matched element of each merges: by default it is replaced whole)."""
    out = dict(old)
    for key, value in new.items():
        if value is None:
            continue
        if key not in out or key in WHOLE:
            out[key] = value
        elif key in keyed and isinstance(value, list) and isinstance(out[key], list):
            out[key] = by_key(out[key], value, keyed[key], inner.get(key, lambda o, n: n))
        elif isinstance(value, dict) and isinstance(out[key], dict):
            out[key] = merge_fields(out[key], value, {}, {})
        else:
            out[key] = value
    return out


def container(old: dict, new: dict) -> dict:
    """A matched container merges: its image, `env` by name, `resources` per request and limit, …"""
    return merge_fields(old, new, CONTAINER_KEYED, {})


def pod_template(old: dict, new: dict) -> dict:
    out = merge_fields(old, {k: v for k, v in new.items() if k != "spec"}, {}, {})
    if new.get("spec") is not None:
        inner = {"containers": container, "initContainers": container}
        out["spec"] = merge_fields(out.get("spec") or {}, new["spec"], POD_KEYED, inner) \
            if isinstance(out.get("spec"), dict) else new["spec"]
    return out


def aggregate(outcomes: Sequence[str]) -> str:
    """A fan-out whose items all finished: Completed, else Failed, Terminated if none failed."""
    return ("Completed" if all(o == "Completed" for o in outcomes)
            else "Failed" if "Failed" in outcomes else "Terminated")


@dataclasses.dataclass(frozen=True)
class Result:
    states: dict[str, str]          # flow -> Completed, Failed, Terminated, Skipped, NotCreated, Pending:<loop>
    reasons: dict[str, str]         # Skipped flow -> DependencyNeverMet or WhenFalse
    phase: str                      # Succeed or Failed
    created: frozenset[str]         # every vcjob created
    stopped: bool                   # an unhandled failure stopped the JobFlow
    messages: dict = dataclasses.field(default_factory=dict)   # Skipped flow -> Oracle.never_message


class Oracle:
    """`attempts` / `outputs`: vcjob -> the phase / the output of each of its attempts (the last repeats;
    by default Completed, ""). `suspend(on)` sets or removes the suspend annotation, `ps_up(job)` says the
    `ps` task of a running vcjob is Running (what a `taskStatusList` probe reads)."""

    def __init__(self, flows: Sequence[dict], attempts: Mapping[str, Sequence[str]], on_exit: str | None = None,
                 params: Mapping[str, str] | None = None, name: str = "jf",
                 outputs: Mapping[str, Sequence[str]] | None = None, templates: Mapping[str, str] | None = None):
        self.name = name
        self.params = dict(params or {})
        self.attempts = attempts
        self.outputs = outputs or {}
        self.tries: dict[str, int] = {}             # vcjob -> attempts ended so far
        self.messages: dict[str, str] = {}          # vcjob -> its last attempt's output
        self.owner: dict[str, tuple[Flow, int]] = {}    # vcjob -> its flow and item / iteration
        self.running: set[str] = set()
        self.waiting: set[str] = set()              # vcjobs to make when not suspended: retries, next iterations
        self.ps: set[str] = set()                   # running vcjobs whose ps task is Running
        self.http: set[str] = set()                 # running vcjobs whose main task's pods answer (http, tcp)
        self.created: set[str] = set()
        self.refused: set[str] = set()        # vcjobs refused as they were built (InvalidTemplate): Failed, never made
        self.fresh: list[str] = []                  # vcjobs to make at the end of this moment
        self.started_now: list[Flow] = []           # flows started in this moment
        self.suspended = False
        self.stopped = False
        self.flows = {f["name"]: make_flow(f, on_exit) for f in flows}
        self.item_of: dict[str, object] = {}        # vcjob -> its loop item (withItems, withParam)
        self.output_wait: list[str] = []            # vcjobs whose JobTemplate reads an output not there yet
        self.unmade: set[str] = set()               # vcjobs (of loops, or waiting for an output) a stop left unmade
        self.commands: list[tuple[str, str]] = []   # (vcjob, its JobTemplate's command filled in), as created
        self.specs: list[tuple[str, dict]] = []     # (vcjob, its spec), as created, for JobTemplates given whole
        self.templated = templates is not None
        for name, template in (templates or {}).items():
            if isinstance(template, dict):
                self.flows[name].spec, self.flows[name].template = template, json.dumps(template)
            else:
                self.flows[name].template = template
        self._settle()

    # ---- facts about a flow --------------------------------------------------------------------------
    def items(self, flow: Flow) -> list:
        """Item outcomes (None: running); a flow without items is one item; a Skipped flow has none."""
        if flow.state == "Skipped":
            return []
        return flow.item_outcomes if flow.loop in FAN_OUT else [flow.state if flow.finished else None]

    def fact(self, name: str, outcome: str) -> bool | None:
        flow = self.flows[name]
        items = self.items(flow)
        if outcome in ("AnyCompleted", "AnyFailed"):
            if outcome[3:] in items:
                return True
            return False if flow.finished else None
        if outcome == "AllCompleted" and "Failed" in items or outcome == "AllFailed" and "Completed" in items:
            return False
        if not flow.finished:
            return None
        if outcome in ("AllCompleted", "AllFailed"):
            return bool(items) and all(o == outcome[3:] for o in items)
        if outcome == "Finished":
            return True
        return flow.state == outcome

    def probe_fact(self, reader: Flow, name: str) -> bool | None:
        """`taskStatusList {ps, Running}` on target `name`: every current vcjob (every item, a repeat's last
        iteration) runs with its ps task Running; false once the target finished before that held."""
        target = self.flows[name]
        covering = [e for e in reader.probes if e[1] in TASKS]
        if not covering:                            # no entry covers the target: waited for as usual
            return self.fact(name, "Completed")
        if target.finished:                         # a fan-out with no items has no vcjob to probe: met
            return target.reason == "NoItems"
        current = self.current_jobs(target)
        if target.state == "Pending" or not current:
            return None
        up = {"taskStatus": self.ps, "httpGet": self.http, "tcpSocket": self.http}
        return True if all(j in self.running and j in up[kind] for j in current for kind, _ in covering) else None

    def current_jobs(self, flow: Flow) -> list[str]:
        """The vcjobs a probe reads: every item's, a repeat's last iteration's (none while the next is to be made)."""
        if flow.loop != "repeat":
            return flow.jobs
        last = max((i for f, i in self.owner.values() if f is flow), default=0)
        return [j for j in flow.jobs if j == f"{self.name}-{flow.name}-{last}"]

    def output(self, name: str) -> str:
        """A flow's output: its last vcjob's (a repeat's last iteration), a fan-out's list — one entry per item, in
        their order, "" for an item that wrote nothing (refused as built, or left uncreated by a stop); "" if none of
        its items was made or refused (the docs: "a flow that did not complete reads as its last vcjob's message")."""
        flow = self.flows[name]
        if flow.loop in FAN_OUT:
            items = [f"{self.name}-{name}-{i}" for i in range(len(flow.item_outcomes))]
            ran = any(j in flow.jobs or j in self.refused for j in items) or flow.reason == "NoItems"
            return fan_out_output([self.messages.get(j, "") for j in items]) if ran else ""
        return self.messages.get(flow.jobs[-1], "") if flow.jobs else ""

    def dependency(self, flow: Flow) -> bool | None:
        """Its dependsOn, and for each output it reads: Completed, or only finished if its expression names it."""
        named = atoms(flow.expr) if flow.expr is not None else set()
        reads = [self.fact(r, "Completed") if r not in named else (True if self.flows[r].finished else None)
                 for r in sorted(flow.reads_outputs)]
        if flow.kind == "none":
            own: bool | None = True
        elif flow.kind == "expression":
            own = evaluate(flow.expr, self.fact)
        elif flow.kind == "probe":
            own = and3(self.probe_fact(flow, t) for t in flow.targets)
        elif flow.kind == "all":
            own = and3(self.fact(t, "Completed") for t in flow.targets)
        else:
            own = or3(or3([self.fact(t, "Completed"), self.fact(t, "AnyCompleted")]) for t in flow.targets)
        return and3([own, *reads])

    def handled(self, failed: Flow) -> bool:
        return any(failed.name in r.accepts and r.state != "Skipped" and self.dependency(r) is not False
                   for r in self.flows.values() if not r.exit)

    def unhandled(self) -> list[str]:
        return [f.name for f in self.flows.values() if not f.exit and f.state in FAILURES and not self.handled(f)]

    def env(self, iteration: int | None = None) -> Env:
        return Env(self.params, self.output, iteration)

    # ---- what is held ---------------------------------------------------------------------------------
    def _pending(self) -> list[Flow]:
        return [f for f in self.flows.values() if not f.exit and f.state == "Pending"]

    def _exit_due(self) -> Flow | None:
        """The exit handler, once every other flow finished, or after a stop once no other vcjob runs."""
        exit_flow = next((f for f in self.flows.values() if f.exit), None)
        if exit_flow is None or exit_flow.state != "Pending":
            return None
        others = [f for f in self.flows.values() if not f.exit]
        if all(f.finished for f in others) or self.stopped and not any(
                self.owner[j][0] is not exit_flow for j in self.running):
            return exit_flow
        return None

    # ---- what the status says (docs/jobflow-primitives.md "Status") --------------------------------------------
    def conditions(self) -> dict[str, tuple[str, str, bool]]:
        """entry (a flow, or a vcjob of a loop: `f3`, `f3-1`) -> (reason, message, whole): the words of the
        entries the docs give them for — `WhenFalse`, `NotCreated` and what a flow waits for (`Waiting…`); `whole`
        False: the message begins so (the rest is the dependency, not covered)."""
        out: dict[str, tuple[str, str, bool]] = {}
        for f in self.flows.values():
            if f.state == "Skipped" and f.reason == "WhenFalse":
                out[f.name] = ("WhenFalse", f"when {f.when} is false", True)
            elif f.state in ("Pending", "Unmade") and self.stopped and not f.exit:
                out[f.name] = ("NotCreated", self.not_created(), True)
            elif f.state == "Pending" and (f.exit or self.dependency(f) is None):
                said = self.waits(f)
                if said is not None:
                    out[f.name] = said
        for job in self.output_wait:
            flow = self.owner[job][0]
            reads = [r for r in self.flows if r in flow.template_reads(self.flows) and not self.flows[r].finished]
            if reads:
                out[job[len(self.name) + 1:]] = ("WaitingForOutput", f"the template reads the output of "
                                                 f"{self.jobs_of(reads)}: waiting for it to finish", True)
        for job in self.unmade:
            out[job[len(self.name) + 1:]] = ("NotCreated", self.not_created(), True)
        return out

    def jobs_of(self, flows: Iterable[str]) -> str:
        return ", ".join(f"{self.name}-{f}" for f in flows)

    def not_created(self) -> str:
        """`NotCreated`'s words, the same in every such entry: the unhandled failures as they are now (spec order, the
        first three) while the exit handler is to run; once the JobFlow is Failed, that."""
        exit_flow = next((f for f in self.flows.values() if f.exit), None)
        if exit_flow is None or exit_flow.finished:
            return "not created: the JobFlow is Failed"
        return f"not created: {', '.join(self.unhandled()[:3])} failed"

    def waits(self, flow: Flow) -> tuple[str, str, bool] | None:
        """What a flow that has not started waits for: the exit handler, the other flows (or once a failure stopped
        the JobFlow, the running vcjobs); a probed flow, its targets' probes; targets only, the targets (`strategy
        all`: those not Completed; `any`: those that can still complete); else the flows its dependency reads that
        have not finished (but a target whose probe held) — `WaitingForOutput` when it reads only their outputs."""
        if flow.exit:
            if self._exit_due() is not None:
                return None                             # (Suspended)
            if self.stopped:
                n = len([j for j in self.running if not self.owner[j][0].exit])
                return ("WaitingForOtherFlows",
                        f"the exit handler runs once the running jobs have finished ({n} still running)", True)
            others = [f.name for f in self.flows.values() if not f.exit and not f.finished]
            return ("WaitingForOtherFlows", "the exit handler runs once every other flow has finished: waiting for "
                    + self.jobs_of(others), True)
        named = atoms(flow.expr) if flow.expr is not None else set()
        reads = flow.reads_outputs - named - (set(flow.targets) if flow.kind == "all" else set())
        if flow.kind == "probe" and any(self.probe_fact(flow, t) is not True for t in flow.targets):
            return "WaitingForProbe", "waiting for probe: " + ", ".join(self.probe_waits(flow)), True
        if flow.kind == "all" and not reads:
            waited = [t for t in flow.targets if self.fact(t, "Completed") is not True]
            return "WaitingForDependencies", f"waiting for {self.jobs_of(waited)} to be Completed", True
        if flow.kind == "any" and not reads:
            alive = [t for t in flow.targets if not self.flows[t].finished]
            if len(alive) == 1 and len(set(flow.targets)) > 1:
                return ("WaitingForDependencies", f"waiting for {self.jobs_of(alive)} to complete (the only target "
                        "that still can)", True)
            if len(set(flow.targets)) == 1 and alive and self.flows[alive[0]].loop in FAN_OUT:
                return "WaitingForDependencies", f"waiting for one item of {self.jobs_of(alive)} to complete", True
            return "WaitingForDependencies", f"waiting for one of {self.jobs_of(alive)} to complete", True
        held = {t for t in flow.targets if flow.kind == "probe" and self.probe_fact(flow, t) is True} - reads
        refs = [*flow.targets, *sorted(named), *sorted(flow.reads_outputs)]
        unfinished = [r for r in dict.fromkeys(refs) if not self.flows[r].finished and r not in held]
        if unfinished and set(unfinished) <= reads:
            return "WaitingForOutput", f"waiting for {self.jobs_of(unfinished)} to finish (its output is read)", True
        return "WaitingForDependencies", f"waiting for {self.jobs_of(unfinished)}: ", False

    def probe_waits(self, flow: Flow) -> list[str]:
        """Each target whose probe does not hold yet: `<jf>-t to start` (no vcjob yet), `<its vcjob>: <the entries
        not holding on it>` (on a target's several vcjobs, `<jf>-t: …`), or `<jf>-t to be Completed` (no entry
        covers it)."""
        parts = []
        up = {"taskStatus": self.ps, "httpGet": self.http, "tcpSocket": self.http}
        for t in flow.targets:
            if self.probe_fact(flow, t) is True:
                continue
            target = self.flows[t]
            current = self.current_jobs(target)
            covering = [(e, words) for e, words in zip(flow.probes, flow.probe_words) if e[1] in TASKS]
            if not current:
                parts.append(f"{self.name}-{t} to start")
            elif not covering:
                parts.append(f"{self.name}-{t} to be Completed")
            else:
                pending = [words for (kind, _), words in covering
                           if not all(j in self.running and j in up[kind] for j in current)]
                parts.append(f"{current[0] if len(current) == 1 else f'{self.name}-{t}'}: {'; '.join(pending)}")
        return parts

    def held(self) -> set[str]:
        """The flows that would start now but for the suspension (they show `Suspended`)."""
        if not self.suspended:
            return set()
        ready = [] if self.stopped else [f.name for f in self._pending() if self.dependency(f) is True]
        ready += [self.owner[j][0].name for j in self.ready_waiting() if self.owner[j][0].loop == ""]
        exit_flow = self._exit_due()
        return set(ready) | ({exit_flow.name} if exit_flow is not None else set())

    @property
    def idle(self) -> bool:
        """Nothing runs and nothing would start even once resumed: the run is over."""
        return not self.running and not self.waiting and not self.held() and not self.ready_waiting()

    # ---- moves ------------------------------------------------------------------------------------------
    def suspend(self, on: bool) -> None:
        self.suspended = on
        self._settle()

    def http_up(self, job: str) -> None:
        assert job in self.running, job
        self.http.add(job)
        self._settle()

    def ps_up(self, job: str) -> None:
        assert job in self.running, job
        self.ps.add(job)
        self._settle()

    def delete(self, job: str, ttl: bool, plain: bool) -> None:
        """A finished vcjob is deleted, by its `ttlSecondsAfterFinished` (`ttl`) or a user. Its outcome stands
        (`deleted: true`), but for Volcano's rule in a plain JobFlow (`plain`: targets only, no new field): a
        Completed vcjob a user deleted while the JobFlow runs is created again, its flow waiting for it anew."""
        flow = self.owner[job][0]
        assert job not in self.running, job
        finished = all(f.finished for f in self.flows.values())
        if plain and not ttl and flow.state == "Completed" and not self.stopped and not finished:
            flow.state = "Running"
            self.running.add(job)
        self._settle()

    def next_phase(self, job: str) -> str:
        phases = self.attempts.get(job) or ["Completed"]
        return phases[min(self.tries.get(job, 0), len(phases) - 1)]

    def next_output(self, job: str) -> str:
        outputs = self.outputs.get(job) or [""]
        return outputs[min(self.tries.get(job, 0), len(outputs) - 1)]

    def finish(self, job: str) -> None:
        """The current attempt of `job` ends in its next predetermined phase, writing its next output."""
        assert job in self.running, job
        phase, self.messages[job] = self.next_phase(job), self.next_output(job)
        self.tries[job] = self.tries.get(job, 0) + 1
        self.running.discard(job)
        self.ps.discard(job)
        self.http.discard(job)
        flow, index = self.owner[job]
        if phase in FAILURES and self.tries[job] <= flow.retry:
            self.waiting.add(job)                   # deleted and created again after the back-off
        else:
            self._job_ended(flow, index, phase)
        self._settle()

    def _make(self, flow: Flow, job: str, index: int) -> None:
        """The vcjob is made at the end of this moment, unless a failure found in it stops the JobFlow."""
        self.owner[job] = (flow, index)
        self.fresh.append(job)

    def fill(self, job: str, text: str | None = None) -> str:
        """Its JobTemplate's command (or `text`) with the placeholders that mean something in its flow filled in
        (the docs: strings as they are, other values as compact JSON; an output with surrounding whitespace removed,
        as a condition reads it; `{{outputs.<itself>}}` in a repeat the previous iteration's, "" at the first);
        others, as `{{item}}` outside a loop or `{{iteration}}` outside a repeat, are left as written."""
        flow, index = self.owner[job]

        def value(m: re.Match) -> str:
            ref = m.group(1)
            if ref.startswith("params.") and ref[7:] in self.params:
                return self.params[ref[7:]]
            if ref.startswith("outputs.") and ref[8:] in self.flows:
                read = ref[8:]
                if read != flow.name:
                    return self.output(read).strip()
                previous = f"{self.name}-{flow.name}-{index - 1}"
                return self.messages.get(previous, "").strip() if flow.loop == "repeat" and index > 0 else ""
            if ref == "item" and flow.loop in FAN_OUT:
                item = self.item_of[job]
                return item if isinstance(item, str) else json.dumps(item, separators=(",", ":"))
            if ref == "iteration" and flow.loop == "repeat":
                return str(index)
            return m.group(0)
        return PLACEHOLDER.sub(value, flow.template if text is None else text)

    def build(self, job: str) -> dict:
        """The vcjob's spec: its JobTemplate's with the flow's patch merged onto it, then every placeholder in it
        filled in (`fill`; a patch's all mean something in their flow: admission refuses the others)."""
        flow = self.owner[job][0]

        def walk(value):
            if isinstance(value, str):
                return self.fill(job, value)
            if isinstance(value, dict):
                return {k: walk(v) for k, v in value.items()}
            return [walk(v) for v in value] if isinstance(value, list) else value
        return walk(patched(flow.spec or {}, flow.patch))

    def _unbuildable(self, flow: Flow) -> bool:
        """Its patch cannot be merged onto its JobTemplate: every vcjob of it is refused (`InvalidTemplate`)."""
        try:
            patched(flow.spec or {}, flow.patch)
        except PatchError:
            return True
        return False

    def _reads(self, flow: Flow) -> str:
        """What its JobTemplate's reads say as its vcjobs are made: "wait" while a flow it reads has not finished
        (`WaitingForOutput`), "skip" when one did not complete — unless its expression names it, or it is the
        exit handler (which never waits: what it reads is final) —, "invalid" when it reads its own output outside
        a repeat (a wait that could never end: the vcjob is refused, `InvalidTemplate`, a failure), else "ok"."""
        if flow.loop != "repeat" and flow.name in TEMPLATE_READ.findall(flow.template):
            return "invalid"                        # its own output, which it has only once it has finished
        if flow.exit:
            return "invalid" if self._unbuildable(flow) else "ok"
        reads = [self.flows[r] for r in flow.template_reads(self.flows)]
        named = atoms(flow.expr) if flow.expr is not None else set()
        if any(not r.finished for r in reads):
            return "wait"
        if any(r.state != "Completed" and r.name not in named for r in reads):
            return "skip"
        return "invalid" if self._unbuildable(flow) else "ok"

    def _template_checks(self) -> bool:
        """The vcjobs to make and those waiting for an output, as the controller builds them — all of the moment's
        together: True if a flow was Skipped or a vcjob refused (that may decide more: settle again)."""
        decided = False
        batch = [j for j in [*self.fresh, *self.output_wait]
                 if j in self.fresh or not (self.suspended or self.stopped)]   # (read as made: once resumed)
        verdicts = {j: self._reads(self.owner[j][0]) for j in batch}       # (as they are at the moment's start)
        for job in batch:
            flow = self.owner[job][0]
            if job not in self.fresh and job not in self.output_wait:
                continue                            # (its flow was just Skipped)
            verdict = verdicts[job]
            if verdict == "invalid":
                self.fresh = [j for j in self.fresh if j != job]
                self.output_wait = [j for j in self.output_wait if j != job]
                self.created.discard(job)
                self.refused.add(job)
                self._job_ended(flow, self.owner[job][1], "Failed")
                decided = True
                continue
            if verdict == "skip":
                mine = [j for j in [*self.fresh, *self.output_wait] if self.owner[j][0] is flow]
                self.fresh = [j for j in self.fresh if j not in mine]
                self.output_wait = [j for j in self.output_wait if j not in mine]
                self.started_now = [f for f in self.started_now if f is not flow]
                flow.item_outcomes, flow.jobs = [], []
                self._skip(flow, "DependencyNeverMet", ("its JobTemplate reads the output of ", "start"))
                decided = True
                continue
            if verdict == "wait" and job in self.fresh:
                self.fresh.remove(job)
                self.output_wait.append(job)
            elif verdict == "ok" and job in self.output_wait:
                self.output_wait.remove(job)
                self.fresh.append(job)
        return decided

    def ready_waiting(self) -> list[str]:
        """The vcjobs whose outputs are there (or will never be), held back by the suspension: made — or their
        flow Skipped — once resumed, as a `when` is evaluated."""
        return [j for j in self.output_wait if self._reads(self.owner[j][0]) != "wait"]

    def _commit(self) -> None:
        for job in self.fresh:
            if self.templated and self.owner[job][0].spec is not None:
                self.specs.append((job, self.build(job)))
            elif self.templated:
                self.commands.append((job, self.fill(job)))
            flow = self.owner[job][0]
            if job not in flow.jobs:
                flow.jobs.append(job)
            self.running.add(job)
            self.created.add(job)
        self.fresh, self.started_now = [], []

    def _cancel(self) -> bool:
        """A failure found in this moment wins (the docs: "not even one that became ready at the same moment"):
        a flow started in it is not (NotCreated), a retry or an iteration waits again (then `_stop_waiting`)."""
        cancelled = [j for j in self.fresh if not self.owner[j][0].exit]
        unmade = [j for j in self.output_wait if not self.owner[j][0].exit]     # (waiting for an output: never made)
        # (and one whose output came in this moment: it is neither a retry nor a next iteration, to wait again)
        unmade += [j for j in cancelled if self.owner[j][0] not in self.started_now and j not in self.tries
                   and not (self.owner[j][0].loop == "repeat" and self.owner[j][1] > 0)]
        cancelled = [j for j in cancelled if j not in unmade]
        self.output_wait = [j for j in self.output_wait if j not in unmade]
        self.unmade.update(j for j in cancelled if self.owner[j][0] in self.started_now)
        self.unmade.update(unmade)
        for flow in {self.owner[j][0].name: self.owner[j][0] for j in unmade}.values():
            if flow.loop == "":
                flow.state = "Unmade"               # started: never decided again (NotCreated)
            else:
                flow.reason = "Repeat" if flow.loop == "repeat" else "FanOut"
        for flow in [f for f in self.started_now if not f.exit and f.state == "Running"]:   # (NoItems: Completed)
            if flow.loop == "":
                flow.state = "Pending"
            else:                                   # its items / iteration NotCreated; the flow has no outcome
                flow.reason = "Repeat" if flow.loop == "repeat" else "FanOut"
        for job in cancelled:
            if self.owner[job][0] not in self.started_now:
                self.waiting.add(job)
        self.fresh = [j for j in self.fresh if j not in cancelled and j not in unmade]
        self.started_now = [f for f in self.started_now if f.exit]
        return bool(cancelled or unmade)

    def _start(self, flow: Flow) -> None:
        """Its vcjobs: one, one per item (none: Completed at once, `NoItems`), or the first iteration."""
        flow.state = "Running"
        self.started_now.append(flow)
        base = f"{self.name}-{flow.name}"
        if flow.loop == "repeat":
            self._make(flow, f"{base}-0", 0)
            return
        if flow.loop == "":
            self._make(flow, base, 0)
            return
        values = flow.item_values if flow.loop == "items" else json.loads(self.output(flow.param))
        n = len(values)
        flow.item_outcomes = [None] * n
        for i in range(n):
            self.item_of[f"{base}-{i}"] = values[i]
            self._make(flow, f"{base}-{i}", i)
        if n == 0:
            flow.state, flow.reason = "Completed", "NoItems"

    def _job_ended(self, flow: Flow, index: int, phase: str) -> None:
        if flow.loop in FAN_OUT:
            flow.item_outcomes[index] = phase
            if None not in flow.item_outcomes:
                flow.state = aggregate(flow.item_outcomes)
        elif flow.loop == "repeat":
            self._iteration_ended(flow, index, phase)
        else:
            flow.state = phase

    def _iteration_ended(self, flow: Flow, iteration: int, phase: str) -> None:
        """Completed when `until` holds; an iteration that did not complete ends the flow in its phase; Failed
        when `until` cannot be evaluated or is still false after `limit` iterations; else the next iteration."""
        if phase != "Completed":
            flow.state = phase
            return
        try:
            done = condition(flow.until, self.env(iteration))
        except ConditionError:
            flow.state, flow.reason = "Failed", "InvalidCondition"
            return
        if done:
            flow.state = "Completed"
        elif iteration + 1 >= flow.limit:
            flow.state, flow.reason = "Failed", "RepeatLimitReached"
        else:
            job = f"{self.name}-{flow.name}-{iteration + 1}"
            self.owner[job] = (flow, iteration + 1)
            self.waiting.add(job)

    def _skip(self, flow: Flow, reason: str, message: tuple = ("", "")) -> None:
        flow.state, flow.reason, flow.message = "Skipped", reason, message

    def never_message(self, flow: Flow) -> tuple:
        """Why its dependency can never hold, in the words of docs/jobflow-primitives.md "Status": (the message,
        "whole"), (its beginning, "start"), or (its beginning, "list", the targets found dead) for `<beginning><t>
        <outcome>, …`, listing those and maybe others Skipped with it (the order the same moment's skips are
        decided in is not said). Its targets when they can no longer be met — `dependsOn target b was Skipped`,
        `dependsOn targets c, d can no longer all be Completed: d Failed`, `… (strategy any): none of them can
        complete: …`, `dependsOn target tg finished (Completed) before its probe (…) held` —, else
        `dependsOn.expression <as written> can never hold: …`; ("", "") where the docs leave the words open: a
        flow reading outputs (of a flow that did not complete: `it reads the output of …`, when that decides)."""
        def met(t: str) -> bool | None:
            if flow.kind == "probe":
                return self.probe_fact(flow, t)
            if flow.kind == "any":
                return or3([self.fact(t, "Completed"), self.fact(t, "AnyCompleted")])
            return self.fact(t, "Completed")
        named = atoms(flow.expr) if flow.expr is not None else set()
        if flow.reads_outputs - named:  # (one it reads may be Skipped in the same moment: then that may be why)
            return "", ""
        dead = [t for t in flow.targets if met(t) is False] if flow.kind in ("all", "any", "probe") else []
        if flow.kind == "any" and len(dead) < len(flow.targets):
            dead = []                               # (one can still complete: the targets are not why)
        probed = flow.kind == "probe" and any(e[1] in TASKS for e in flow.probes)
        if dead and len(flow.targets) == 1:
            state = self.flows[dead[0]].state
            if probed and state not in ("Skipped", "Failed"):    # (it ran, and finished before its probe held)
                return f"dependsOn target {dead[0]} finished ({state}) before its probe (", "start"
            return f"dependsOn target {dead[0]} was {state}", "whole"
        if dead:
            names, found = ", ".join(flow.targets), tuple(f"{t} {self.flows[t].state}" for t in dead)
            if flow.kind == "any":
                return f"dependsOn targets {names} (strategy any): none of them can complete: {', '.join(found)}", \
                    "whole"
            if probed:
                return f"dependsOn targets {names} can no longer all be Completed: ", "start"
            return f"dependsOn targets {names} can no longer all be Completed: ", "list", found
        if flow.kind == "expression":
            return f"dependsOn.expression {flow.expression} can never hold", "start"
        return "", ""

    def _begin(self, flow: Flow) -> bool:
        """Evaluates `when`, then reads `withParam`, as the flow would start: False if that decided its outcome
        (Skipped; Failed: `InvalidCondition` or `InvalidParam`, a fan-out then counting as one failed item)."""
        try:
            holds = condition(flow.when, self.env())
        except ConditionError:
            flow.state, flow.reason, flow.item_outcomes = "Failed", "InvalidCondition", ["Failed"]
            return False
        if not holds:
            self._skip(flow, "WhenFalse")
            return False
        if flow.loop == "param" and param_items(self.output(flow.param)) is None:
            flow.state, flow.reason, flow.item_outcomes = "Failed", "InvalidParam", ["Failed"]
            return False
        return True

    def _stop_waiting(self) -> bool:
        """After a stop no retry (but the exit handler's) and no iteration starts: the failure is the outcome."""
        stale = sorted(j for j in self.waiting if not self.owner[j][0].exit)
        for job in stale:
            self.waiting.discard(job)
            flow, index = self.owner[job]
            if job in self.tries:                   # a retry: NotRetried
                self._job_ended(flow, index, self.attempts_ended_in(job))
            else:                                   # an iteration: NotCreated; the flow has no outcome
                flow.reason = "Repeat"
                self.unmade.add(job)
        return bool(stale)

    def attempts_ended_in(self, job: str) -> str:
        phases = self.attempts.get(job) or ["Completed"]
        return phases[min(self.tries[job] - 1, len(phases) - 1)]

    def _advance(self) -> bool:
        """One decision of the JobFlow controller; False once there is nothing to decide."""
        never = [f for f in self._pending() if self.dependency(f) is False]
        for f, message in [(f, self.never_message(f)) for f in never]:    # (as they are when found)
            self._skip(f, "DependencyNeverMet", message)
        if never:
            return True
        self.stopped = self.stopped or bool(self.unhandled())
        if self.stopped:
            return self._cancel() or self._stop_waiting()
        ready = [f for f in self._pending() if self.dependency(f) is True]
        if self.suspended:                          # held: `when` is evaluated as the flow starts, once resumed
            return False
        if not all([self._begin(f) for f in ready]):
            return True                             # a decided `when`: look again before anything starts
        if not ready and not self.waiting:
            return False
        for f in ready:
            self._start(f)
        for job in sorted(self.waiting):
            self.waiting.discard(job)
            self._make(self.owner[job][0], job, self.owner[job][1])
        return True

    def _settle(self) -> None:
        """One moment: everything the last event decides, then the vcjobs made — as their JobTemplates' reads
        allow (a flow Skipped for what it reads may decide more, in the same moment)."""
        while True:
            while self._advance():
                pass
            exit_flow = self._exit_due()
            if exit_flow is not None and not self.suspended and self._begin(exit_flow):
                self._start(exit_flow)
            if not self.suspended:
                for job in sorted(j for j in self.waiting if self.owner[j][0].exit):
                    self.waiting.discard(job)
                    self._make(self.owner[job][0], job, self.owner[job][1])
            if not (self.templated and self._template_checks()):
                break
        self._commit()

    # ---- the end ----------------------------------------------------------------------------------------
    def result(self) -> Result:
        assert not self.running, f"still running: {sorted(self.running)}"
        # (a loop whose items or next iteration a stop left uncreated shows Pending, reason FanOut or Repeat)
        states = {n: (f"Pending:{f.reason}" if f.state == "Running" else "NotCreated" if f.state in (
            "Pending", "Unmade") else f.state) for n, f in self.flows.items()}
        exit_failed = any(f.exit and f.state in FAILURES for f in self.flows.values())
        assert self.stopped or all(s in OUTCOMES for s in states.values()), states
        return Result(states, {n: f.reason for n, f in self.flows.items() if f.state == "Skipped"},
                      "Failed" if self.stopped or exit_failed else "Succeed", frozenset(self.created), self.stopped,
                      {n: f.message for n, f in self.flows.items() if f.state == "Skipped" and f.message[0]})


def predict(flows: Sequence[dict], attempts: Mapping[str, Sequence[str]], on_exit: str | None = None,
            params: Mapping[str, str] | None = None, pick: Callable[[list[str]], str] = min,
            outputs: Mapping[str, Sequence[str]] | None = None) -> Result:
    """Plays the run to its end, finishing the vcjob `pick` chooses among those running each time."""
    oracle = Oracle(flows, attempts, on_exit, params, outputs=outputs)
    for _ in range(10_000):
        if not oracle.running:
            return oracle.result()
        oracle.finish(pick(sorted(oracle.running)))
    raise AssertionError("the run does not end")
