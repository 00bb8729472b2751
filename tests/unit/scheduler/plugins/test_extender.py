"""extender: scheduling hooks answered by a real HTTP extender (tests/extender_server.py: http.server in a thread).

Ports extender_test.go (TestIsInterested, TestHasManagedResources, TestHasResourcesInList, TestMaxBodySizeLimit2)
and checks every hook against a live extender: the JSON it receives (Go's field names), what its answers do,
and `extender.ignorable` when it cannot answer; bad arguments are refused at load with file:line."""
from __future__ import annotations

import collections
import threading
import time

import pytest

from tests import extender_server
from tests.scenarios.test_scheduler_eviction import (CGP, PRIO, T_PREEMPT, Case, group, node, pending, q, run,
                                                     running)
from tests.unit.scheduler import objects as o
from vclite.scheduler import conf
from vclite.scheduler.framework import session
from vclite.scheduler.plugins import extender, extender_http

OK = {"status": "", "code": 0}


def conf_text(url, ignorable=None, actions="enqueue, allocate", timeout="2s", **verbs):
    args = [f"extender.urlPrefix: {url}", f"extender.httpTimeout: {timeout}"]
    args += [f"extender.{k}Verb: {v}" for k, v in verbs.items()]
    if ignorable is not None:
        args.append(f"extender.ignorable: {str(ignorable).lower()}")
    lines = "\n".join("      " + a for a in args)
    return (f'actions: "{actions}"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n'
            f"- plugins:\n  - name: predicates\n  - name: nodeorder\n  - name: extender\n    arguments:\n{lines}\n")


def two_nodes(pods=None, phase="Inqueue"):
    return o.state([o.node("n1"), o.node("n2")], podgroups=[o.pg("ns/pg", phase=phase)],
                   pods=pods or [o.pod("ns/p1", "pg")])


def session_with(url, st=None, **kw):
    return session.run_session(st or two_nodes(), conf.parse(conf_text(url, **kw), "sched.conf"), o.NOW)


# ---- upstream's IsInterested rows ------------------------------------------------------------------
def pod_with(containers=(), init=()):
    def c(requests=None, limits=None):
        res = {}
        if requests is not None:
            res["requests"] = requests
        if limits is not None:
            res["limits"] = limits
        return {"name": "c", "resources": res}
    return {"spec": {"containers": [c(*x) for x in containers], "initContainers": [c(*x) for x in init]}}


GPU, AMD = "nvidia.com/gpu", "amd.com/gpu"


@pytest.mark.parametrize("managed, pod, want", [
    pytest.param([], pod_with([({"cpu": "100m"},)]), True, id="empty managed resources - should return true"),
    pytest.param([GPU], pod_with([({"cpu": "100m", GPU: "1"},)]), True, id="managed resource in requests"),
    pytest.param([GPU], pod_with([(None, {GPU: "1"})]), True, id="container has managed resource in limits"),
    pytest.param([GPU], pod_with([({"cpu": "100m"},)], [({GPU: "1"},)]), True, id="init container has one"),
    pytest.param([GPU], pod_with([({"cpu": "100m", "memory": "128Mi"},)]), False, id="no managed resources"),
    pytest.param([GPU, AMD], pod_with([({"cpu": "100m", AMD: "1"},)]), True, id="multiple managed - one match"),
    # TestHasManagedResources
    pytest.param([GPU], pod_with([]), False, id="no containers"),
    pytest.param([GPU], pod_with([({GPU: "1"}, {GPU: "1"})]), True, id="managed resource in requests and limits"),
    pytest.param([GPU], pod_with([({"cpu": "100m"},), ({GPU: "1"},)]), True, id="multiple containers - one has it"),
    pytest.param([GPU], pod_with([(None, None)]), False, id="empty resource requirements"),
    pytest.param([GPU, AMD], pod_with([({GPU: "1", "intel.com/gpu": "1"},)]), True, id="partial match"),
    # TestHasResourcesInList
    pytest.param([GPU], pod_with([({},)]), False, id="empty resource list"),
    pytest.param([GPU, AMD], pod_with([({"cpu": "100m", GPU: "1", AMD: "1"},)]), True, id="several managed ones"),
    pytest.param([], {}, True, id="no managed resources: every pod, even one without containers"),
])
def test_interested(managed, pod, want):
    assert extender.interested(frozenset(managed), pod) is want


