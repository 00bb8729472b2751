"""Dependency graphs: undefined targets, cycles, topological order, reverse edges.

Includes Volcano's IsDAG / LoadVertexs table (volcano-jobflow.md §5.1 U6)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vclite.lib import dag


def g(d):
    """Volcano's tables use integers; vertices here are strings."""
    return {str(k): [str(t) for t in v] for k, v in d.items()}


# U6: (graph, undefined, is_dag)
@pytest.mark.parametrize("graph, undefined, is_dag", [
    pytest.param({1: [2], 2: [1, 3]}, ["3"], False, id="u6-load-error-3-undefined"),
    pytest.param({1: [2], 2: [3], 3: [1]}, [], False, id="u6-three-cycle"),
    pytest.param({1: [2], 2: [1, 3], 3: []}, [], False, id="u6-two-cycle"),
    pytest.param({1: [2, 3], 2: [3], 3: [4], 4: []}, [], True, id="u6-dag-chain"),
    pytest.param({1: [2, 3], 2: [4, 5], 3: [], 4: [], 5: []}, [], True, id="u6-dag-tree"),
    pytest.param({1: [2, 3, 4], 2: [3], 3: [4], 4: [5], 5: []}, [], True, id="u6-dag-long"),
    pytest.param({1: [2, 3, 4], 2: [3, 5], 3: [5], 4: [3, 5], 5: []}, [], True, id="u6-dag-wide"),
    pytest.param({1: [2, 3, 4], 2: [3, 5], 3: [5], 4: [3, 5], 5: [5, 3]}, [], False, id="u6-self-loop"),
])
def test_volcano_is_dag_table(graph, undefined, is_dag):
    graph = g(graph)
    assert dag.undefined_vertices(graph) == undefined
    if not undefined:  # Volcano stops at the load error
        assert (dag.find_cycle(graph) is None) is is_dag
        assert dag.is_dag(graph) is is_dag


@pytest.mark.parametrize("graph, want", [
    pytest.param({}, [], id="empty"),
    pytest.param({"a": []}, [], id="single"),
    pytest.param({"b": ["x", "a", "y"], "c": ["y", "x", "z"], "a": []}, ["x", "y", "z"],
                 id="first-seen-order-no-duplicates"),
    pytest.param({"a": ["a"]}, [], id="self-loop-is-defined"),
])
def test_undefined_vertices(graph, want):
    assert dag.undefined_vertices(graph) == want


@pytest.mark.parametrize("graph, want", [
    pytest.param({}, None, id="empty"),
    pytest.param({"a": ["a"]}, ["a", "a"], id="self-loop"),
    pytest.param({"a": ["b"], "b": ["a"]}, ["a", "b", "a"], id="two-cycle"),
    pytest.param({"a": ["b"], "b": ["c"], "c": ["a"]}, ["a", "b", "c", "a"], id="three-cycle"),
    pytest.param({"x": ["a"], "a": ["b"], "b": ["a"]}, ["a", "b", "a"], id="cycle-reached-from-outside"),
    pytest.param({"a": ["b"], "b": [], "c": ["d"], "d": ["c"]}, ["c", "d", "c"], id="cycle-in-second-component"),
    pytest.param({"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": []}, None, id="diamond-no-cycle"),
    pytest.param({"a": ["b", "c"], "b": ["c"], "c": ["b"]}, ["b", "c", "b"], id="first-found-in-order"),
    pytest.param({"a": ["missing"], "b": ["a"]}, None, id="undefined-target-is-a-leaf"),
    pytest.param({"a": ["b", "b"], "b": []}, None, id="duplicate-edge"),
])
def test_find_cycle(graph, want):
    assert dag.find_cycle(graph) == want


@pytest.mark.parametrize("graph, want", [
    pytest.param({}, [], id="empty"),
    pytest.param({"b": ["a"], "a": []}, ["a", "b"], id="dependency-first"),
    pytest.param({"c": [], "b": [], "a": []}, ["c", "b", "a"], id="ties-by-insertion-order"),
    pytest.param({"d": ["b", "c"], "c": ["a"], "b": ["a"], "a": []}, ["a", "c", "b", "d"], id="diamond"),
    pytest.param({"z": [], "y": ["x"], "x": []}, ["z", "x", "y"], id="earliest-ready-first"),
    pytest.param({"b": ["a", "a"], "a": []}, ["a", "b"], id="duplicate-edge"),
    pytest.param({"b": ["ghost"], "a": []}, ["a", "ghost", "b"], id="undefined-target-after-keys"),
])
def test_topological_order(graph, want):
    assert dag.topological_order(graph) == want


