"""From a JobTemplate to the spec of the vcjob a flow creates: `{{…}}` placeholders and `patch.jobSpec`.

`substitute` fills placeholders in every string of a JSON-shaped object; `template_values` builds
the values it reads from a JobFlow's parameters, finished flows' outputs, the loop item and the
repeat iteration; `apply_patch` merges a flow's `patch.jobSpec` onto the template's spec with the
rules of Volcano's design (docs/design/jobflow/job-template-parameter-overriding.md) and PR #4491.
Pure functions on plain dicts: arguments are never mutated, results share nothing with them.
No I/O, no store, no knowledge of the controller.
"""
from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from vclite.api import core, flowsyntax, yamlio
from vclite.lib import errors

Obj = dict[str, Any]

ROOTS = flowsyntax.ROOTS   # the placeholders' roots; other {{…}} text is left alone
PLACEHOLDER = re.compile(r"\{\{\s*((?:params|outputs|item|iteration|outcomes|workflow)(?:\.[A-Za-z0-9_-]+)*)\s*\}\}")
OTHER_BRACES = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)\s*\}\}")   # any root
_MISSING = object()


# ---- placeholders -----------------------------------------------------------------------------

def arguments(jobflow_spec: Any) -> dict[str, str]:
    """`spec.arguments.parameters` as {name: value} (admission has checked names and string values)."""
    params = ((jobflow_spec or {}).get("arguments") or {}).get("parameters") or []
    return {p["name"]: p.get("value", "") for p in params if isinstance(p, dict) and "name" in p}


def in_context(name: str, flows: Collection[str], *, params: bool, loop: bool, repeat: bool,
               exit: bool = False) -> bool:
    """Whether `{{name}}` in a flow's JobTemplate is a flow placeholder there. If not, it is left as it
    is written, as Volcano leaves it (a plain Volcano template may hold such text): `item…` only in a
    loop flow, `iteration` only in a repeat, `params.…` once the JobFlow has `spec.arguments`,
    `outputs.<f>` only when f is a flow of the JobFlow, `outcomes.<f>` also only in the exit handler, and
    `workflow.status` / `workflow.failures…` only there.
    (A patch is vclite's own: all of its are.)"""
    root, _, rest = name.partition(".")
    if root == "workflow":
        return exit and rest.split(".")[0] in flowsyntax.WORKFLOW_FIELDS
    if root == "outcomes":
        return exit and rest.split(".")[0] in flows
    if root == "item":
        return loop
    if root == "iteration":
        return repeat
    if root == "params":
        return params
    return root == "outputs" and rest.split(".")[0] in flows


def render(value: Any) -> str:
    """How a JSON value is written into a string: strings as they are, everything else as compact JSON."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def template_values(params: Mapping[str, str] | None = None, outputs: Mapping[str, str] | None = None,
                    item: Any = _MISSING, iteration: int | None = None,
                    outcomes: Mapping[str, str] | None = None,
                    workflow: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The flat values `substitute` reads: `params.<name>`, `outputs.<flow>` (surrounding whitespace
    removed, as in conditions), `item` (rendered: strings as they are, other values as JSON),
    `iteration` and (the exit handler's) `outcomes.<flow>` and `workflow.status` / `workflow.failures` (a
    JSON list). Fields (`{{item.x}}`, `{{outputs.f.x}}`) are
    read from these by `substitute`."""
    values = {f"params.{k}": v for k, v in (params or {}).items()}
    values.update({f"outputs.{k}": v.strip() for k, v in (outputs or {}).items()})
    values.update({f"outcomes.{k}": v for k, v in (outcomes or {}).items()})
    values.update({f"workflow.{k}": render(v) for k, v in (workflow or {}).items()})
    if item is not _MISSING:
        values["item"] = render(item)
    if iteration is not None:
        values["iteration"] = str(iteration)
    return values


def lookup(name: str, values: Mapping[str, str]) -> str | None:
    """The value of placeholder `name` (`item.a.0`): an exact key, else the longest key that is a
    dotted prefix of it, parsed as JSON and walked by the rest (object fields, list indexes)."""
    return _walk(name, values)[0]