# ---- the HTTP client ---------------------------------------------------------------------------------
def test_an_answer_over_10_mib_is_refused():
    """TestMaxBodySizeLimit2."""
    big = b'{"padding":"' + b"a" * (extender_http.MAX_BODY + 1) + b'"}'
    with extender_server.running({"test": lambda b: big}) as ext:
        with pytest.raises(extender_http.ExtenderError, match="http: request body too large"):
            extender_http.post(ext.url, "test", {"task": {}, "node": {}}, 5.0)


def test_client_errors_say_what_happened():
    gate = threading.Event()
    answers = {"ok": lambda b: {"echo": b}, "boom": lambda b: (500, {}), "notjson": lambda b: b"<html>",
               "slow": lambda b: gate.wait(10) and {}}
    with extender_server.running(answers, prefix="/ext") as ext:
        assert extender_http.post(ext.url + "/", "ok", {"x": 1}, 5.0) == {"echo": {"x": 1}}   # prefix's "/" trimmed
        assert ext.calls[0] == ("ok", {"x": 1})
        with pytest.raises(extender_http.ExtenderError, match=r"failed boom with extender at URL .*/ext/boom, code 500"
                           ):
            extender_http.post(ext.url, "boom", {}, 5.0)
        with pytest.raises(extender_http.ExtenderError, match="the answer is not JSON"):
            extender_http.post(ext.url, "notjson", {}, 5.0)
        with pytest.raises(extender_http.ExtenderError, match=r"no answer within 100ms \(extender.httpTimeout\)"):
            extender_http.post(ext.url, "slow", {}, 0.1)
        gate.set()
    with pytest.raises(extender_http.ExtenderError, match="Connection refused"):
        extender_http.post(f"http://127.0.0.1:{extender_server.free_port()}", "x", {}, 5.0)


# ---- bad arguments: file:line at load -----------------------------------------------------------------
def conf_with(args):
    return ('actions: "allocate"\ntiers:\n- plugins:\n  - name: extender\n    arguments:\n'
            + "".join(f"      {a}\n" for a in args))


@pytest.mark.parametrize("args, says", [
    (["extender.urlPrefix: 127.0.0.1:8713"], "sched.conf:6: plugin \"extender\": argument 'extender.urlPrefix': "
     "'127.0.0.1:8713' must start with http:// or https://"),
    (["extender.urlPrefix: http://"], "sched.conf:6: plugin \"extender\": argument 'extender.urlPrefix': 'http://' "
     "has no host"),
    (["extender.urlPrefix: http://h:99999"], "sched.conf:6: plugin \"extender\": argument 'extender.urlPrefix': "
     "'http://h:99999' not a URL (Port out of range 0-65535)"),
    (["extender.urlPrefix: 8713"], "sched.conf:6: plugin \"extender\": argument 'extender.urlPrefix': expected a URL"),
    (["extender.urlPrefix: http://h", "extender.httpTimeout: 100"], "sched.conf:7: plugin \"extender\": argument "
     "'extender.httpTimeout': expected a Go duration string such as \"100ms\""),
    (["extender.urlPrefix: http://h", "extender.httpTimeout: 1 sec"], "sched.conf:7: plugin \"extender\": argument "
     "'extender.httpTimeout': invalid duration '1 sec'"),
    (["extender.urlPrefix: http://h", "extender.httpTimeout: 0s"], "sched.conf:7: plugin \"extender\": argument "
     "'extender.httpTimeout': must be positive, got '0s'"),
    (["extender.predicateVerb: predicate"], "sched.conf:5: plugin \"extender\": extender.predicateVerb is set but "
     "extender.urlPrefix is not"),
    (["extender.urlPrefix: http://h", "extender.allocateFuncVerb: allocate"], "sched.conf:7: plugin \"extender\": "
     "argument 'extender.allocateFuncVerb': not supported by vclite yet"),
    (["extender.urlPrefix: http://h", "extender.managedResources: nvidia.com/gpu"], "sched.conf:7: plugin "
     "\"extender\": argument 'extender.managedResources': expected a list of resource names"),
    (["extender.urlPrefix: http://h", "extender.ignorable: maybe"], "sched.conf:7: plugin \"extender\": argument "
     "'extender.ignorable': expected true or false"),
    (["extender.urlPrefix: http://h", "extender.predicateverb: p"], "sched.conf:7: plugin \"extender\": unknown "
     'argument "extender.predicateverb"'),
])
def test_bad_arguments_are_refused_at_load(args, says):
    with pytest.raises(conf.ConfError) as e:
        conf.parse(conf_with(args), "sched.conf")
    assert says in str(e.value), str(e.value)


