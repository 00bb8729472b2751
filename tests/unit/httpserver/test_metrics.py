"""Prometheus text rendering."""
from vclite.httpserver import metrics


def test_render_counter_gauge_histogram():
    r = metrics.Registry()
    c = r.add(metrics.Counter("reqs_total", "Requests."))
    c.inc(verb="GET", code="200")
    c.inc(2, verb="GET", code="200")
    r.add(metrics.Gauge("objs", "Objects.", lambda: {(("kind", 'a"b'),): 3.0}))
    h = r.add(metrics.Histogram("lat_seconds", "Latency.", buckets=(0.1, 1.0)))
    h.observe(0.05)
    h.observe(0.5)
    h.observe(5)
    assert r.render() == "\n".join([
        "# HELP reqs_total Requests.", "# TYPE reqs_total counter", 'reqs_total{code="200",verb="GET"} 3',
        "# HELP objs Objects.", "# TYPE objs gauge", 'objs{kind="a\\"b"} 3',
        "# HELP lat_seconds Latency.", "# TYPE lat_seconds histogram",
        'lat_seconds_bucket{le="0.1"} 1', 'lat_seconds_bucket{le="1"} 2', 'lat_seconds_bucket{le="+Inf"} 3',
        "lat_seconds_sum 5.55", "lat_seconds_count 3"]) + "\n"
    assert h.count() == 3