def _walk(name: str, values: Mapping[str, str]) -> tuple[str | None, str]:
    """lookup's value, and when there is none but a prefix of `name` is known, why: where the walk stopped
    (`item.cfg has no field 'momentum' (object; its fields: lr)`, `item is not JSON: 'a'`)."""
    if name in values:
        return values[name], ""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        key = ".".join(parts[:cut])
        if key not in values:
            continue
        try:
            doc = json.loads(values[key])
        except ValueError:
            return None, f"{key} is {values[key][:40]!r}, not JSON: it has no fields"
        where = key
        for seg in parts[cut:]:
            if isinstance(doc, dict) and seg in doc:
                doc = doc[seg]
            elif isinstance(doc, list) and seg.isdigit() and int(seg) < len(doc):
                doc = doc[int(seg)]
            else:
                have = (f"its fields: {', '.join(list(doc)[:10]) or 'none'}" if isinstance(doc, dict)
                        else f"{len(doc)} elements" if isinstance(doc, list) else repr(render(doc)[:40]))
                return None, (f"{where} has no {'element' if isinstance(doc, list) else 'field'} {seg!r} "
                              f"({errors.json_type(doc)}; {have})")
            where = f"{where}.{seg}"
        return render(doc), ""
    return None, ""


def substitute(obj: Any, values: Mapping[str, str], path: str = "",
               only: Callable[[str], bool] | None = None) -> Any:
    """A deep copy of `obj` with every `{{name}}` in every string value replaced (keys are left alone).
    A placeholder is `{{ root.path }}` with root one of ROOTS (other `{{…}}` text, `{{.Values}}`-style
    text and single braces are left as they are, as Volcano leaves them). An unknown placeholder raises ValueError naming it and the field path
    (`path` is the prefix for that path, e.g. "spec"). `only`: the placeholders to fill in (others are
    left as written: `in_context`)."""
    if isinstance(obj, str):
        if "{{" not in obj:
            return obj

        def one(m: re.Match) -> str:
            if only is not None and not only(m.group(1)):
                return m.group(0)
            found, why = _walk(m.group(1), values)
            if found is None:
                if why:
                    raise ValueError(f"{path or '<root>'}: placeholder {m.group(0)}: {why}")
                known = ", ".join(sorted(values)) or "none"
                raise ValueError(f"{path or '<root>'}: unknown placeholder {m.group(0)} (known: {known})")
            return found

        return PLACEHOLDER.sub(one, obj)
    if isinstance(obj, dict):
        return {k: substitute(v, values, f"{path}.{k}" if path else str(k), only) for k, v in obj.items()}
    if isinstance(obj, list):
        return [substitute(v, values, f"{path}[{i}]", only) for i, v in enumerate(obj)]
    return copy.deepcopy(obj)


def placeholders(obj: Any) -> set[str]:
    """Every placeholder name used in the strings of `obj`."""
    found: set[str] = set()
    todo = [obj]
    while todo:
        o = todo.pop()
        if isinstance(o, str):
            if "{{" in o:
                found.update(PLACEHOLDER.findall(o))
        elif isinstance(o, dict):
            todo.extend(o.values())
        elif isinstance(o, list):
            todo.extend(o)
    return found


def placeholder_paths(obj: Any, base: str = "", pattern: re.Pattern = PLACEHOLDER) -> dict[str, str]:
    """Every placeholder name used in the strings of `obj`, with the field path of its first use
    (`base` + `.tasks[0].template.spec.containers[0].command[2]`), in document order. With
    `pattern=OTHER_BRACES`: the `{{x.y}}` text left alone (a root not in ROOTS), for warnings."""
    found: dict[str, str] = {}
    todo: list[tuple[Any, str]] = [(obj, base)]
    while todo:
        o, path = todo.pop()
        if isinstance(o, str):
            if "{{" in o:
                for name in pattern.findall(o):
                    if pattern is not OTHER_BRACES or name.split(".")[0] not in ROOTS:
                        found.setdefault(name, path)
            continue
        # (a path is written only for what may hold a placeholder: most strings hold none)
        if isinstance(o, dict):
            kids = [(v, f"{path}.{k}" if path else str(k)) for k, v in o.items()
                    if isinstance(v, (dict, list)) or (isinstance(v, str) and "{{" in v)]
        elif isinstance(o, list):
            kids = [(v, f"{path}[{i}]") for i, v in enumerate(o)
                    if isinstance(v, (dict, list)) or (isinstance(v, str) and "{{" in v)]
        else:
            continue
        kids.reverse()
        todo.extend(kids)
    return found