def test_good_arguments_load():
    c = conf.parse(conf_with(["extender.urlPrefix: https://ext.example:8443/v1", "extender.httpTimeout: 100ms",
                              "extender.predicateVerb: predicate", "extender.ignorable: \"true\"",
                              "extender.managedResources: [nvidia.com/gpu]"]), "sched.conf")
    args = c.tiers[0][0].args
    assert (args.url_prefix, args.http_timeout, args.predicate, args.ignorable, args.managed_resources) == \
        ("https://ext.example:8443/v1", 0.1, "predicate", True, ("nvidia.com/gpu",))


# ---- predicate --------------------------------------------------------------------------------------
def refuse(name, code=2):
    return lambda b: {"status": f"{name} is reserved", "code": code} if b["node"]["Name"] == name else OK


def test_predicate_refuses_a_node_and_gets_volcano_shaped_json():
    with extender_server.running({"predicate": refuse("n1")}) as ext:
        result = session_with(ext.url, predicate="predicate")
    assert result.binds == {"ns/p1": "n2"}
    body = next(b for b in ext.bodies("predicate") if b["node"]["Name"] == "n1")   # (nodes are asked in parallel)
    assert set(body) == {"task", "node"}
    task, node_ = body["task"], body["node"]
    assert (task["UID"], task["Job"], task["Name"], task["Namespace"], task["Status"]) == \
        ("ns/p1", "ns/pg", "p1", "ns", 1)
    assert task["Resreq"] == {"MilliCPU": 1000.0, "Memory": 2.0 ** 30, "ScalarResources": {"pods": 1.0},
                              "MaxTaskNum": 1}
    assert task["Pod"]["metadata"]["name"] == "p1"
    assert node_["Name"] == "n1" and node_["State"] == {"Phase": 1, "Reason": ""}
    assert node_["Idle"]["MilliCPU"] == 4000.0 and node_["Node"]["metadata"]["name"] == "n1"
    assert node_["Tasks"] == {}


@pytest.mark.parametrize("answer", [[], "no", {"status": None}, {"code": 3}])
def test_a_predicate_answer_without_a_message_passes(answer):
    with extender_server.running({"predicate": lambda b: answer}) as ext:
        assert session_with(ext.url, predicate="predicate").binds == {"ns/p1": "n1"}


def test_predicate_refusing_every_node_says_why():
    with extender_server.running({"predicate": lambda b: {"status": "no GPU left", "code": 3}}) as ext:
        result = session_with(ext.url, predicate="predicate")
    assert result.binds == {}
    message = result.podgroup_status["ns/pg"]["conditions"][-1]["message"]
    assert "2 no GPU left" in message, message


def four_nodes():
    """small: too little cpu; other: not the pod's zone (nodeSelector); a, b: fit."""
    zone = {"zone": "a"}
    return o.state([o.node("small", cpu="500m", labels=zone), o.node("other", labels={"zone": "b"}),
                    o.node("a", labels=zone), o.node("b", labels=zone)], podgroups=[o.pg("ns/pg")],
                   pods=[o.pod("ns/p1", "pg", selector=zone)])


