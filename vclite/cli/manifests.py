"""Load manifest files and validate them whole, before anything runs.

Validation applies every document, in dependency order, to a scratch in-process API (the same
admission the real run uses), so every error is found at once and reported as
`file:line: Kind/name: field: message`. Checks that need the whole set of files (a JobFlow naming a
JobTemplate that no file defines, a flow whose vcjob admission would refuse) are done
here too. Nothing here starts a component.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import re
import shlex
from typing import Any

from vclite.admission import advice, fields, podpriority, serviceaccount
from vclite.admission import jobflow as jobflow_admission
from vclite.api import flow, flowtemplate, kinds, meta, yamlio
from vclite.apiserver import inprocess
from vclite.cli import runaccounts, runclaims, schedconfmap, stdinput
from vclite.controllers.jobflow import objects
from vclite.executor import nodes as nodes_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
_PATCH_FIELD = re.compile(r"patch\.jobSpec((?:\.[A-Za-z0-9_-]+|\[[0-9]+\])*): ")   # apply_patch's messages

STDIN, STDIN_NAME = stdinput.STDIN, stdinput.STDIN_NAME   # a FILE of `-` is standard input, and its name

# Apply order: what other objects refer to comes first (a claim's class and volume before it, claims before the
# pods and vcjobs that mount them; a quota before the claims it charges).
APPLY_ORDER = {k.kind: i for i, k in enumerate((
    kinds.NAMESPACE, kinds.PRIORITYCLASS, kinds.NODE, kinds.HYPERNODE, kinds.NUMATOPOLOGY, kinds.QUEUE,
    kinds.RESOURCEQUOTA, kinds.STORAGECLASS, kinds.PERSISTENTVOLUME, kinds.PERSISTENTVOLUMECLAIM, kinds.CONFIGMAP,
    kinds.SECRET, kinds.SERVICEACCOUNT, kinds.PODDISRUPTIONBUDGET,
    kinds.JOBTEMPLATE, kinds.PODGROUP, kinds.JOB, kinds.POD, kinds.JOBFLOW))}


@dataclasses.dataclass(frozen=True)
class Problem:
    file: str
    line: int
    what: str      # "Kind/name" or "document N"
    field: str
    message: str
    column: int = 0   # 1-based; 0 when not known (a problem about a whole field)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        where += f":{self.column}" if self.line and self.column else ""
        what = f"{self.what}: " if self.what else ""
        field = f"{self.field}: " if self.field else ""
        return f"{where}: {what}{field}{self.message}"


class InvalidManifests(Exception):
    def __init__(self, problems: list[Any]):
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def load(paths: list[str]) -> list[yamlio.Document]:
    """Every document of every file, or InvalidManifests listing every structural problem."""
    docs, problems = _read_all(paths)
    if problems:
        raise InvalidManifests(problems)
    return docs


def _read_all(paths: list[str]) -> tuple[list[yamlio.Document], list[Any]]:
    """(the documents without a structural problem, every structural problem) of every file; a FILE of
    `-` is standard input, named `<stdin>`. A file named twice (`vcctl validate a.yaml *.yaml`) is read
    once: its objects are not defined twice."""
    paths, problems = expand_directories(paths)
    firsts: dict[str, str] = {}
    for path in paths:
        firsts.setdefault(path if path == STDIN else os.path.realpath(path), path)
    paths = list(firsts.values())
    docs: list[yamlio.Document] = []
    for path in paths:
        file_docs, file_problems = _parse(path)
        docs += file_docs
        problems += file_problems
    # a document with a structural problem is set aside (a List's item alone: its siblings are checked)
    broken = {(p.file, p.document, p.item) for p in problems if getattr(p, "document", 0)}
    docs = [d for d in docs if (d.file, d.index, d.prefix) not in broken]
    if not docs and not problems:   # (each file: a file of no objects among others is no problem, as for kubectl)
        problems.extend(Problem(source_name(path), 0, "", "", "no objects found: the file is empty or holds only "
                                "comments") for path in paths)
    return docs, problems


MANIFEST_EXTENSIONS = (".json", ".yaml", ".yml")   # kubectl's for `-f DIR`


def expand_directories(paths: list[str]) -> tuple[list[str], list[Problem]]:
    """A FILE that is a directory stands for its .json, .yaml and .yml files in name order, as
    `kubectl apply -f DIR` reads them (not its subdirectories: kubectl reads those with -R only; other
    files are skipped); a directory without one is a problem. Other paths are kept as they are."""
    out: list[str] = []
    problems: list[Problem] = []
    for path in paths:
        if path == STDIN or not os.path.isdir(path):
            out.append(path)
            continue
        try:
            names = sorted(e.name for e in os.scandir(path) if e.name.endswith(MANIFEST_EXTENSIONS)
                           and e.is_file())
        except OSError as e:
            problems.append(Problem(path, 0, "", "", f"cannot read the directory: {e.strerror or e}"))
            continue
        if not names:
            problems.append(Problem(path, 0, "", "", "no .json, .yaml or .yml file in this directory "
                                    "(its subdirectories are not read)"))
        out.extend(os.path.join(path, n) for n in names)
    return out, problems


def with_params(params: dict[str, str] | None) -> str:
    """What `N problem(s) found` adds when -p set parameters: a problem at a condition or a template
    may be due to a value given on the command line, not in the file (` (with -p n=abc)`)."""
    given = " ".join("-p " + shlex.quote(f"{name}={value}") for name, value in (params or {}).items())
    return f" (with {given})" if given else ""


def source_name(path: str) -> str:
    """How problems name a FILE: `<stdin>` for `-`, else the path as given."""
    return stdinput.name(path)


def _parse(path: str) -> tuple[list[yamlio.Document], list[Any]]:
    if path != STDIN:
        return yamlio.parse_files([path])
    try:
        data = stdinput.read()
    except OSError as e:   # (no standard input: closed, or not a byte stream)
        return [], [Problem(STDIN_NAME, 0, "", "", f"cannot read: {e}")]
    return yamlio.parse_bytes(data, STDIN_NAME)


def _queue_name(doc: yamlio.Document) -> str | None:
    md = doc.obj.get("metadata")
    name = md.get("name") if doc.obj.get("kind") == kinds.QUEUE.kind and isinstance(md, dict) else None
    return name if isinstance(name, str) else None


def _queue_loops(docs: list[yamlio.Document]) -> dict[str, list[str]]:
    """Queues of these documents whose parents, through queues the documents define, come back to
    them: queue name -> the loop from it (`a -> b -> a`). Admission would report each as a missing
    parent (none of them can be created first); this names the loop instead."""
    parents: dict[str, str] = {}
    for d in docs:
        name, spec = _queue_name(d), d.obj.get("spec")
        if name and isinstance(spec, dict) and isinstance(spec.get("parent"), str):
            parents[name] = spec["parent"]
    loops = {}
    for name in parents:
        chain, cur = [name], parents[name]
        while cur in parents and cur not in chain:
            chain.append(cur)
            cur = parents[cur]
        if cur == name and len(chain) > 1:   # (a queue naming itself: admission's own words)
            loops[name] = [*chain, name]
    return loops


def ordered(docs: list[yamlio.Document]) -> list[yamlio.Document]:
    """By APPLY_ORDER, and a Queue after the parent queue another document defines (a child written
    before its parent is admitted, where a second `kubectl apply` would be needed); else file order."""
    defined = {n for n in map(_queue_name, docs) if n}
    parents: dict[str, str] = {}
    for d in docs:
        name, spec = _queue_name(d), d.obj.get("spec")
        if name and isinstance(spec, dict) and spec.get("parent") in defined:
            parents[name] = spec["parent"]

    def depth(d: yamlio.Document) -> int:
        name, seen = _queue_name(d), set()
        while name in parents and name not in seen:   # (a loop is admission's to report)
            seen.add(name)
            name = parents[name]
        return len(seen)
    return sorted(docs, key=lambda d: (APPLY_ORDER.get(d.obj.get("kind"), len(APPLY_ORDER)), depth(d)))


def describe(doc: yamlio.Document) -> str:
    md = doc.obj.get("metadata") if isinstance(doc.obj.get("metadata"), dict) else {}
    name = md.get("name") or (f"{md['generateName']}*" if isinstance(md.get("generateName"), str) else "?")
    return f"{doc.obj.get('kind')}/{name}"


def apply_all(client: Any, docs: list[yamlio.Document], check_templates: bool = True) -> list[Problem]:
    """Create every document through `client` in dependency order; return the problems."""
    return _apply(client, docs, check_templates).problems


@dataclasses.dataclass
class _Applied:
    """What creating the documents gave: every problem, the JobFlows admitted (each with the object
    stored) and those admission refused (each with its errors: their flows may still be checked)."""

    problems: list[Problem]
    jobflows: list[tuple[yamlio.Document, Obj]]
    refused: list[tuple[yamlio.Document, list[errors.FieldError]]]


def _apply(client: Any, docs: list[yamlio.Document], check_templates: bool) -> _Applied:
    out = _Applied([], [], [])
    seen: dict[tuple[str, str, str], yamlio.Document] = {}
    admitted: list[yamlio.Document] = []
    loops = _queue_loops(docs)
    stand_ins_due = True
    for doc in ordered(docs):
        if stand_ins_due and APPLY_ORDER.get(str(doc.obj.get("kind")), -1) > APPLY_ORDER[kinds.SERVICEACCOUNT.kind]:
            _stand_in_service_accounts(client, docs)   # (after the Namespaces and ServiceAccounts the files define)
            stand_ins_due = False
        loop = loops.get(_queue_name(doc) or "")
        if loop is not None:
            out.problems.append(_located(doc, "spec.parent", f"queue {loop[0]} cannot use {loop[1]} as parent: "
                                                             f"the parents loop ({' -> '.join(loop)})"))
            continue
        md = doc.obj.get("metadata") or {}
        k = kinds.lookup(str(doc.obj.get("apiVersion")), str(doc.obj.get("kind")))
        ident = (doc.obj.get("kind"), (md.get("namespace") or "default") if k and k.namespaced else "", md.get("name"))
        if md.get("name") and ident in seen:   # (names made from a generateName never clash)
            first = seen[ident]
            out.problems.append(Problem(doc.file, doc.line, describe(doc), "metadata.name",
                                        f"defined twice (first at {first.file}:{first.line})"))
            continue
        seen[ident] = doc
        try:
            created = _create(client, k, doc.obj)
            admitted.append(doc)
            if doc.obj.get("kind") == kinds.JOBFLOW.kind:
                out.jobflows.append((doc, created))
        except errors.Invalid as exc:
            out.problems.extend(_located(doc, fe.path, fe.message, fe.offset) for fe in exc.errors)
            if doc.obj.get("kind") == kinds.JOBFLOW.kind:
                out.refused.append((doc, list(exc.errors)))
        except errors.ApiError as exc:
            out.problems.append(Problem(doc.file, doc.line, describe(doc), "", exc.message))
    if check_templates:   # (the flows of a JobFlow admission refused: those it found no fault in)
        out.problems.extend(_missing_templates(docs, [(d, _sound_flows(d.obj, [])) for d, _ in out.jobflows]
                                               + [(d, _sound_flows(d.obj, errs)) for d, errs in out.refused]))
        out.problems.extend(_missing_priority_classes(docs, admitted))
    return out


def _create(client: Any, kind: kinds.Kind | None, obj: Obj) -> Obj:
    """Create `obj`; if it exists already, apply it as `kubectl apply` would: the fields it gives are
    merged onto the live object (its status aside: a subresource), through update admission. Only
    what the API starts with — the `default` Namespace, the `root` and `default` Queues, the `standard`
    StorageClass — can exist
    when a document is applied (a name defined twice is a problem before that): Volcano's guides
    change the default queue this way (`kubectl apply` of a Queue named `default`)."""
    try:
        return client.create(obj)
    except errors.AlreadyExists:
        if kind is None:
            raise
        md = obj["metadata"]
        patch = {key: value for key, value in obj.items() if key != "status"}
        return client.patch(kind, (md.get("namespace") or "default") if kind.namespaced else "", md["name"], patch)


def _located(doc: yamlio.Document, path: str, message: str, offset: int | None = None) -> Problem:
    return at_character(doc, path, _quote_hint(doc, path, message), offset)


def at_character(doc: yamlio.Document, path: str, message: str, offset: int | None) -> Problem:
    """A problem at the field `path`; with `offset` (a character of its string, an expression's error),
    at the line and column where that character was written. Where a column cannot be known (see
    yamlpos), the string's first character, and the message says so."""
    at = doc.position_of(path, offset) if offset is not None else None
    if at is None:
        return Problem(doc.file, doc.line_of(path, offset), describe(doc), path, message)
    if not at.exact:
        head, sep, rest = message.partition("\n")
        message = f"{head} (the column is where the string starts: the character's own is not known){sep}{rest}"
    return Problem(doc.file, at.line, describe(doc), path, message, at.column)


def _quote_hint(doc: yamlio.Document, path: str, message: str) -> str:
    """`message` about the field at `path`, saying why a boolean or number written unquoted (`n`, `5`) is
    not the string it expects, and how it was written (yamlio.quote_hint; admission, which sees only
    the value, says less): for a field, or each such element of a list of strings."""
    value = _value_at(doc.obj, path)
    if isinstance(value, list) and message.endswith("must be of type array of strings"):
        hints = [f"[{j}]: {yamlio.quote_hint(v, doc.plain_text(f'{path}[{j}]'))}"
                 for j, v in enumerate(value) if yamlio.quote_hint(v)]
        return ": ".join([message, "; ".join(hints)]) if hints else message
    generic = yamlio.quote_hint(value)
    if not generic:
        return message
    spelled = yamlio.quote_hint(value, doc.plain_text(path))
    if generic in message:
        return message.replace(generic, spelled)
    wants_string = message.endswith("must be of type string") or (   # (a CRD schema's words end with the type found)
        "in body must be of type string: " in message and message.endswith('"'))
    return f"{message}: {spelled}" if wants_string else message


def _value_at(obj: Any, path: str) -> Any:
    """The value at field path `path` of `obj` (None where there is none)."""
    for seg in yamlio.split_path(path):
        if isinstance(obj, dict):
            obj = obj.get(seg)
        elif isinstance(obj, list) and seg.isdigit() and int(seg) < len(obj):
            obj = obj[int(seg)]
        else:
            return None
    return obj


_FLOW_PATH = re.compile(r"spec\.flows\[([0-9]+)\]")


def _sound_flows(obj: Obj, field_errors: list[errors.FieldError]) -> list[int]:
    """The positions of the JobFlow's flows that admission found no fault in (`field_errors`: its errors;
    none for an admitted JobFlow), each a mapping with a name: their templates can still be checked."""
    spec = obj.get("spec")
    flows = spec.get("flows") if isinstance(spec, dict) else None
    if not isinstance(flows, list):
        return []
    faulty = {int(m.group(1)) for e in field_errors for m in [_FLOW_PATH.match(e.path)] if m}
    return [i for i, f in enumerate(flows)
            if i not in faulty and isinstance(f, dict) and isinstance(f.get("name"), str) and f["name"]]


def _priority_class_refs(obj: Obj) -> list[tuple[str, str]]:
    """(field path, PriorityClass name) of each class a vcjob's or JobTemplate's pods get: a task's
    own, else the job's (Volcano's pods inherit it), at the path where it is written."""
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    job_class = spec.get("priorityClassName")
    refs: dict[tuple[str, str], None] = {}
    for i, task in enumerate(spec.get("tasks") if isinstance(spec.get("tasks"), list) else ()):
        template = task.get("template") if isinstance(task, dict) else None
        pod_spec = template.get("spec") if isinstance(template, dict) else None
        own = pod_spec.get("priorityClassName") if isinstance(pod_spec, dict) else None
        if own:
            refs[(f"spec.tasks[{i}].template.spec.priorityClassName", own)] = None
        elif job_class:
            refs[("spec.priorityClassName", job_class)] = None
    return [(path, name) for path, name in refs
            if isinstance(name, str) and not flowtemplate.PLACEHOLDER.search(name)]   # (a flow's vcjob is checked)


def _class_refused(name: str) -> str:
    return (f'PriorityClass "{name}" not found: no file given defines it, and pods naming it are refused '
            f"(no PriorityClass with name {name} was found)")


def _missing_priority_classes(docs: list[yamlio.Document], admitted: list[yamlio.Document]) -> list[Problem]:
    """A problem for each PriorityClass the pods of an (admitted) vcjob or JobTemplate would name
    that no document defines: they would be refused, as Kubernetes' Priority admission refuses them
    (a Pod naming one is refused when it is applied)."""
    defined = {d.obj["metadata"].get("name") for d in docs
               if d.obj.get("kind") == "PriorityClass" and isinstance(d.obj.get("metadata"), dict)}
    return [Problem(d.file, d.line_of(path), describe(d), path, _class_refused(name))
            for d in admitted if d.obj.get("kind") in ("Job", "JobTemplate")
            for path, name in _priority_class_refs(d.obj) if not podpriority.known(name, defined)]


def _undefined_service_accounts(docs: list[yamlio.Document]) -> list[tuple[yamlio.Document, str, str, str]]:
    """(document, field path, namespace, name) of each ServiceAccount a document's pods would name that no
    document defines in its namespace."""
    defined = {(_namespace_of(d.obj), d.obj["metadata"].get("name")) for d in docs
               if d.obj.get("kind") == "ServiceAccount" and isinstance(d.obj.get("metadata"), dict)}
    return [(d, path, _namespace_of(d.obj), name) for d in docs if d.obj.get("kind") != "ServiceAccount"
            for path, written in runaccounts.service_account_refs(d.obj) for name in _resolved(written, d, docs)
            if (_namespace_of(d.obj), name) not in defined]


def _resolved(name: str, d: yamlio.Document, docs: list[yamlio.Document]) -> list[str]:
    """The account names `name` stands for: itself, or with `{{params.<p>}}` filled in by the parameters of
    the JobFlow `d` is (or of each JobFlow of its namespace running JobTemplate `d`); a name with another
    placeholder (an item, an output) is known only at run time: none."""
    if not flowtemplate.PLACEHOLDER.search(name):
        return [name]
    ns, own = _namespace_of(d.obj), (d.obj.get("metadata") or {}).get("name")

    def runs_it(f: yamlio.Document) -> bool:
        if f is d or d.obj.get("kind") != kinds.JOBTEMPLATE.kind:
            return f is d
        flows = f.obj["spec"].get("flows")
        return _namespace_of(f.obj) == ns and isinstance(flows, list) and \
            any(isinstance(x, dict) and x.get("name") == own for x in flows)

    out = []
    for f in docs:
        if f.obj.get("kind") != kinds.JOBFLOW.kind or not isinstance(f.obj.get("spec"), dict) or not runs_it(f):
            continue
        values = {f"params.{k}": v for k, v in flowtemplate.arguments(f.obj["spec"]).items() if isinstance(v, str)}
        try:
            filled = flowtemplate.substitute(name, values, only=lambda n: n.split(".")[0] == "params")
        except ValueError:
            continue   # (an undeclared parameter: the JobFlow's own problem)
        if filled and filled != serviceaccount.DEFAULT and not flowtemplate.PLACEHOLDER.search(filled):
            out.append(filled)
    return list(dict.fromkeys(out))


def _stand_in_service_accounts(client: Any, docs: list[yamlio.Document]) -> None:
    """Make each ServiceAccount the documents' pods name and no document defines, so the pods are not
    refused: it stands for the account the cluster these manifests come from has (vclite authenticates
    nobody with it). `warnings` says so at the field. A namespace no document or the API has is left to
    the documents' own problems."""
    for _, _, namespace, name in _undefined_service_accounts(docs):
        try:
            client.create({"apiVersion": "v1", "kind": "ServiceAccount",
                           "metadata": {"name": name, "namespace": namespace}})
        except (errors.AlreadyExists, errors.NotFound, errors.Invalid, errors.Forbidden):
            pass


def _missing_templates(docs: list[yamlio.Document], jobflows: list[tuple[yamlio.Document, list[int]]]) -> list[Problem]:
    """A problem for each flow of `jobflows` (each JobFlow with the positions of the flows to check)
    whose JobTemplate no document defines."""
    templates = {(_namespace_of(d.obj), d.obj["metadata"].get("name"))
                 for d in docs if d.obj.get("kind") == "JobTemplate"}
    problems = []
    for d, sound in jobflows:
        ns = _namespace_of(d.obj)
        flows = d.obj["spec"]["flows"] if sound else []
        for i in sound:
            name = flows[i]["name"]
            if (ns, name) not in templates:
                path = f"spec.flows[{i}].name"
                problems.append(Problem(d.file, d.line_of(path), describe(d), path,
                                        f'JobTemplate "{name}" not found in namespace "{ns}": no file given '
                                        "defines it (a flow runs the JobTemplate of the same name)"))
    return problems


def _flow_jobs(client: Any, applied: _Applied) -> list[Problem]:
    """A problem for each flow whose vcjob — its JobTemplate with the flow's `patch.jobSpec` merged
    on, under the longest name the flow gives one — admission refuses (`replicas: -1` in a patch, a
    queue that does not exist, pod names over 63 characters…): the controller would find out only
    when it creates the job, and fail the flow. Placeholders are filled with what is known before
    the run (parameters, each withItems item — up to MAX_ITEMS_CHECKED —, iteration 0); a spec that
    reads job outputs or withParam items is left to the run. The flows of a JobFlow admission
    refused are checked too, but for those it found at fault (their own problems are reported), and
    their vcjobs only while its metadata is sound (a vcjob is named after the JobFlow)."""
    problems = []
    classes = {meta.name(pc) for pc in client.list(kinds.PRIORITYCLASS)}
    checks = [(d, jobflow, _sound_flows(jobflow, []), True) for d, jobflow in applied.jobflows]
    for d, errs in applied.refused:
        md = d.obj.get("metadata") if isinstance(d.obj.get("metadata"), dict) else {}
        named = isinstance(md.get("name"), str) and not any(e.path in _NAMING for e in errs)
        jobflow = {**d.obj, "metadata": {**md, "namespace": _namespace_of(d.obj), "uid": _NO_UID}}
        checks.append((d, jobflow, _sound_flows(d.obj, errs), named))
    for d, jobflow, sound, named in checks:
        if sound:
            problems.extend(_flows_of(client, classes, d, jobflow, sound, named))
    return problems


_NAMING = ("metadata", "metadata.name", "metadata.namespace")   # (the fields its vcjobs' names and labels come from)
_NO_UID = "00000000-0000-0000-0000-000000000000"   # (a refused JobFlow's, for the vcjobs' owner reference)


def _flows_of(client: Any, classes: set[str], d: yamlio.Document, jobflow: Obj, sound: list[int],
              named: bool) -> list[Problem]:
    """The problems of the flows at positions `sound` of one JobFlow: their JobTemplates' placeholders,
    withItems items and (if `named`) vcjobs."""
    problems = []
    spec = jobflow["spec"]
    flows = spec["flows"]
    declared = jobflow_admission.declared_parameters(spec)
    params = {name: value for name, value in declared.items() if value is not None}
    templates = {}
    for i in sound:
        try:
            templates[flows[i]["name"]] = client.get(kinds.JOBTEMPLATE, meta.namespace(jobflow), flows[i]["name"])
        except errors.NotFound:
            continue   # (reported missing, or defined in a file not read)
    templates_of_flows = {f["name"] for f in flows if isinstance(f, dict) and isinstance(f.get("name"), str)}
    reads = {name: set(objects.placeholders(t.get("spec") or {})) for name, t in templates.items()}
    bad = jobflow_admission.template_errors(spec, {name: flowtemplate.placeholder_paths(t.get("spec") or {}, "spec")
                                                   for name, t in templates.items()})
    problems.extend(at_character(d, e.path, e.message, e.offset) for e in bad)
    problems.extend(_item_fields(d, flows, sound, reads))
    for i in sound if named else ():
        f = flows[i]
        patch = (f.get("patch") or {}).get("jobSpec") if isinstance(f.get("patch"), dict) else None
        template = templates.get(f["name"])
        if template is None or any(e.path == f"spec.flows[{i}].name" for e in bad):
            continue
        name = _longest_job_name(meta.name(jobflow), f)
        items = f.get("withItems") if isinstance(f.get("withItems"), list) else None
        defined = functools.partial(flowtemplate.in_context, flows=templates_of_flows,
                                    params=bool(declared) or not declared.complete,
                                    loop=items is not None or f.get("withParam") is not None,
                                    repeat=f.get("repeat") is not None, exit=f["name"] == spec.get("onExit"))
        reads_item = items is not None and any(n.split(".")[0] == "item" and defined(n) for n in
                                               {*reads.get(f["name"], ()), *objects.placeholders(patch or {})})
        reads_params = any(n.split(".")[0] == "params" and defined(n) for n in reads.get(f["name"], ()))
        if not patch and not reads_item and not reads_params and not _long_pod_names(template, name) and \
                _queue_open(client, template):
            continue   # the template was checked as a vcjob already (its queue aside): only its name differs
        check = _FlowCheck(d, client, classes, jobflow, template, f, i, name, patch, defined)
        # every item (each makes its own vcjob), up to MAX_ITEMS_CHECKED distinct ones; else the first
        seen: set[str] = set()
        for j, item in (enumerate(items) if reads_item else enumerate(items[:1] if items else [_NO_ITEM])):
            key = "" if item is _NO_ITEM else flowtemplate.render(item)
            if key in seen:
                continue
            seen.add(key)
            found = check.problems(flowtemplate.template_values(
                params, {}, *(() if item is _NO_ITEM else (item,)),
                iteration=0 if f.get("repeat") is not None else None), j if reads_item else None)
            if found or len(seen) >= MAX_ITEMS_CHECKED:
                problems.extend(found)
                break
    return problems


_NO_ITEM = object()   # a flow that is not a withItems loop


def _queue_open(client: Any, template: Obj) -> bool:
    """Whether the template's queue exists and is Open — JobTemplate admission does not look (a template
    may come before its queue), the vcjob's does; a placeholder is checked with the item or parameter."""
    queue = (template.get("spec") or {}).get("queue")
    if not isinstance(queue, str) or flowtemplate.PLACEHOLDER.search(queue):
        return True
    try:
        q = client.get(kinds.QUEUE, "", queue)
    except errors.NotFound:
        return False
    return ((q.get("status") or {}).get("state") or "Open") == "Open" and queue != "root"
MAX_ITEMS_CHECKED = 1000   # withItems items built and dry-run each before a run (a run of more checks the rest)


@dataclasses.dataclass
class _FlowCheck:
    """Builds one flow's vcjob with given placeholder values and dry-runs it: the problems, if any."""

    d: yamlio.Document
    client: Any
    classes: set[str]
    jobflow: Obj
    template: Obj
    f: Obj
    i: int
    name: str
    patch: Obj | None
    defined: Any

    def problems(self, values: dict[str, str], item_index: int | None) -> list[Problem]:
        d, f, i, patch = self.d, self.f, self.i, self.patch
        path = f"spec.flows[{i}].patch.jobSpec" if patch else f"spec.flows[{i}].name"
        where = (d.file, d.line_of(path), describe(d), path)
        refused = f'the vcjob it makes from JobTemplate "{f["name"]}" would be refused: '
        if item_index is not None:
            item_path = f"spec.flows[{i}].withItems[{item_index}]"
            where = (d.file, d.line_of(item_path), describe(d), item_path)
            refused = f'item {item_index}: ' + refused
        try:
            job = objects.build_instance(self.jobflow, self.template, f["name"], self.name, patch, None)
            if any(flowtemplate.lookup(n, values) is None for n in objects.placeholders(job["spec"]) if self.defined(n)):
                return []   # reads outputs (or withParam items): known only at run time
            job["spec"] = objects.fill(job["spec"], values, self.defined)
            missing = [(p, n) for p, n in _priority_class_refs(job) if not podpriority.known(n, self.classes)]
            if missing:
                return [Problem(*where, f"{refused}{p}: {_class_refused(n)}") for p, n in missing]
            self.client.create(job, dry_run=True)   # (under its real name: pod names are checked against it)
        except ValueError as e:
            at = _PATCH_FIELD.match(str(e)) if patch else None   # (the patch element at fault, and its line)
            precise = f"spec.flows[{i}].patch.jobSpec{at.group(1)}" if at else path
            return [Problem(d.file, d.line_of(precise), describe(d), precise, str(e)[at.end():] if at else str(e))]
        except errors.AlreadyExists:
            return []   # a file defines a vcjob of that name: the run reports the clash
        except errors.Invalid as exc:
            return [Problem(*self._origin(job, fe.path, where), f"{refused}{fe.path}: {fe.message}"
                            + self._new_task_note(job, fe.path)) for fe in exc.errors]
        except errors.ApiError as exc:
            return [Problem(*where, refused + exc.message)]
        return []

    def _new_task_note(self, job: Obj, path: str) -> str:
        """For a refused field of a task the patch added (its name matches no task of the template, as a
        misspelt one): that it was added, and the template's task names."""
        m = re.match(r"spec\.tasks\[([0-9]+)\]", path)
        tasks = (job.get("spec") or {}).get("tasks")
        if not self.patch or not m or not isinstance(tasks, list) or int(m.group(1)) >= len(tasks):
            return ""
        name = tasks[int(m.group(1))].get("name") if isinstance(tasks[int(m.group(1))], dict) else None
        own = [t.get("name") for t in (self.template.get("spec") or {}).get("tasks") or () if isinstance(t, dict)]
        if not isinstance(name, str) or name in own:
            return ""
        return (f" (the patch's task \"{name}\" names no task of the JobTemplate ({', '.join(map(str, own))}), so it "
                "is added as a new task)")

    def _origin(self, job: Obj, path: str, where: tuple) -> tuple:
        """Where to report a refused field of the merged vcjob: the patch element it came from, when
        it came from the patch (and not through an item: then the item is reported)."""
        if not self.patch or not path.startswith("spec.") or where[-1].startswith(f"spec.flows[{self.i}].withItems"):
            return where
        base = objects.build_job(self.jobflow, self.template, self.f["name"])["spec"]
        origin = flowtemplate.patch_origin(base, self.patch, job["spec"], path.removeprefix("spec."))
        if origin is None:
            return where
        precise = f"spec.flows[{self.i}].{origin}"
        return self.d.file, self.d.line_of(precise), describe(self.d), precise


def _item_fields(d: yamlio.Document, flows: list, sound: list[int], reads: dict[str, set[str]]) -> list[Problem]:
    """A problem for each withItems item of the flows at `sound` that lacks a field its flow's
    JobTemplate or patch reads (`{{item.a}}` with an item that has no `a`): that item's vcjob would
    fail to be made."""
    problems = []
    for i in sound:
        f = flows[i]
        items = f.get("withItems")
        if not isinstance(items, list):
            continue
        patch = (f.get("patch") or {}).get("jobSpec") if isinstance(f.get("patch"), dict) else None
        fields_read = sorted(n for n in {*reads.get(f["name"], ()), *objects.placeholders(patch or {})}
                             if n.startswith("item."))
        for name in fields_read:
            for j, item in enumerate(items):
                if flowtemplate.lookup(name, flowtemplate.template_values(item=item)) is None:
                    path = f"spec.flows[{i}].withItems[{j}]"
                    problems.append(Problem(d.file, d.line_of(path), describe(d), path,
                                            f'flow "{f["name"]}": item {flowtemplate.render(item)} has no '
                                            f"{name[len('item.'):]!r}, which {{{{{name}}}}} reads"))
                    break   # (one item per field is enough to see the problem)
    return problems


def _longest_job_name(jobflow: str, f: Obj) -> str:
    """The longest vcjob name flow `f` makes: `<jobflow>-<flow>`, with `-<index>` of its last item
    or iteration for a loop (`-0` for withParam, whose length is known only at run time)."""
    base = flow.job_name(jobflow, f["name"])
    if isinstance(f.get("withItems"), list):
        return f"{base}-{max(len(f['withItems']) - 1, 0)}"
    if isinstance(f.get("repeat"), dict):
        return f"{base}-{max(int(f['repeat'].get('limit', 1)) - 1, 0)}"
    return f"{base}-0" if f.get("withParam") else base


def _long_pod_names(template: Obj, job_name: str) -> bool:
    """Whether some pod `<job>-<task>-<index>` of a vcjob of that name would pass 63 characters."""
    for i, task in enumerate((template.get("spec") or {}).get("tasks") or ()):
        if not isinstance(task, dict):
            continue
        replicas = task.get("replicas")
        last = replicas - 1 if isinstance(replicas, int) and replicas > 0 else 0
        if len(f"{job_name}-{task.get('name') or f'default{i}'}-{last}") > 63:
            return True
    return False


def warnings(docs: list[yamlio.Document], paths_mapped: bool | None = None) -> list[Problem]:
    """Fields no schema defines (admission/fields.py): ignored, so most likely a typo; a warning
    each, with the closest known name (kubectl's strict validation refuses them). And valid
    manifests that most likely do not mean what they say (admission/advice.py; `paths_mapped`: whether
    containers run here see their volumeMounts and termination message path at their paths — None: as this
    host can, executor/mountview.py). Listed as problems are: in the order of the files (as `docs` first
    names them), then of their lines."""
    def mapped() -> bool:   # (asked only of a manifest the answer changes a warning of: it starts a process)
        if paths_mapped is None:
            from vclite.executor import mountview
            return mountview.available() is None
        return paths_mapped
    templates: dict[tuple[str, str], list[str]] = {}
    specs: dict[tuple[str, str], dict] = {}
    for d in docs:
        if d.obj.get("kind") == "JobTemplate" and isinstance(d.obj.get("spec"), dict):
            tasks = d.obj["spec"].get("tasks")
            key = (_namespace_of(d.obj), str(meta.name(d.obj)))
            templates[key] = [str(t.get("name")) for t in (tasks if isinstance(tasks, list) else [])
                              if isinstance(t, dict)]
            specs[key] = d.obj["spec"]
    out = []
    for d in docs:
        found = [*(fields.unknown_in(d.obj) if d.obj.get("kind") != "JobFlow" else []), *advice.advice_in(d.obj, mapped)]
        if d.obj.get("kind") == "JobFlow":
            ns = _namespace_of(d.obj)
            found += advice.probe_task_advice(d.obj, lambda name, ns=ns: templates.get((ns, name)))
            found += advice.template_context_advice(d.obj, lambda name, ns=ns: specs.get((ns, name)))
            found += _misread_items(d, lambda name, ns=ns: specs.get((ns, name)))
        out += [Problem(d.file, d.line_of(path), describe(d), path, message) for path, message in found]
    out += [Problem(d.file, d.line_of(path), describe(d), path,
                    f'ServiceAccount "{name}" is not defined in the files given: the embedded control plane makes '
                    f"one in namespace {ns} for the run (on a cluster it must exist, or its pods are refused)")
            for d, path, ns, name in _undefined_service_accounts(docs)]
    out += [Problem(d.file, d.line_of(path), describe(d), path,
                    f'ServiceAccount "{written}" is named only when the JobFlow makes the vcjob: the embedded control '
                    f"plane then makes each account it names that namespace {_namespace_of(d.obj)} lacks, for the run "
                    "(on a cluster each must exist, or its pods are refused)")
            for d, path, written in runaccounts.filled_at_run_time(docs)]
    namespaced = [(d.obj, _namespace_of(d.obj)) for d in docs]
    out += [Problem(docs[i].file, docs[i].line_of(path), describe(docs[i]), path,
                    runclaims.undefined_message(name, namespaced[i][1], by))
            for i, path, name, by in runclaims.undefined_claims(namespaced)]
    out += [Problem(d.file, d.line_of(path), describe(d), path, message)
            for d in docs for path, message in runclaims.claim_spec_problems(d.obj)]
    files: dict[str, int] = {}
    for d in docs:
        files.setdefault(d.file, len(files))
    return sorted(out, key=lambda w: (files.get(w.file, len(files)), w.line, w.column))   # (stable)


def made_account_warning(docs: list[yamlio.Document], made: Any) -> Problem:
    """The warning about an account the embedded control plane made when it created a vcjob (standins.Made), at
    the field that wrote its name (a JobTemplate's, a flow's patch), else at the vcjob's field."""
    source = runaccounts.made_source(docs, made)
    if source is None:
        return Problem("", 0, f"Job/{meta.name(made.job)}", made.field, runaccounts.made_message(made))
    d, path = source
    return Problem(d.file, d.line_of(path), describe(d), path, runaccounts.made_message(made))


def _misread_items(d: yamlio.Document, template_spec: Any) -> list[tuple[str, str]]:
    """(field path, warning) for each value of a withItems item that was written unquoted and that YAML
    reads as something else than its text (`[y, n]` are true and false, `010` is 8): a flow's vcjobs
    would get "true", not "y", where they read `{{item}}`. Only for the values the flow's vcjobs read
    (`_items_read`): an item no placeholder writes anywhere is taken as it is."""
    spec = d.obj.get("spec")
    flows = spec.get("flows") if isinstance(spec, dict) else None
    out = []
    for i, f in enumerate(flows if isinstance(flows, list) else ()):
        items = f.get("withItems") if isinstance(f, dict) else None
        read = _items_read(f, template_spec) if isinstance(items, list) else set()
        todo = [(item, f"spec.flows[{i}].withItems[{j}]", "item") for j, item in enumerate(items)] if read else []
        while todo:
            value, path, placeholder = todo.pop(0)
            if isinstance(value, dict | list):
                todo[:0] = [(v, f"{path}.{k}" if isinstance(value, dict) else f"{path}[{k}]", f"{placeholder}.{k}")
                            for k, v in (value.items() if isinstance(value, dict) else enumerate(value))]
                continue
            text = d.plain_text(path)
            shown = flowtemplate.render(value)
            written = any(placeholder == name or placeholder.startswith(f"{name}.") for name in read)
            if written and text is not None and yamlio.quote_hint(value) and shown != text:
                out.append((path, f'{{{{{placeholder}}}}} gives "{shown}": {yamlio.quote_hint(value, text)} '
                                  "if the text was meant"))
    return out


def _items_read(f: Obj, template_spec: Any) -> set[str]:
    """The `item…` placeholders that flow `f`'s vcjobs are made with: those of its JobTemplate
    (`template_spec(name)`: its spec, None if no document defines it) with its `patch.jobSpec` merged on
    (a field the patch replaces is not the template's any more). With no such template, every item is
    taken as read (`{{item}}`): the template, defined elsewhere, may read it."""
    patch = (f.get("patch") or {}).get("jobSpec") if isinstance(f.get("patch"), dict) else None
    spec = template_spec(f["name"]) if isinstance(f.get("name"), str) else None
    if not isinstance(spec, dict):
        return {"item"}
    try:
        merged = flowtemplate.apply_patch(spec, patch) if patch is not None else spec
    except ValueError:   # (a patch of the wrong shape, an error of its own): both as written
        merged = [spec, patch]
    return {name for name in flowtemplate.placeholders(merged) if name.split(".")[0] == "item"}


def _namespace_of(obj: dict) -> str:
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return str(md.get("namespace") or "default")


def validate(docs: list[yamlio.Document], require_command: bool = True, whole: bool = True,
             client: Any = None) -> list[Problem]:
    """Every admission problem of the documents, and a JobFlow's fields no schema defines (a typo in
    `spec.flows` would run nothing and succeed; kubectl's strict validation and vclite's server refuse
    them too; other kinds' unknown fields are `warnings`). They are created on `client` — a fresh API that
    nothing runs yet, such as `vcctl run`'s own before it starts (so they are admitted once) — or by
    default on a scratch API. `whole=False`: some documents could not be read, so a JobFlow's
    templates may be among them (not reported missing)."""
    if client is None:
        client = inprocess.new_client(clock_mod.RealClock(), require_command=require_command)
    jobflows = [d for d in docs if d.obj.get("kind") == "JobFlow"]
    strict = [Problem(d.file, d.line_of(path), describe(d), path, message.removesuffix(": it is ignored"))
              for d in jobflows for path, message in fields.unknown_in(d.obj)]
    applied = _apply(client, docs, check_templates=whole)
    return strict + applied.problems + _flow_jobs(client, applied) + _taken_job_names(docs)


def _taken_job_names(docs: list[yamlio.Document]) -> list[Problem]:
    """A vcjob of the FILES named as the vcjob a JobFlow of the FILES makes for a flow (`<jobflow>-<flow>`, same
    namespace): the JobFlow would not take it for its own (not created by it), so the flow would wait for ever."""
    jobs = {(_namespace_of(d.obj), d.name): d for d in docs if d.kind == kinds.JOB.kind and d.name}
    problems = []
    for d in docs:
        flows = (d.obj.get("spec") or {}).get("flows") if d.kind == kinds.JOBFLOW.kind and d.name else None
        for f in flows if isinstance(flows, list) else ():
            name = f.get("name") if isinstance(f, dict) else None
            job = jobs.get((_namespace_of(d.obj), flow.job_name(d.name, name))) if isinstance(name, str) else None
            if job is not None:
                problems.append(Problem(job.file, job.line_of("metadata.name"), describe(job), "metadata.name",
                                        f"JobFlow {d.name} ({d.file}:{d.line}) makes a vcjob of this name for its flow "
                                        f"{name}: it would not take this one for its own and wait for ever; name "
                                        "this vcjob otherwise"))
    return problems


def nodes_among(read: tuple[list[yamlio.Document], list[Any]], nodes_opt: str | None
                ) -> tuple[tuple[list[yamlio.Document], list[Any]], list[dict] | None, list[Any]]:
    """The FILES' v1 Nodes taken out of what was read: (the rest, the run's nodes — None when no FILE has one —,
    problems). A file of Node objects among the FILES declares the nodes the run's pods run on, as `--nodes FILE`
    does (a Node only created in the API would have no executor: a pod bound to it would never start); with
    `--nodes` too, each is a problem (the nodes are declared in one place). `vcctl validate` checks them so too."""
    docs, read_problems = read
    found = [d for d in docs if d.kind == kinds.NODE.kind and d.obj.get("apiVersion") == kinds.NODE.api_version]
    if not found:
        return read, None, []
    rest = ([d for d in docs if d not in found], read_problems)
    if nodes_opt:
        return rest, None, [Problem(d.file, d.line, describe(d), "",
                                    f"--nodes {stdinput.name(nodes_opt)} declares the run's nodes: give "
                                    "them in one place, a file of Nodes among the FILES or --nodes")
                            for d in found]
    try:
        return rest, nodes_mod.nodes_from_documents(found), []
    except ValueError as exc:   # (`file:line: Node/n: field: message`: the first, as a manifest problem reads)
        return rest, None, [str(exc)]


def read_all(paths: list[str]) -> tuple[list[yamlio.Document], list[Any]]:
    """(the documents that could be read, every structural problem): what `load_and_validate` takes as
    `read` when the caller needs the documents before it validates them (`vcctl run`'s scheduler ConfigMap)."""
    return _read_all(paths)


def load_and_validate(paths: list[str], require_command: bool = True, client: Any = None,
                      params: dict[str, str] | None = None,
                      read: tuple[list[yamlio.Document], list[Any]] | None = None,
                      ) -> tuple[list[yamlio.Document], list[Any]]:
    """(documents, problems): every structural problem of loading, and every admission problem of
    the documents that could be read (see `validate` for `client`), with `params` (`-p NAME=VALUE`)
    set in the JobFlows first (set_params), and those of the scheduler configuration a ConfigMap carries
    (schedconfmap.py). `read`: `read_all(paths)`'s result, when the caller read the files already."""
    docs, problems = read if read is not None else _read_all(paths)
    whole = not problems
    problems = [*problems, *set_params(docs, params or {})]
    if docs:
        problems = [*problems, *validate(docs, require_command, whole=whole, client=client),
                    *_scheduler_conf_problems(docs)]
    return docs, in_file_order(problems, paths)


def _scheduler_conf_problems(docs: list[yamlio.Document]) -> list[Problem]:
    """The problems of the scheduler configuration in Volcano's scheduler ConfigMap, if a document is one."""
    doc = schedconfmap.find(docs)
    if doc is None:
        return []
    return [Problem(doc.file, line, describe(doc), schedconfmap.FIELD, message)
            for line, message in schedconfmap.parse(doc)[1]]


def in_file_order(problems: list[Any], paths: list[str]) -> list[Any]:
    """`problems` in the order of the FILES, then of their lines and columns (found in passes — structure,
    admission in dependency order, cross-document checks — they would jump back and forth); a problem
    about the command line (`-p`, a plain string) first. The sort is stable: one line keeps its order."""
    files: dict[str, int] = {}
    for path in paths:
        files.setdefault(source_name(path), len(files))

    def key(p: Any) -> tuple[int, int, int]:
        if isinstance(p, str):
            return -1, 0, 0
        return files.get(p.file, len(files)), p.line, getattr(p, "column", 0)
    return sorted(problems, key=key)


def set_params(docs: list[yamlio.Document], params: dict[str, str]) -> list[str]:
    """`vcctl run -p NAME=VALUE` (as `argo submit -p`): the value of parameter NAME in
    `spec.arguments.parameters` of every JobFlow that declares it, in place. A NAME no JobFlow
    declares is a problem (a typo would otherwise run the flow with the file's value)."""
    if not params:
        return []
    declared: set[str] = set()
    unquoted: set[str] = set()   # (names YAML reads as no string, `n`: admission's problem says to quote them)
    for d in docs:
        if not isinstance(d.obj, dict) or d.obj.get("kind") != kinds.JOBFLOW.kind:
            continue
        spec = d.obj.get("spec")
        arguments = spec.get("arguments") if isinstance(spec, dict) else None
        parameters = arguments.get("parameters") if isinstance(arguments, dict) else None
        for j, p in enumerate(parameters if isinstance(parameters, list) else []):
            if isinstance(p, dict) and isinstance(p.get("name"), str):
                declared.add(p["name"])
                if p["name"] in params:
                    p["value"] = params[p["name"]]
            elif isinstance(p, dict):
                unquoted.add(d.plain_text(f"spec.arguments.parameters[{j}].name") or "")
    return [f'-p {name}: no JobFlow declares the parameter "{name}" in spec.arguments.parameters'
            + (f" (declared: {', '.join(sorted(declared))})" if declared else " (none declares any)")
            for name in params if name not in declared and name not in unquoted]