def parse_items(text: str, source: str = "withParam", path: Sequence[str] = (), ref: str = "") -> list[Any]:
    """The loop items a `withParam` value names: a JSON list — the whole output, or what `path` (object fields,
    list indexes: `withParam: "{{outputs.gen.items}}"`) leads to in it; `ref` is how the reader wrote the output
    (`outputs.gen`). ValueError otherwise, saying where the walk stopped and what is there (an empty output is
    said to be one: its pod most likely wrote no termination message; an object holding a list, which field)."""
    if not text.strip():
        raise ValueError(f"{source}: the output is empty, not a JSON list (did the pod write its list to "
                         "$TERMINATION_MESSAGE_PATH?)")
    try:
        items = json.loads(text)
    except ValueError as e:
        raise ValueError(f"{source}: not a JSON list ({e}){core.cut_message_note(text)}: {text[:80]!r}") from None
    where = ref
    for seg in path:
        if isinstance(items, dict) and seg in items:
            items = items[seg]
        elif isinstance(items, list) and seg.isdigit() and int(seg) < len(items):
            items = items[int(seg)]
        else:
            have = (f"its fields: {', '.join(list(items)[:10]) or 'none'}" if isinstance(items, dict)
                    else f"{len(items)} elements" if isinstance(items, list) else repr(render(items)[:80]))
            raise ValueError(f"{source}: {where} has no {'element' if isinstance(items, list) else 'field'} "
                             f"{seg!r} ({errors.json_type(items)}; {have})")
        where = f"{where}.{seg}"
    if not isinstance(items, list):
        at = f" at {where}" if path else ""
        lists = [k for k, v in items.items() if isinstance(v, list)] if isinstance(items, dict) else []
        hint = (f" (a list under a field is looped over as withParam: \"{{{{{where}.{lists[0]}}}}}\")"
                if lists and where else "")
        shown = render(items) if path else text
        raise ValueError(f"{source}: expected a JSON list{at}, got {errors.json_type(items)}: {shown[:80]!r}{hint}")
    return items


# ---- patch.jobSpec ----------------------------------------------------------------------------

# Lists inside a task's pod template merged element by element, matched by this field
# (job-template-parameter-overriding.md, "Pod level" and "Container level" tables).
LIST_KEYS = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "volumes": "name", "env": "name", "imagePullSecrets": "name",
    "volumeMounts": "mountPath", "ports": "containerPort", "tolerations": "key", "hostAliases": "ip",
}
# Of those, the lists whose matched elements merge recursively (a container: its image, env, resources…);
# a matched element of the others is replaced whole ("Replace", "Replace value" in the design doc): a pod
# volume changing its source, an env var going from value to valueFrom, a toleration changing its operator.
MERGED_ELEMENTS = frozenset({"containers", "initContainers", "ephemeralContainers"})
# Sections replaced whole rather than merged ("Replace entire section" in the design doc).
ATOMIC = frozenset({"affinity", "securityContext", "livenessProbe", "readinessProbe", "startupProbe"})