@pytest.mark.parametrize("extender_first, asked", [
    pytest.param(False, ["a", "b"], id="after predicates: only the nodes resources and predicates passed"),
    pytest.param(True, ["a", "b", "other"], id="before predicates: every node the resources passed"),
])
def test_the_predicate_asks_only_about_the_nodes_still_in_play(extender_first, asked):
    """Volcano's PredicateFn stops at a node's first failing plugin (in configuration order), after allocate's
    own resource check: the extender is not asked about a node already refused (before: every node)."""
    with extender_server.running({"predicate": lambda b: OK}) as ext:
        text = conf_text(ext.url, predicate="predicate")
        if extender_first:
            text = text.replace("  - name: predicates\n  - name: nodeorder\n", "") + \
                "  - name: predicates\n  - name: nodeorder\n"
        result = session.run_session(four_nodes(), conf.parse(text, "sched.conf"), o.NOW)
    assert result.binds["ns/p1"] in ("a", "b")
    assert sorted(b["node"]["Name"] for b in ext.bodies("predicate")) == asked


def test_preempt_asks_the_predicate_only_about_the_node_it_tries():
    """Preempt's stop test after each eviction tried on n1 asks the extender about n1 only (before: about every
    node, each time); n2, full of pods that may not be preempted, is asked once, when the candidates are found."""
    with extender_server.running({"predicate": lambda b: OK}) as ext:
        case = preempt_case({"extender.predicateVerb": "predicate", "extender.urlPrefix": ext.url})
        case.tiers[0][0]["enablePredicate"] = True
        case.nodes.append(node("n2", 3, "3G"))
        case.podgroups.append(group("c1/pg3", "q1", 0, prio="high-priority"))
        case.pods.extend(running(f"c1/k{i}", "pg3", "n2") for i in range(3))
        result = run(case)
    assert result.evictions
    asked = [b["node"]["Name"] for b in ext.bodies("predicate")]
    assert asked.count("n2") == 1 and asked.count("n1") > 1, asked


def test_a_network_topology_job_asks_the_predicate_only_about_the_hypernode_tried():
    """A gang kept within one HyperNode (networkTopology, hard, tier 1) is tried in s0 = {a1, a2}, then s1 =
    {b1, b2}, then placed in the first: each try asks the extender about the HyperNode's nodes only, as Volcano's
    allocate predicates the HyperNode's nodes (before: about every node, at each try)."""
    tree = [{"metadata": {"name": s}, "spec": {"tier": 1, "members": [
        {"type": "Node", "selector": {"exactMatch": {"name": n}}} for n in members]}}
        for s, members in (("s0", ("a1", "a2")), ("s1", ("b1", "b2")))]
    group = o.pg("ns/pg", min_member=2)
    group["spec"]["networkTopology"] = {"mode": "hard", "highestTierAllowed": 1}
    st = o.state([o.node(n) for n in ("a1", "a2", "b1", "b2")], podgroups=[group],
                 pods=[o.pod(f"ns/p{i}", "pg") for i in range(2)])
    st.hypernodes = tree
    with extender_server.running({"predicate": lambda b: OK}) as ext:
        result = session.run_session(st, conf.parse(conf_text(ext.url, predicate="predicate"), "sched.conf"), o.NOW)
    assert set(result.binds.values()) <= {"a1", "a2"} and len(result.binds) == 2, result.binds
    asked = collections.Counter(b["node"]["Name"] for b in ext.bodies("predicate"))
    assert asked == {"a1": 4, "a2": 4, "b1": 2, "b2": 2}, asked   # (2 pods: in s0, in s1, in s0 again)


@pytest.mark.parametrize("ignorable, binds", [(True, {"ns/p1": "n1"}), (False, {})])
def test_an_unreachable_extender_is_skipped_or_fails_the_predicate(ignorable, binds):
    url = f"http://127.0.0.1:{extender_server.free_port()}"
    result = session_with(url, predicate="predicate", ignorable=ignorable)
    assert result.binds == binds
    if not ignorable:
        message = result.podgroup_status["ns/pg"]["conditions"][-1]["message"]
        assert "extender: POST " + url + "/predicate:" in message and "Connection refused" in message, message


