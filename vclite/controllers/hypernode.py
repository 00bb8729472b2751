"""The HyperNode controller (Volcano's `hyperNode-controller`, pkg/controllers/hypernode).

Two jobs, as upstream:
- **status.nodeCount**: each HyperNode's count of members (util/hypernode GetMembers): an exactMatch
  member counts its name whether or not such a node exists (so a tier-2 HyperNode of two HyperNodes
  counts 2), a regexMatch member every Node whose name the pattern matches somewhere, a labelMatch
  member every Node its selector selects (an empty one none); names are counted once. Written when
  a HyperNode is added or changed, and only when it differs. Upstream never recounts when Nodes
  change; vclite also recounts on a Node added, deleted or relabelled (docs/differences.md).
- **label discovery**: with the ConfigMap `<release>-controller-configmap` in `<namespace>`
  (`HELM_RELEASE_NAME`, default `volcano`; `KUBE_POD_NAMESPACE`, default `volcano-system`), key
  `volcano-controller.conf`, holding
      networkTopologyDiscovery:
        - source: label
          enabled: true
          config:
            networkTopologyTypes:
              rack-net:                       # a type: at most 20 characters
                - nodeLabel: example.com/spine   # the top tier first ...
                - nodeLabel: example.com/rack
                - nodeLabel: kubernetes.io/hostname   # ... the node's own label last (not a tier)
  every Node carrying the labels gets HyperNodes built from them: one per label value, tier 1 for
  the label just above the last, its members the Nodes (then tier 2 holding those HyperNodes, ...);
  a node stops at its first missing label. Each is named `hypernode-<type>-tier<N>-<suffix>`,
  labelled `volcano.sh/network-topology-source: label` and `<label>: <value>`, with tierName the
  label. The controller creates, updates and deletes the HyperNodes of that source to match,
  whenever a Node's topology labels, such a HyperNode or the ConfigMap change. An existing
  HyperNode of the source with the same label and value (and name prefix) keeps its name; a new
  one gets a suffix derived from the label and value (upstream's is random) so runs repeat.
  Other sources (ufm, roce) need fabric managers vclite cannot reach: they are ignored with a
  warning Event on the ConfigMap, as is a config that does not parse.

Talks to the cluster only through the Client protocol; watch handlers only record work.
"""
from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
from typing import Any, Hashable, Iterable, Mapping

import yaml

from vclite.api import kinds, meta, topology
from vclite.apiserver import client as client_mod
from vclite.apiserver import events
from vclite.apiserver import informer as informer_mod
from vclite.lib import clock as clock_mod
from vclite.lib import errors, workqueue

log = logging.getLogger(__name__)
Obj = dict[str, Any]

SOURCE_LABEL = topology.SOURCE_LABEL
LABEL_SOURCE = "label"
CONFIG_KEY = "volcano-controller.conf"
NAMESPACE_ENV, RELEASE_ENV = "KUBE_POD_NAMESPACE", "HELM_RELEASE_NAME"
DEFAULT_NAMESPACE, DEFAULT_RELEASE = "volcano-system", "volcano"
MAX_TYPE_NAME = 20                       # upstream's networkTopologyTypeLength
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"   # k8s.io/apimachinery rand.String's
NAME_ATTEMPTS = 20                       # upstream's loopCount
COMPONENT = "vc-controller-manager"
DISCOVERY = ("discovery",)               # the work-queue key of a label discovery
RECOUNT = ("recount",)                   # every HyperNode's nodeCount again (a Node changed)


# ---- member counting (pure) ----------------------------------------------------------------------

def member_names(selector: Any, nodes: Iterable[Obj]) -> set[str]:
    """The names one member selector stands for, as upstream's GetMembers (see the docstring)."""
    if not isinstance(selector, dict):
        return set()
    out: set[str] = set()
    exact = selector.get("exactMatch")
    if isinstance(exact, dict):
        if not exact.get("name"):
            return out
        out.add(str(exact["name"]))
    regex = selector.get("regexMatch")
    if isinstance(regex, dict):
        try:
            pattern = re.compile(str(regex.get("pattern") or ""))
        except re.error:
            return set()
        out |= {meta.name(n) for n in nodes if pattern.search(meta.name(n))}
    label = selector.get("labelMatch")
    if isinstance(label, dict):
        if not label.get("matchLabels") and not label.get("matchExpressions"):
            return out
        out |= {meta.name(n) for n in nodes if topology.selects(label, meta.labels(n))}
    return out