@pytest.mark.parametrize("graph, cycle", [
    pytest.param({"a": ["a"]}, "a -> a", id="self-loop"),
    pytest.param({"a": [], "b": ["c"], "c": ["b"]}, "b -> c -> b", id="two-cycle"),
])
def test_topological_order_rejects_cycles(graph, cycle):
    with pytest.raises(ValueError, match=cycle):
        dag.topological_order(graph)


@pytest.mark.parametrize("graph, want", [
    pytest.param({}, {}, id="empty"),
    pytest.param({"a": [], "b": ["a"], "c": ["a", "b", "a"]}, {"a": ["b", "c"], "b": ["c"], "c": []},
                 id="reverse-edges-no-duplicates"),
    pytest.param({"b": ["ghost"]}, {"b": [], "ghost": ["b"]}, id="undefined-target-included"),
])
def test_dependents(graph, want):
    assert dag.dependents(graph) == want


def test_large_chain_needs_no_recursion():
    n = 10_000
    chain = {f"v{i}": ([f"v{i - 1}"] if i else []) for i in range(n)}
    assert dag.find_cycle(chain) is None
    assert dag.topological_order(chain) == [f"v{i}" for i in range(n)]
    chain["v0"] = [f"v{n - 1}"]
    cycle = dag.find_cycle(chain)
    assert cycle is not None and len(cycle) == n + 1 and cycle[0] == cycle[-1]


@st.composite
def dags(draw):
    """A random DAG: vertex i may depend only on vertices created before it; keys shuffled."""
    n = draw(st.integers(min_value=0, max_value=30))
    graph = {}
    for i in range(n):
        graph[f"v{i}"] = draw(st.lists(st.sampled_from([f"v{j}" for j in range(i)]), max_size=5)) if i else []
    return {k: graph[k] for k in draw(st.permutations(list(graph)))}


@given(dags())
def test_topological_order_respects_every_edge(graph):
    order = dag.topological_order(graph)
    assert sorted(order) == sorted(graph)
    pos = {v: i for i, v in enumerate(order)}
    for v, deps in graph.items():
        for d in deps:
            assert pos[d] < pos[v]
    assert dag.find_cycle(graph) is None


@st.composite
def graphs(draw):
    n = draw(st.integers(min_value=1, max_value=12))
    names = [f"v{i}" for i in range(n)]
    return {v: draw(st.lists(st.sampled_from(names), max_size=3)) for v in names}


@given(graphs())
def test_find_cycle_is_a_real_cycle_exactly_when_order_fails(graph):
    cycle = dag.find_cycle(graph)
    if cycle is None:
        dag.topological_order(graph)
    else:
        assert cycle[0] == cycle[-1]
        assert len(set(cycle[:-1])) == len(cycle) - 1  # a simple cycle
        for a, b in zip(cycle, cycle[1:]):
            assert b in graph[a]
        with pytest.raises(ValueError):
            dag.topological_order(graph)


@pytest.mark.parametrize("graph, start, goal, want", [
    pytest.param({"a": ["b"], "b": ["c"], "c": []}, "a", "c", ["a", "b", "c"], id="chain"),
    pytest.param({"a": ["b"], "b": []}, "b", "a", None, id="against-the-edges"),
    pytest.param({"a": []}, "a", "a", ["a"], id="itself"),
    pytest.param({"a": ["b", "c"], "b": ["d"], "c": ["e"], "e": ["d"]}, "a", "d", ["a", "b", "d"], id="shortest"),
    pytest.param({"a": ["x"]}, "a", "x", ["a", "x"], id="undefined-target-reached"),
    pytest.param({"a": ["b"], "b": ["a"]}, "a", "z", None, id="cycle-without-the-goal-ends"),
])
def test_find_path(graph, start, goal, want):
    assert dag.find_path(graph, start, goal) == want