def test_a_pod_without_managed_resources_is_not_asked_about():
    with extender_server.running({"predicate": lambda b: {"status": "never", "code": 3}}) as ext:
        text = conf_text(ext.url, predicate="predicate").replace(
            "extender.httpTimeout: 2s", "extender.httpTimeout: 2s\n      extender.managedResources: [nvidia.com/gpu]")
        result = session.run_session(two_nodes(), conf.parse(text, "sched.conf"), o.NOW)
    assert result.binds == {"ns/p1": "n1"} and ext.calls == []


# ---- prioritize ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer, node_", [
    ({"nodeScore": {"n2": 100.0}, "errorMessage": ""}, "n2"),
    ({"nodeScore": {"n2": 100.0}, "errorMessage": "busy"}, "n1"),   # an error message: no scores
    ({}, "n1"),
])
def test_prioritize_scores_the_candidates(answer, node_):
    with extender_server.running({"prioritize": lambda b: answer}) as ext:
        result = session_with(ext.url, prioritize="prioritize")
    assert result.binds == {"ns/p1": node_}
    body = ext.bodies("prioritize")[0]
    assert body["task"]["Name"] == "p1" and [n["Name"] for n in body["nodes"]] == ["n1", "n2"]


# ---- enqueue -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("answer, ignorable, phase", [
    ({"status": 1}, None, "Inqueue"),
    ({"status": -1}, None, "Pending"),
    ({"status": 0}, None, "Inqueue"),
    (None, True, "Inqueue"),     # unreachable, ignorable: Permit
    (None, False, "Pending"),    # unreachable: Reject
])
def test_job_enqueueable_votes(answer, ignorable, phase):
    st = two_nodes(phase="Pending")
    if answer is None:
        result = session_with(f"http://127.0.0.1:{extender_server.free_port()}", st, actions="enqueue",
                              jobEnqueueable="jobEnqueueable", ignorable=ignorable)
    else:
        with extender_server.running({"jobEnqueueable": lambda b: answer, "jobEnqueued": lambda b: {}}) as ext:
            result = session_with(ext.url, st, actions="enqueue", jobEnqueueable="jobEnqueueable",
                                  jobEnqueued="jobEnqueued")
        job = ext.bodies("jobEnqueueable")[0]["job"]
        assert (job["UID"], job["Queue"], job["MinAvailable"], job["PodGroup"]["metadata"]["name"]) == \
            ("ns/pg", "default", 1, "pg")
        assert list(job["Tasks"]) == ["ns/p1"] and list(job["TaskStatusIndex"]) == ["1"]
        assert ext.verbs().count("jobEnqueued") == (phase == "Inqueue")
    assert result.podgroup_status.get("ns/pg", {}).get("phase", "Pending") == phase


# ---- overused, jobReady ------------------------------------------------------------------------------
@pytest.mark.parametrize("answers, ignorable, binds", [
    ({"queueOverused": {"overused": True}}, None, {}),
    ({"queueOverused": {"overused": False}}, None, {"ns/p1": "n1"}),
    ({"jobReady": {"status": False}}, None, {}),
    ({"jobReady": {"status": True}}, None, {"ns/p1": "n1"}),
    ({"queueOverused": None}, True, {"ns/p1": "n1"}),
    ({"queueOverused": None}, False, {}),
    ({"jobReady": None}, True, {"ns/p1": "n1"}),    # (upstream: not ready when ignorable, ready when not)
    ({"jobReady": None}, False, {}),
])
def test_overused_and_job_ready(answers, ignorable, binds):
    verbs = {verb: verb for verb in answers}
    table = {verb: (lambda b, a=a: a) if a is not None else (lambda b: (503, {})) for verb, a in answers.items()}
    with extender_server.running(table) as ext:
        result = session_with(ext.url, ignorable=ignorable, **verbs)
    assert result.binds == binds
    verb = next(iter(answers))
    body = ext.bodies(verb)[0]
    if verb == "queueOverused":
        assert (body["queue"]["Name"], body["queue"]["UID"], body["queue"]["Weight"]) == ("default", "default", 1)
    else:
        assert body["job"]["Name"] == "pg"