def node_count(hypernode: Obj, nodes: list[Obj]) -> int:
    """What upstream writes in status.nodeCount (the union of every member's names)."""
    names: set[str] = set()
    for member in (hypernode.get("spec") or {}).get("members") or ():
        if isinstance(member, dict):
            names |= member_names(member.get("selector"), nodes)
    return len(names)


# ---- label discovery (pure) ----------------------------------------------------------------------

@dataclasses.dataclass
class Discovery:
    """What the ConfigMap asks of the label source: topology type -> its labels, tier 1 first."""
    types: dict[str, list[str]]
    problems: list[str]


def configmap_ref(environ: Mapping[str, str] = os.environ) -> tuple[str, str]:
    """The ConfigMap the controller reads (namespace, name), from the environment as upstream."""
    release = environ.get(RELEASE_ENV) or DEFAULT_RELEASE
    return environ.get(NAMESPACE_ENV) or DEFAULT_NAMESPACE, f"{release}-controller-configmap"


def parse_config(configmap: Obj | None) -> Discovery | None:
    """The label source's settings from the ConfigMap, or None when it is absent or not enabled.

    Problems (a config that does not parse, a type name too long, a label named twice, an entry
    without nodeLabel (an empty label, as upstream decodes it), another
    source enabled) are listed; what can still be used is used, as upstream skips a bad type."""
    if configmap is None:
        return None
    text = (configmap.get("data") or {}).get(CONFIG_KEY)
    if text is None:
        return None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return Discovery({}, [f"data[{CONFIG_KEY}] is not valid YAML: {e}"])
    entries = (doc or {}).get("networkTopologyDiscovery") if isinstance(doc, dict) else None
    if entries is None:
        return None
    if not isinstance(entries, list):
        return Discovery({}, [f"data[{CONFIG_KEY}]: networkTopologyDiscovery must be a list"])
    problems: list[str] = []
    label_cfg = None
    for i, entry in enumerate(entries):
        if isinstance(entry, dict) and not isinstance(entry.get("enabled", False), bool):
            problems.append(f"networkTopologyDiscovery[{i}].enabled: must be true or false, unquoted (got "
                            f"{entry.get('enabled')!r}); the source stays off")
            continue
        if not isinstance(entry, dict) or entry.get("enabled") is not True:
            continue
        if entry.get("source") == LABEL_SOURCE:
            label_cfg = label_cfg if label_cfg is not None else (entry.get("config") or {})
        else:
            problems.append(f"networkTopologyDiscovery[{i}]: source {entry.get('source')!r} is not supported "
                            f"by vclite (only {LABEL_SOURCE!r}); ignored")
    if label_cfg is None:
        return Discovery({}, problems) if problems else None
    types = _label_types(label_cfg, problems)
    return Discovery(types, problems)


def _label_types(cfg: Any, problems: list[str]) -> dict[str, list[str]]:
    raw = cfg.get("networkTopologyTypes") if isinstance(cfg, dict) else None
    if not isinstance(raw, dict):
        problems.append("label source: config.networkTopologyTypes must be a map of type -> list of nodeLabel")
        return {}
    types: dict[str, list[str]] = {}
    for name in sorted(raw, key=str):
        entries = raw[name] if isinstance(raw[name], list) else []
        labels = []
        for i, e in enumerate(entries):   # an entry without nodeLabel decodes to "" upstream (mapstructure)
            label = e.get("nodeLabel") if isinstance(e, dict) else None
            if not label:
                problems.append(f"networkTopologyTypes[{name}][{i}]: no nodeLabel; taken as an empty label, "
                                "which no node has")
            labels.append(str(label or ""))
        if len(str(name)) > MAX_TYPE_NAME:
            problems.append(f"networkTopologyTypes: type name {name!r} is longer than {MAX_TYPE_NAME} characters; "
                            "skipped")
        elif len(set(labels)) != len(labels):
            problems.append(f"networkTopologyTypes[{name}]: a nodeLabel is named twice; skipped")
        else:   # listed top tier first, the node's own label last: tiers from the one above it, upwards
            types[str(name)] = list(reversed(labels[:-1]))
    return types