def apply_patch(template_spec: Obj, patch_job_spec: Obj | None) -> Obj:
    """The template's vcjob spec with a flow's `patch.jobSpec` merged onto it. Only what the patch
    names changes (a field absent or null in the patch keeps the template's value — unlike PR #4491,
    which always overwrote maxRetry and minAvailable). Nothing can be removed by a patch.

    - job-level fields (schedulerName, minAvailable, queue, maxRetry, priorityClassName, minSuccess,
      ttlSecondsAfterFinished, runningEstimate, networkTopology, policies, and any other): replaced;
      `policies` is replaced as a whole list.
    - `tasks`: merged by `name`; a patch task whose name the template lacks is appended. A patch task
      without a name: see the last rule. Within a matched task every field is replaced, except `template`, merged as below.
    - `volumes` (vcjob volumes): merged by `mountPath`; a matching volume is replaced whole (so
      volumeClaim and volumeClaimName never mix), others are appended.
    - `plugins` ({name: [args]}): per plugin the patch's arguments are appended to the template's,
      skipping arguments already present; new plugins are added.
    - a task's `template` (the pod template): objects merge key by key, recursively; scalars and
      unkeyed lists (command, args, …) are replaced; ATOMIC sections are replaced whole; the lists
      in LIST_KEYS merge element by element by their key (containers and pod volumes by name,
      env by name, volumeMounts by mountPath, ports by containerPort, tolerations by key, hostAliases
      by ip), new ones appended; a matched container merges recursively (so its `resources` merge per
      request/limit, its env by name), any other matched element is replaced whole.
    - in any keyed list (tasks, volumes, containers, …) an element without its key applies to the
      template's element when the template and the patch both have exactly one (the design doc's
      `tasks: [{template: …}]` example); otherwise it is a ValueError.

    ValueError (with the patch field path) when the patch has the wrong shape."""
    merged = copy.deepcopy(template_spec or {})
    if patch_job_spec is None:
        return merged
    if not isinstance(patch_job_spec, dict):
        raise ValueError(f"patch.jobSpec: expected an object, got {errors.json_type(patch_job_spec)}")
    for key, value in patch_job_spec.items():
        path = f"patch.jobSpec.{key}"
        if value is None:
            continue
        if key == "tasks":
            merged[key] = _merge_keyed(merged.get(key), value, "name", path, _merge_task)
        elif key == "volumes":
            merged[key] = _merge_keyed(merged.get(key), value, "mountPath", path, _replace)
        elif key == "plugins":
            merged[key] = _merge_plugins(merged.get(key), value, path)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _replace(base: Any, patch: Any, path: str) -> Any:
    return copy.deepcopy(patch)


def _merge_task(base: Obj, patch: Obj, path: str) -> Obj:
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if value is None:
            continue
        if key == "template" and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value, f"{path}.{key}")
        else:
            out[key] = copy.deepcopy(value)
    return out


def merge(base: Any, patch: Any, path: str = "patch") -> Any:
    """Recursive merge of a pod-template fragment (the rules for a task's `template` above)."""
    if patch is None:
        return copy.deepcopy(base)
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(base)
    for key, value in patch.items():
        sub = f"{path}.{key}"
        if value is None:
            continue
        if key in ATOMIC or key not in out:
            out[key] = copy.deepcopy(value)
        elif key in LIST_KEYS and isinstance(value, list) and isinstance(out[key], list):
            out[key] = _merge_keyed(out[key], value, LIST_KEYS[key], sub, merge if key in MERGED_ELEMENTS else _replace)
        else:
            out[key] = merge(out[key], value, sub)
    return out


def _merge_keyed(base: Any, patch: Any, key: str, path: str, merge_one) -> list:
    """Merge list `patch` onto list `base`, elements matched by `key`."""
    if not isinstance(patch, list):
        raise ValueError(f"{path}: expected a list, got {errors.json_type(patch)}")
    out = copy.deepcopy(base) if isinstance(base, list) else []
    n = len(out)
    for i, element in enumerate(patch):
        epath = f"{path}[{i}]"
        if not isinstance(element, dict):
            raise ValueError(f"{epath}: expected an object, got {errors.json_type(element)}")
        if element.get(key) is None:
            if n != 1 or len(patch) != 1:
                raise ValueError(f"{epath}: no {key}; an element without {key} is allowed only when the template "
                                 f"and the patch both have exactly one (template: {n}, patch: {len(patch)})")
            out[0] = merge_one(out[0], element, epath)
            continue
        at = next((j for j, b in enumerate(out) if isinstance(b, dict) and b.get(key) == element[key]), None)
        if at is None:
            out.append(copy.deepcopy(element))
        else:
            out[at] = merge_one(out[at], element, epath)
    return out


def _merge_plugins(base: Any, patch: Any, path: str) -> Obj:
    if not isinstance(patch, dict):
        raise ValueError(f"{path}: expected an object of plugin name -> [arguments], got {errors.json_type(patch)}")
    out = copy.deepcopy(base) if isinstance(base, dict) else {}
    for name, args in patch.items():
        if args is None:
            continue
        if not isinstance(args, list):
            raise ValueError(f"{path}.{name}: expected a list of arguments, got {errors.json_type(args)}")
        have = list(out.get(name) or [])
        out[name] = have + [a for i, a in enumerate(args) if a not in have and a not in args[:i]]
    return out