# ---- session open / close -------------------------------------------------------------------------------
def test_session_open_and_close_are_called_with_the_snapshot():
    with extender_server.running({"open": lambda b: {}, "close": lambda b: {}, "predicate": lambda b: OK}) as ext:
        result = session_with(ext.url, onSessionOpen="open", onSessionClose="close", predicate="predicate")
    assert result.binds == {"ns/p1": "n1"}
    assert ext.verbs()[0] == "open" and ext.verbs()[-1] == "close"
    opened = ext.bodies("open")[0]
    assert sorted(opened) == ["Jobs", "NamespaceInfo", "NodeList", "Nodes", "Queues", "RevocableNodes"]
    assert sorted(opened["Nodes"]) == ["n1", "n2"] and list(opened["Jobs"]) == ["ns/pg"]
    assert list(opened["Queues"]) == ["default"] and opened["RevocableNodes"] == {}
    assert ext.bodies("close") == [{}]


def test_session_open_sends_the_namespaces_quota_status_as_volcanos_namespace_info():
    """Volcano's cache keeps each ResourceQuota's status by namespace and sends it (NamespaceInfo): an extender
    that admits by quota reads it (it was always empty)."""
    def quota(key, hard, used=None):
        ns, name = key.split("/")
        status = {"hard": hard, **({"used": used} if used else {})}
        return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": ns},
                "spec": {"hard": hard}, "status": status}
    st = two_nodes()
    st.resource_quotas = [quota("ns/b", {"pods": "2"}), quota("ns/a", {"cpu": "4"}, {"cpu": "1"}),
                          quota("other/q", {"pods": "1"}, {"pods": "0"})]
    with extender_server.running({"open": lambda b: {}}) as ext:
        session_with(ext.url, st, onSessionOpen="open")
    assert ext.bodies("open")[0]["NamespaceInfo"] == {
        "ns": {"Name": "ns", "QuotaStatus": {"a": {"hard": {"cpu": "4"}, "used": {"cpu": "1"}},
                                             "b": {"hard": {"pods": "2"}}}},
        "other": {"Name": "other", "QuotaStatus": {"q": {"hard": {"pods": "1"}, "used": {"pods": "0"}}}}}


@pytest.mark.parametrize("ignorable, binds, predicate_calls", [(True, {"ns/p1": "n1"}, 2), (False, {}, 0)])
def test_a_failed_session_open(ignorable, binds, predicate_calls):
    """Ignorable: the hooks are still asked. Not ignorable: every hook fails at once (upstream drops the
    extender for the session instead); the close is still sent."""
    with extender_server.running({"open": lambda b: (500, {}), "close": lambda b: {},
                                  "predicate": lambda b: OK}) as ext:
        result = session_with(ext.url, onSessionOpen="open", onSessionClose="close", predicate="predicate",
                              ignorable=ignorable)
    assert result.binds == binds
    assert ext.verbs().count("predicate") == predicate_calls and ext.verbs()[-1] == "close"
    if not ignorable:
        message = result.podgroup_status["ns/pg"]["conditions"][-1]["message"]
        assert "extender: session open failed: failed open with extender at URL" in message, message