def clean_type_name(name: str) -> str:
    """Upstream's cleanString: letters lower-cased, digits '.' '-' kept, anything else '-'."""
    return "".join(c.lower() if c.isalpha() else c if c.isdigit() or c in ".-" else "-" for c in name)


def _suffix(key: str, value: str, attempt: int) -> str:
    digest = hashlib.sha256(f"{key}={value}#{attempt}".encode()).digest()
    return "".join(SUFFIX_ALPHABET[b % len(SUFFIX_ALPHABET)] for b in digest[:5])


@dataclasses.dataclass
class _Info:
    tier: int
    tier_name: str
    labels: dict[str, str]
    members: set[str]


def discover(types: dict[str, list[str]], nodes: Iterable[Obj], existing: Iterable[Obj]) -> dict[str, Obj]:
    """The HyperNodes the label source stands for, by name (generateHyperNodeInfo + buildHyperNodes).

    `existing` is every stored HyperNode (names in use; those of the label source keep theirs)."""
    existing = list(existing)
    taken = {meta.name(h) for h in existing}
    ours = sorted((h for h in existing if meta.labels(h).get(SOURCE_LABEL) == LABEL_SOURCE), key=meta.name)
    infos: dict[str, _Info] = {}
    by_label: dict[tuple[str, str], str] = {}
    for node in sorted(nodes, key=meta.name):
        labels = meta.labels(node)
        for type_name, keys in types.items():
            member = meta.name(node)
            for i, key in enumerate(keys):
                if key not in labels:
                    break
                value, tier = labels[key], i + 1
                name = by_label.get((key, value))
                if name is None:
                    name = _name(type_name, key, value, tier, ours, taken | set(infos))
                    by_label[(key, value)] = name
                info = infos.setdefault(name, _Info(tier, key, {key: value}, set()))
                info.members.add(member)
                member = name
    return {name: _hypernode(name, info) for name, info in infos.items()}


def _name(type_name: str, key: str, value: str, tier: int, ours: list[Obj], taken: set[str]) -> str:
    prefix = f"hypernode-{clean_type_name(type_name)}-tier{tier}"
    for h in ours:
        if meta.labels(h).get(key) == value and meta.name(h).startswith(prefix):
            return meta.name(h)
    for attempt in range(NAME_ATTEMPTS):
        name = f"{prefix}-{_suffix(key, value, attempt)}"
        if name not in taken:
            return name
    raise errors.Conflict(f"unable to get unique hyperNodeName after {NAME_ATTEMPTS} attempts")


def _hypernode(name: str, info: _Info) -> Obj:
    member_type = "Node" if info.tier == 1 else "HyperNode"
    return {"apiVersion": kinds.HYPERNODE.api_version, "kind": kinds.HYPERNODE.kind,
            "metadata": {"name": name, "labels": {SOURCE_LABEL: LABEL_SOURCE, **info.labels}},
            "spec": {"tier": info.tier, "tierName": info.tier_name,
                     "members": [{"type": member_type, "selector": {"exactMatch": {"name": m}}}
                                 for m in sorted(info.members)]}}


@dataclasses.dataclass
class Plan:
    create: list[Obj]
    update: list[Obj]      # stored objects with the discovered spec and labels merged in
    delete: list[str]


def reconcile(discovered: dict[str, Obj], existing: Iterable[Obj]) -> Plan:
    """What makes the stored HyperNodes of the label source match `discovered` (reconcileTopology);
    an unchanged one is left alone (upstream rewrites it, and its status, every time)."""
    stored = {meta.name(h): h for h in existing}
    ours = {name for name, h in stored.items() if meta.labels(h).get(SOURCE_LABEL) == LABEL_SOURCE}
    plan = Plan([], [], sorted(ours - set(discovered)))
    for name in sorted(discovered):
        want = discovered[name]
        have = stored.get(name)
        if have is None:
            plan.create.append(want)
            continue
        labels = {**meta.labels(have), **meta.labels(want)}
        if have.get("spec") != want["spec"] or labels != meta.labels(have):
            plan.update.append({**have, "metadata": {**have["metadata"], "labels": labels}, "spec": want["spec"]})
    return plan


# ---- the controller ------------------------------------------------------------------------------

