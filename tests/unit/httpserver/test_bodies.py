"""Request body limits and decoding: size, depth, malformed input, media types, strict duplicates."""
import pytest

from vclite.httpserver import bodies
from vclite.httpserver import status as status_mod
from vclite.lib import errors

JSON = "application/json"


@pytest.mark.parametrize("raw, ctype, expected", [
    pytest.param(b'{"a": 1}', JSON, {"a": 1}, id="json"),
    pytest.param(b'{"a": 1}', "application/json; charset=utf-8", {"a": 1}, id="json-with-params"),
    pytest.param(b"a: 1\nb: [x]\n", "application/yaml", {"a": 1, "b": ["x"]}, id="yaml"),
    pytest.param(b'{"a": 1}', "application/apply-patch+yaml", {"a": 1}, id="apply-body-is-json"),
    pytest.param(b"t: 2026-01-01T00:00:00Z\n", "application/apply-patch+yaml", {"t": "2026-01-01T00:00:00Z"},
                 id="yaml-timestamps-stay-strings"),
    pytest.param(b'[{"op": "remove", "path": "/a"}]', "application/json-patch+json", [{"op": "remove", "path": "/a"}],
                 id="json-patch"),
    pytest.param(b'{"a": 1}', None, {"a": 1}, id="no-content-type-is-json"),
])
def test_decodes(raw, ctype, expected):
    assert bodies.decode(raw, ctype) == expected


def nested(depth):
    return ("[" * depth + "]" * depth).encode()


@pytest.mark.parametrize("raw, ctype, error, message", [
    pytest.param(b"x" * (bodies.MAX_BODY + 1), JSON, status_mod.TooLarge, "larger than", id="too-large"),
    pytest.param(nested(bodies.MAX_DEPTH + 1), JSON, errors.BadRequest, "nested deeper", id="too-deep"),
    pytest.param(nested(100_000), JSON, errors.BadRequest, "nested deeper", id="parser-recursion"),
    pytest.param(b"- " * 5000 + b"x", "application/yaml", errors.BadRequest, "nested deeper", id="yaml-too-deep"),
    pytest.param(b'{"a": ', JSON, errors.BadRequest, "decoding", id="truncated-json"),
    pytest.param(b"a: [1, 2\n", "application/yaml", errors.BadRequest, "decoding", id="malformed-yaml"),
    pytest.param(b"a: &x [1]\nb: *x\n", "application/yaml", errors.BadRequest, "aliases", id="yaml-alias"),
    pytest.param(b"1: x\n", "application/yaml", errors.BadRequest, "keys must be strings", id="non-string-key"),
    pytest.param(b"a: !!binary aGVsbG8=\n", "application/yaml", errors.BadRequest, "unsupported value",
                 id="binary"),
    pytest.param(b'{"a": NaN}', JSON, errors.BadRequest, "finite", id="nan"),
    pytest.param(b"\xff\xfe", JSON, errors.BadRequest, "UTF-8", id="not-utf8"),
    pytest.param(b"   ", JSON, errors.BadRequest, "empty", id="empty"),
    pytest.param(b"<xml/>", "application/xml", status_mod.UnsupportedMediaType, "unknown format", id="xml"),
    pytest.param(b"\x0a\x0b", "application/vnd.kubernetes.protobuf", errors.BadRequest, "magic",
                 id="protobuf-without-envelope"),
    pytest.param(b"\xa1", "application/cbor", status_mod.UnsupportedMediaType, "unknown format", id="cbor"),
])
def test_refuses(raw, ctype, error, message):
    with pytest.raises(error) as exc:
        bodies.decode(raw, ctype)
    assert message in exc.value.message


def test_strict_refuses_duplicate_fields_lenient_takes_the_last():
    raw = b'{"spec": {"a": 1, "a": 2}}'
    with pytest.raises(errors.BadRequest, match='duplicate field "a"'):
        bodies.decode(raw, JSON, strict=True)
    assert bodies.decode(raw, JSON) == {"spec": {"a": 2}}


def test_depth_limit_is_inclusive():
    bodies.check_depth(eval(nested(bodies.MAX_DEPTH)))  # noqa: S307 - a literal list
    with pytest.raises(errors.BadRequest):
        bodies.check_depth(eval(nested(bodies.MAX_DEPTH + 1)))  # noqa: S307


def test_decode_object_wants_a_mapping():
    with pytest.raises(errors.BadRequest, match="must be an object"):
        bodies.decode_object(b"[1]", JSON)