# ---- preemptable ------------------------------------------------------------------------------------------
def preempt_case(ext_args):
    tiers = [[conf.plugin("extender", ext_args, enablePreemptable=True), *T_PREEMPT[0]]]
    return Case(tiers, "preempt", [node("n1", 3, "3G")], [q("q1")],
                [group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q1", 1, prio="high-priority")],
                [running("c1/a", "pg1", "n1", preemptable=True), running("c1/b", "pg1", "n1", preemptable=True),
                 running("c1/c", "pg1", "n1", preemptable=True), pending("c1/preemptor", "pg2")], [], classes=PRIO)


def pick(name, status=1):
    return lambda b: {"status": status, "victims": [t for t in b["evictees"] if t["Name"] == name]}


@pytest.mark.parametrize("answer, evictions", [
    (pick("c"), ["c1/c"]),
    (pick("b", status=-1), ["c1/b"]),                      # only status 0 abstains (as upstream)
    (lambda b: {"status": 1, "victims": [{"UID": "c1/zz"}]}, []),   # unknown victims are dropped: none left
    (lambda b: (500, {}), []),                             # no answer: no victims in the tier
    (lambda b: {"status": 1, "victims": 7}, []),           # nonsense: no victims
    (lambda b: {"status": 1, "victims": [{"UID": ["c1/a"]}, "c1/b"]}, []),
])
def test_preemptable_chooses_victims(answer, evictions):
    with extender_server.running({"preemptable": answer}) as ext:
        result = run(preempt_case({"extender.urlPrefix": ext.url, "extender.preemptableVerb": "preemptable"}))
    assert result.evictions == evictions
    body = ext.bodies("preemptable")[0]
    assert body["evictor"]["Name"] == "preemptor" and sorted(t["Name"] for t in body["evictees"]) == ["a", "b", "c"]


def test_preemptable_abstaining_leaves_the_choice_to_the_others():
    with extender_server.running({"preemptable": lambda b: {"status": 0, "victims": []}}) as ext:
        result = run(preempt_case({"extender.urlPrefix": ext.url, "extender.preemptableVerb": "preemptable"}))
    assert len(result.evictions) == 1


# ---- a refusal is looked at again within Volcano's schedule period ----------------------------------------
@pytest.mark.parametrize("verbs, answers, again", [
    ({"predicate": "p"}, {"p": refuse("n1")}, True),
    ({"predicate": "p"}, {"p": lambda b: OK}, False),
    ({"jobEnqueueable": "e"}, {"e": lambda b: {"status": -1}}, True),
    ({"jobEnqueueable": "e"}, {"e": lambda b: {"status": 1}}, False),
    ({"queueOverused": "o"}, {"o": lambda b: {"overused": True}}, True),
    ({"jobReady": "r"}, {"r": lambda b: {"status": False}}, True),
    ({"jobReady": "r"}, {"r": lambda b: {"status": True}}, False),
])
def test_a_refusal_asks_for_another_session_a_second_later(verbs, answers, again):
    """Volcano asks again at its next periodic session; vclite's sessions run on events, so the plugin asks."""
    with extender_server.running(answers) as ext:
        result = session_with(ext.url, two_nodes(phase="Pending"), **verbs)
    assert result.recheck_at == (o.NOW + extender.AGAIN if again else None)


@pytest.mark.parametrize("answer, evictions", [
    (pick("b"), ["c1/b"]),
    (pick("a"), ["c1/a"]),
    (lambda b: {"status": 0, "victims": []}, ["c1/c"]),   # abstains: the next tier (proportion) chooses
])
def test_reclaimable_chooses_victims(answer, evictions):
    """In a tier of its own (a tier's victims are what all its plugins offer; proportion alone would take c)."""
    pods = [running("c1/a", "pg1", "n1", preemptable=True), running("c1/b", "pg1", "n1", preemptable=True),
            running("c1/c", "pg1", "n1", preemptable=True), pending("c1/reclaimer", "pg2")]
    groups = [group("c1/pg1", "q1", 0, prio="low-priority"), group("c1/pg2", "q2", 1, prio="high-priority")]
    with extender_server.running({"reclaimable": answer}) as ext:
        args = {"extender.urlPrefix": ext.url, "extender.reclaimableVerb": "reclaimable"}
        tiers = [[conf.plugin("extender", args, enableReclaimable=True)], CGP[0]]
        result = run(Case(tiers, "reclaim", [node("n1", 3, "3G")], [q("q1"), q("q2")], groups, pods, [], classes=PRIO))
    assert result.evictions == evictions
    body = ext.bodies("reclaimable")[0]
    assert body["evictor"]["Name"] == "reclaimer" and sorted(t["Name"] for t in body["evictees"]) == ["a", "b", "c"]


# ---- a slow or hung extender holds a session for one budget at most ----------------------------------------
def three_pods():
    return o.state([o.node("n1"), o.node("n2")], podgroups=[o.pg("ns/pg", min_member=1)],
                   pods=[o.pod(f"ns/p{i}", "pg") for i in (1, 2, 3)])


def _settled(ext, made: int) -> list[str]:
    """The verbs the extender was asked, once it has read the `made` requests the session sent (on a loaded
    machine it may read one after the session's timeout has passed) and a moment more for any further one."""
    deadline = time.monotonic() + 10
    while len(ext.calls) < made and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.2)
    return ext.verbs()


