"""The scenario STATE files (tests/scenarios/states/, see its README), run in-process: each file is
loaded as `vcctl scheduler dry-run` loads it (manifests, admission checks, Volcano's default queue),
with the configuration its first line names, and one session's decisions are compared with
<ID>.expected.json. tests/e2e/test_dry_run.py runs the same files through the real command."""
from __future__ import annotations

import datetime as dt
import json
import pathlib
import re

import pytest

from vclite.cli import dryrun
from vclite.scheduler import conf

STATES = pathlib.Path(__file__).resolve().parent / "states"
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
EXACT = ("binds", "evictions", "pipelined", "numaCpuSets")      # compared whole
BY_PODGROUP = ("podGroupPhases", "unschedulable")  # only the PodGroups listed (null: must have none)
ANNOTATIONS = "bindAnnotations"   # the same pods; each annotation's value, null: present (a time)


def case_ids() -> list[str]:
    return sorted(p.name[:-len(".expected.json")] for p in STATES.glob("*.expected.json"))


def conf_of(case_id: str) -> pathlib.Path:
    """The --conf named by the state file's first line (`# vcctl scheduler dry-run -f X.yaml --conf …`)."""
    first = (STATES / f"{case_id}.yaml").read_text().splitlines()[0]
    m = re.search(r"--conf (\S+)", first)
    assert m, f"{case_id}.yaml: the first line must show the dry-run command with --conf"
    return STATES / m.group(1)


def expected(case_id: str) -> dict:
    return json.loads((STATES / f"{case_id}.expected.json").read_text())


def mismatches(want: dict, got: dict) -> list[str]:
    """What differs between the expected subset and a dry run's output (empty: they agree)."""
    out = []
    for key, value in want.items():
        if key in EXACT:
            if got.get(key) != value:
                out.append(f"{key}: want {value}, got {got.get(key)}")
        elif key == ANNOTATIONS:
            out += _annotation_mismatches(value, got.get(key) or {})
        elif key in BY_PODGROUP:
            for pg, v in value.items():
                if got.get(key, {}).get(pg) != v:
                    out.append(f"{key}[{pg}]: want {v!r}, got {got.get(key, {}).get(pg)!r}")
        else:
            out.append(f"unknown key {key!r} in the expected file")
    return out


def _annotation_mismatches(want: dict, got: dict) -> list[str]:
    if set(want) != set(got):
        return [f"bindAnnotations: want pods {sorted(want)}, got {sorted(got)}"]
    out = []
    for pod, annotations in want.items():
        if set(annotations) != set(got[pod]):
            out.append(f"bindAnnotations[{pod}]: want keys {sorted(annotations)}, got {sorted(got[pod])}")
        out += [f"bindAnnotations[{pod}][{k}]: want {v!r}, got {got[pod].get(k)!r}"
                for k, v in annotations.items() if v is not None and got[pod].get(k) != v]
    return out


def test_every_state_has_an_expectation_and_a_conf():
    states = sorted(p.stem for p in STATES.glob("*.yaml"))
    assert states == case_ids()
    assert len(states) >= 40
    for case_id in states:
        assert conf_of(case_id).is_file(), case_id


@pytest.mark.parametrize("case_id", case_ids())
def test_state_file(case_id):
    state = dryrun.load_state([str(STATES / f"{case_id}.yaml")])
    out = dryrun.dry_run(state, conf.load_file(str(conf_of(case_id))), NOW, details=True)
    assert not mismatches(expected(case_id), out), (mismatches(expected(case_id), out), out)


@pytest.mark.parametrize("want, got, problems", [
    pytest.param({"binds": {"a/p": "n1"}}, {"binds": {"a/p": "n1", "a/q": "n2"}}, 1, id="binds are compared whole"),
    pytest.param({"podGroupPhases": {"a/pg": "Inqueue"}}, {"podGroupPhases": {"a/pg": "Inqueue", "a/x": "Pending"}}, 0,
                 id="phases only for the PodGroups listed"),
    pytest.param({"unschedulable": {"a/pg": None}}, {"unschedulable": {"a/pg": "why"}}, 1,
                 id="null: must not be unschedulable"),
    pytest.param({"evictions": ["a/p", "a/q"]}, {"evictions": ["a/q", "a/p"]}, 1, id="eviction order matters"),
    pytest.param({"bind": {}}, {}, 1, id="a misspelt key is a problem"),
    pytest.param({"bindAnnotations": {"a/p": {"t": None, "i": "0"}}},
                 {"bindAnnotations": {"a/p": {"t": "9", "i": "0"}}}, 0, id="null: the annotation is there, any value"),
    pytest.param({"bindAnnotations": {"a/p": {"i": "0"}}}, {"bindAnnotations": {"a/p": {"i": "1"}}}, 1,
                 id="annotation values compared"),
    pytest.param({"bindAnnotations": {"a/p": {"i": "0"}}}, {}, 1, id="annotations missing"),
])
def test_mismatches(want, got, problems):
    assert len(mismatches(want, got)) == problems