# ---- where a merged field came from -----------------------------------------------------------

def patch_origin(base_spec: Obj, patch_job_spec: Any, merged_spec: Obj, path: str) -> str | None:
    """The field of a flow's patch that the field `path` of the merged vcjob spec came from, by
    apply_patch's rules: for `tasks[1].template.spec.containers[1].name` of a template with one task
    and a patch adding a task with one container, `patch.jobSpec.tasks[0].template.spec.containers[0].name`.
    None when the field is the template's (or its origin cannot be told). `merged_spec` is
    apply_patch(base_spec, patch_job_spec), placeholders filled or not (they change no path)."""
    segments = yamlio.split_path(path)
    try:
        found = _origin_job(base_spec or {}, patch_job_spec or {}, merged_spec or {}, segments)
    except (LookupError, TypeError, ValueError, AttributeError):
        return None
    if found is None:
        return None
    return "patch.jobSpec" + "".join(f"[{s}]" if s.isdigit() or "." in s or "/" in s else f".{s}" for s in found)



def _origin_job(base: Obj, patch: Obj, merged: Obj, segments: list[str]) -> list[str] | None:
    if not segments or patch.get(segments[0]) is None:
        return None
    key, rest = segments[0], segments[1:]
    if key == "tasks":
        return _origin_keyed(base.get(key), patch[key], merged[key], rest, "name", _origin_task, [key])
    if key == "volumes":
        return _origin_keyed(base.get(key), patch[key], merged[key], rest, "mountPath", _origin_whole, [key])
    if key == "plugins":
        return [key, *rest[:1]]   # (arguments are appended: the plugin's list is where they are)
    return segments   # replaced: the patch's own field


def _origin_whole(base: Any, patch: Any, merged: Any, segments: list[str], prefix: list[str]) -> list[str]:
    return prefix + segments


def _origin_keyed(base: Any, patch: list, merged: list, segments: list[str], key: str, inner,
                  prefix: list[str]) -> list[str] | None:
    """An element of a list merged by `key` (_merge_keyed): the patch element that made it, if any."""
    if not segments:
        return prefix
    element = merged[int(segments[0])]
    base = base if isinstance(base, list) else []
    sole = len(base) == 1 and len(patch) == 1 and patch[0].get(key) is None   # (the keyless one-to-one case)
    at = 0 if sole else next((j for j, p in enumerate(patch) if p.get(key) is not None and p[key] == element.get(key)),
                             None)
    if at is None or (sole and int(segments[0]) != 0):
        return None
    same = base[0] if sole else next((b for b in base if isinstance(b, dict) and b.get(key) == element.get(key)), None)
    if same is None:
        return prefix + [str(at)] + segments[1:]   # appended: all of it is the patch's
    if segments[1:] == [key]:
        return None   # the key of a matched element: the template's as much as the patch's
    return inner(same, patch[at], element, segments[1:], prefix + [str(at)])


def _origin_task(base: Obj, patch: Obj, merged: Obj, segments: list[str], prefix: list[str]) -> list[str] | None:
    if not segments:
        return prefix
    key = segments[0]
    if patch.get(key) is None:
        return None
    if key == "template" and isinstance(base.get(key), dict):
        return _origin_merge(base[key], patch[key], merged[key], segments[1:], prefix + [key])
    return prefix + segments


def _origin_merge(base: Any, patch: Any, merged: Any, segments: list[str], prefix: list[str]) -> list[str] | None:
    """merge()'s rules, followed down `segments`."""
    if not segments or not isinstance(base, dict) or not isinstance(patch, dict):
        return prefix + segments
    key = segments[0]
    if patch.get(key) is None:
        return None
    if key in ATOMIC or key not in base:
        return prefix + segments
    if key in LIST_KEYS and isinstance(patch[key], list) and isinstance(base[key], list):
        inner = _origin_merge if key in MERGED_ELEMENTS else _origin_whole
        return _origin_keyed(base[key], patch[key], merged[key], segments[1:], LIST_KEYS[key], inner, prefix + [key])
    return _origin_merge(base[key], patch[key], merged[key], segments[1:], prefix + [key])