class HyperNodeController:
    name = "hypernode-controller"
    retries_forever = True   # (Volcano's hypernode controller: AddRateLimited, never dropped)

    def __init__(self, client: client_mod.Client, clock: clock_mod.Clock, recorder: events.RecordFn | None = None,
                 configmap: tuple[str, str] | None = None):
        self.client, self.clock = client, clock
        self.queue = workqueue.WorkQueue(clock, max_delay=workqueue.CONTROLLER_MAX_DELAY)
        self.record = recorder or events.direct(client, clock)
        self.config_namespace, self.config_name = configmap or configmap_ref()
        self.hypernodes = informer_mod.Informer(client, kinds.HYPERNODE, self._on_hypernode)
        self.nodes = informer_mod.Informer(client, kinds.NODE, self._on_node)
        self.configmaps = informer_mod.Informer(client, kinds.CONFIGMAP, self._on_configmap)
        self._reported: tuple[str, ...] = ()

    def start(self) -> None:
        self.configmaps.start()
        self.nodes.start()
        self.hypernodes.start()
        self.queue.add(DISCOVERY)
        for h in self.hypernodes.items():
            self.queue.add(meta.name(h))

    def stop(self) -> None:
        for informer in (self.hypernodes, self.nodes, self.configmaps):
            informer.stop()

    # ---- watch handlers (record work only) -------------------------------------------------------
    def _on_hypernode(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.DELETED:   # any HyperNode, as upstream: a name it held may be free
            self.queue.add(DISCOVERY)
        else:
            self.queue.add(meta.name(ev.object))

    def _on_node(self, ev: client_mod.WatchEvent) -> None:
        if ev.type == client_mod.EventType.MODIFIED and ev.old is not None \
                and meta.labels(ev.old) == meta.labels(ev.object):
            return
        self.queue.add(DISCOVERY)
        self.queue.add(RECOUNT)   # a Node added, gone or relabelled: counts may change (one key for all)

    def _on_configmap(self, ev: client_mod.WatchEvent) -> None:
        if (meta.namespace(ev.object), meta.name(ev.object)) == (self.config_namespace, self.config_name):
            self.queue.add(DISCOVERY)

    # ---- syncs ------------------------------------------------------------------------------------
    def sync(self, key: Hashable) -> None:
        if key == DISCOVERY:
            self._discover()
        elif key == RECOUNT:
            nodes = list(self.nodes.items())
            for h in list(self.hypernodes.items()):
                self._sync_status(meta.name(h), nodes)
        else:
            self._sync_status(str(key))

    def _sync_status(self, name: str, nodes: list[Obj] | None = None) -> None:
        hypernode = self.hypernodes.get("", name)
        if hypernode is None:
            return
        count = node_count(hypernode, nodes if nodes is not None else list(self.nodes.items()))
        status = hypernode.get("status") or {}
        if status.get("nodeCount") == count:
            return
        try:
            self.client.update_status({**hypernode, "status": {**status, "nodeCount": count}})
        except errors.NotFound:
            pass

    def _discover(self) -> None:
        configmap = self.configmaps.get(self.config_namespace, self.config_name)
        wanted = parse_config(configmap)
        if wanted is None:
            self._reported = ()
            return
        self._report(configmap, wanted.problems)
        if not wanted.types:
            return
        existing = list(self.hypernodes.items())
        plan = reconcile(discover(wanted.types, list(self.nodes.items()), existing), existing)
        for hypernode in plan.create:
            try:
                self.client.create(hypernode)
            except errors.AlreadyExists:
                log.warning("HyperNode %s exists and is not from the label source; left alone", meta.name(hypernode))
        for hypernode in plan.update:
            self.client.update(hypernode)
        for name in plan.delete:
            try:
                self.client.delete(kinds.HYPERNODE, "", name)
            except errors.NotFound:
                pass

    def _report(self, configmap: Obj | None, problems: list[str]) -> None:
        """Each new set of problems once: a warning in the log and an Event on the ConfigMap."""
        if tuple(problems) == self._reported:
            return
        self._reported = tuple(problems)
        for problem in problems:
            log.warning("HyperNode discovery: %s", problem)
            if configmap is not None:
                self.record(configmap, "Warning", "InvalidDiscoveryConfig", problem, COMPONENT)
