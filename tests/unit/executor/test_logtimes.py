"""The time index of container logs (executor/logtimes.py): samples, a line's time, the kubelet's
prefix, and the lines `kubectl logs --timestamps / --since` get."""
import pytest

from vclite.executor import logtimes

T0 = 1_790_000_000.0   # 2026-09-21T...: any unix time


@pytest.mark.parametrize("text, samples", [
    pytest.param("", [], id="empty"),
    pytest.param("10 5.5\n20 6.5\n", [(10, 5.5), (20, 6.5)], id="two"),
    pytest.param("10 5.5\n20 6.", [(10, 5.5)], id="last-line-without-its-newline"),
    pytest.param("10 5.5\n20", [(10, 5.5)], id="last-line-cut-short"),
    pytest.param("10 5.5\nx y\n20 6.5\n", [(10, 5.5), (20, 6.5)], id="damaged-line-left-out"),
    pytest.param("20 6.5\n10 7.5\n30 5.0\n40 8.0\n", [(20, 6.5), (40, 8.0)], id="out-of-order-left-out"),
])
def test_parse_samples(text, samples):
    assert logtimes.parse_samples(text) == samples


SAMPLES = [(10, T0 + 1), (25, T0 + 2)]


@pytest.mark.parametrize("end, fallback, when", [
    pytest.param(4, T0 + 9, T0 + 1, id="before-the-first-sample"),
    pytest.param(10, T0 + 9, T0 + 1, id="ends-at-a-sample"),
    pytest.param(11, T0 + 9, T0 + 2, id="between-samples-takes-the-later"),
    pytest.param(26, T0 + 9, T0 + 9, id="after-the-last-sample-takes-the-fallback"),
    pytest.param(26, T0, T0 + 2, id="never-earlier-than-the-last-sample"),
])
def test_time_of(end, fallback, when):
    assert logtimes.time_of(SAMPLES, end, fallback) == when


def test_time_of_without_samples_is_the_fallback():
    assert logtimes.time_of([], 100, T0) == T0


@pytest.mark.parametrize("when, text", [
    pytest.param(0.0, "1970-01-01T00:00:00.000000000Z", id="epoch"),
    pytest.param(1_700_000_000.25, "2023-11-14T22:13:20.250000000Z", id="quarter"),
    pytest.param(1_700_000_000.9999996, "2023-11-14T22:13:21.000000000Z", id="rounds-up-into-the-next-second"),
])
def test_format_time_is_the_kubelets(when, text):
    assert logtimes.format_time(when) == text


def test_samples_round_trip_through_the_index_file(tmp_path):
    log = tmp_path / "main.log"
    logtimes.append_sample(log, 10, T0 + 1.5)
    logtimes.append_sample(log, 30, T0 + 2.25)
    assert logtimes.times_path(log).name == "main.log.times"
    assert logtimes.read_samples(log) == [(10, T0 + 1.5), (30, T0 + 2.25)]
    assert logtimes.read_samples(tmp_path / "other.log") == []


def _lines(data: bytes, pieces: int, **kw) -> bytes:
    """TimedLines over `data` fed in `pieces` parts, then flushed."""
    args = dict(samples=[(4, T0 + 1), (8, T0 + 2)], start=0, known=len(data), fallback=T0 + 3,
                now=lambda: T0 + 10, timestamps=True, since=None)
    args.update(kw)
    timed = logtimes.TimedLines(**args)
    step = max(1, -(-len(data) // pieces))
    out = b"".join(timed.feed(data[i:i + step]) for i in range(0, len(data), step))
    return out + timed.flush()


def stamp(offset: float) -> bytes:
    return logtimes.format_time(T0 + offset).encode() + b" "


@pytest.mark.parametrize("pieces", [1, 2, 5, 13])
def test_each_line_gets_the_time_of_its_end(pieces):
    data = b"one\ntwo\nthree\nend"
    assert _lines(data, pieces) == stamp(1) + b"one\n" + stamp(2) + b"two\n" + stamp(3) + b"three\n" + stamp(3) + b"end"


@pytest.mark.parametrize("since, kept", [
    pytest.param(T0 + 0.5, b"one\ntwo\nthree\n", id="all"),
    pytest.param(T0 + 2, b"two\nthree\n", id="from-a-sample-on"),
    pytest.param(T0 + 2.5, b"three\n", id="only-after-the-last-sample"),
    pytest.param(T0 + 4, b"", id="none"),
])
def test_since_leaves_out_earlier_lines(since, kept):
    assert _lines(b"one\ntwo\nthree\n", 3, timestamps=False, since=since) == kept


def test_bytes_written_while_followed_take_the_time_they_are_read():
    timed = logtimes.TimedLines([(4, T0 + 1)], start=0, known=4, fallback=T0 + 3, now=lambda: T0 + 10,
                                timestamps=True, since=None)
    assert timed.feed(b"one\nfo") == stamp(1) + b"one\n"
    assert timed.feed(b"ur\n") == stamp(10) + b"four\n"


def test_reading_from_the_middle_counts_offsets_from_there():
    # tailLines started the read at offset 4 ("two\n" ends at 8: the second sample)
    timed = logtimes.TimedLines([(4, T0 + 1), (8, T0 + 2)], start=4, known=14, fallback=T0 + 3, now=lambda: T0 + 10,
                                timestamps=True, since=None)
    assert timed.feed(b"two\nthree\n") == stamp(2) + b"two\n" + stamp(3) + b"three\n"