@pytest.mark.parametrize("ignorable, binds", [
    pytest.param(True, 3, id="ignorable: the pods are placed without it"),
    pytest.param(False, 0, id="not ignorable: every node refused"),
])
def test_a_hung_extender_is_asked_until_the_session_budget_is_spent(ignorable, binds):
    """The first pod's nodes are asked together (as upstream's predicate helper, 16 at a time); none answers
    within httpTimeout, which is also the session's budget here: the other pods' predicates and every prioritize
    are not asked (before, each pod's predicate waited httpTimeout again, so N pods held the session, and
    `vcctl server`'s API that shares its thread, N timeouts long)."""
    release = threading.Event()
    try:
        with extender_server.running({"predicate": lambda b: release.wait(10) and OK,
                                      "prioritize": lambda b: {"nodeScore": {}}}) as ext:
            text = conf_text(ext.url, predicate="predicate", prioritize="prioritize", timeout="200ms",
                             ignorable=ignorable) + "      extender.sessionTimeout: 200ms\n"
            result = session.run_session(three_pods(), conf.parse(text, "sched.conf"), o.NOW)
            asked = _settled(ext, 2)
    finally:
        release.set()
    assert asked == ["predicate", "predicate"], asked
    assert len(result.binds) == binds, result
    if not ignorable:
        message = result.podgroup_status["ns/pg"]["conditions"][-1]["message"]
        assert ("2 extender: POST " + ext.url + "/predicate: no answer within what was left of this session's "
                "extender.sessionTimeout (200ms)") in message, message
        told = [m for _, m, _ in result.pod_conditions.values()]   # (the PodGroup's names the first pod's only)
        assert any("2 extender: not asked: this session's calls already took extender.sessionTimeout (200ms)" in m
                   for m in told), told


@pytest.mark.parametrize("budget, asked", [
    pytest.param("1500ms", ["p1", "p1", "p2", "p2"],
                 id="a budget of one httpTimeout: p2's calls spend it, p3 not asked"),
    pytest.param(None, ["p1", "p1", "p2", "p2", "p3", "p3"], id="unset: ten httpTimeouts, every pod asked"),
])
def test_session_timeout_sets_what_the_calls_may_take_together(budget, asked):
    """An extender that answers about p1 at once and never about the others (httpTimeout 1500ms): with a
    budget of 1500ms p2's calls take what is left of it; with the default (ten httpTimeouts) each call has its
    own httpTimeout, as upstream. (1.5 s, not less: on a loaded machine p1's quick calls took most of a 500ms
    budget once, and p2 was never asked.)"""
    release = threading.Event()
    try:
        with extender_server.running({"predicate": lambda b: OK if b["task"]["Name"] == "p1"
                                      else release.wait(10) and OK}) as ext:
            text = conf_text(ext.url, predicate="predicate", timeout="1500ms", ignorable=True)
            if budget:
                text += f"      extender.sessionTimeout: {budget}\n"
            session.run_session(three_pods(), conf.parse(text, "sched.conf"), o.NOW)
            _settled(ext, len(asked))
            got = sorted(b["task"]["Name"] for b in ext.bodies("predicate"))
    finally:
        release.set()
    assert got == asked


@pytest.mark.parametrize("ignorable, evictions", [
    pytest.param(True, 1, id="ignorable: no say, the tier's other plugins choose"),
    pytest.param(False, 0, id="not ignorable: no victims, the tier is undecided (as upstream)"),
])
def test_an_unreachable_extender_and_preemptable(ignorable, evictions):
    url = f"http://127.0.0.1:{extender_server.free_port()}"
    result = run(preempt_case({"extender.urlPrefix": url, "extender.preemptableVerb": "preemptable",
                               "extender.ignorable": ignorable}))
    assert len(result.evictions) == evictions
