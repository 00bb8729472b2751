"""events.k8s.io/v1 Events as views of core/v1 Events: the field mapping both ways, and the checks
of an Event written through events.k8s.io/v1."""
import pytest

from vclite.api import eventsv1

CORE = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "p.1", "namespace": "default"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default", "uid": "u1"},
        "reason": "Started", "message": "Started container main", "type": "Normal", "count": 3,
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:09Z",
        "source": {"component": "kubelet", "host": "local-0"}, "reportingComponent": "kubelet",
        "reportingInstance": "local-0", "action": "Start", "eventTime": "2026-01-01T00:00:00.000001Z",
        "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:09.000001Z"},
        "related": {"kind": "Node", "name": "local-0"}}
V1 = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "p.1", "namespace": "default"},
      "regarding": {"kind": "Pod", "name": "p", "namespace": "default", "uid": "u1"},
      "reason": "Started", "note": "Started container main", "type": "Normal", "deprecatedCount": 3,
      "deprecatedFirstTimestamp": "2026-01-01T00:00:00Z", "deprecatedLastTimestamp": "2026-01-01T00:00:09Z",
      "deprecatedSource": {"component": "kubelet", "host": "local-0"}, "reportingController": "kubelet",
      "reportingInstance": "local-0", "action": "Start", "eventTime": "2026-01-01T00:00:00.000001Z",
      "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:09.000001Z"},
      "related": {"kind": "Node", "name": "local-0"}}


def test_every_field_maps_both_ways():
    assert eventsv1.to_v1(CORE) == V1
    assert eventsv1.to_core(V1) == CORE


def test_a_core_event_without_event_time_shows_its_first_timestamp_there():
    """(kube-apiserver shows null, which the official Python client cannot read.)"""
    legacy = {k: v for k, v in CORE.items() if k not in ("eventTime", "series", "action", "related")}
    shown = eventsv1.to_v1(legacy)
    assert shown["eventTime"] == "2026-01-01T00:00:00.000000Z" and "series" not in shown
    assert eventsv1.to_v1({"metadata": {"creationTimestamp": "2026-01-02T03:04:05Z"}})["eventTime"] == \
        "2026-01-02T03:04:05.000000Z"


GOOD = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.com/ctl",
        "reportingInstance": "ctl-1", "action": "Sync", "reason": "Synced", "type": "Normal", "note": "done"}


@pytest.mark.parametrize("change, problems", [
    pytest.param({}, [], id="good"),
    pytest.param({"eventTime": None}, ["eventTime: Required value"], id="no-event-time"),
    pytest.param({"reportingController": ""}, ["reportingController: Required value"], id="no-controller"),
    pytest.param({"action": None, "reason": None}, ["action: Required value", "reason: Required value"],
                 id="no-action-nor-reason"),
    pytest.param({"type": "Info"}, ['type: Invalid value: "": has invalid value: Info'], id="type"),
    pytest.param({"note": "x" * 1025}, ["note: Too long: may not be more than 1024 bytes"], id="note-too-long"),
    pytest.param({"deprecatedCount": 2}, ['deprecatedCount: Invalid value: "": needs to be unset'],
                 id="deprecated-field-set"),
    pytest.param({"series": {"count": 1}}, ["series.count: Invalid value: 1: should be at least 2",
                                            "series.lastObservedTime: Required value"], id="series"),
])
def test_an_event_written_through_events_k8s_io_is_checked(change, problems):
    assert [str(e) for e in eventsv1.validate_create({**GOOD, **change})] == problems
