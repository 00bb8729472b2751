"""List and watch options as kube-apiserver validates them (ValidateListOptions) and what a list reads."""
import pytest

from vclite.httpserver import listopts
from vclite.lib import errors


@pytest.mark.parametrize("query, watching, problems", [
    pytest.param({}, False, [], id="nothing"),
    pytest.param({"resourceVersion": "5", "resourceVersionMatch": "Exact"}, False, [], id="exact"),
    pytest.param({"resourceVersion": "0", "resourceVersionMatch": "NotOlderThan"}, False, [], id="not-older-than-0"),
    pytest.param({"resourceVersionMatch": "Exact"}, False,
                 ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is "
                  "provided"], id="match-without-version"),
    pytest.param({"resourceVersion": "5", "resourceVersionMatch": "Exact", "continue": "x"}, False,
                 ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided"],
                 id="match-with-continue"),
    pytest.param({"resourceVersion": "5", "resourceVersionMatch": "exact"}, False,
                 ['resourceVersionMatch: Unsupported value: "exact": supported values: "Exact", "NotOlderThan", ""'],
                 id="unknown-match"),
    pytest.param({"resourceVersion": "0", "resourceVersionMatch": "Exact"}, False,
                 ['resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
                 id="exact-0"),
    pytest.param({"sendInitialEvents": "true"}, False,
                 ["sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"], id="initial-events-list"),
    pytest.param({}, True, [], id="legacy-watch"),
    pytest.param({"resourceVersion": "7"}, True, [], id="watch-from"),
    pytest.param({"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan"}, True, [], id="watch-list"),
    pytest.param({"sendInitialEvents": "true"}, True,
                 ["resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                  "NotOlderThan"], id="initial-events-without-match"),
    pytest.param({"resourceVersion": "3", "resourceVersionMatch": "NotOlderThan"}, True,
                 ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless "
                  "sendInitialEvents is provided"], id="watch-match-without-initial-events"),
    pytest.param({"sendInitialEvents": "false", "resourceVersionMatch": "Exact", "resourceVersion": "3"}, True,
                 ["resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "
                  "NotOlderThan", 'resourceVersionMatch: Unsupported value: "Exact": supported values: '
                  '"NotOlderThan"'], id="watch-exact"),
])
def test_options_are_checked_as_kube_apiserver_checks_them(query, watching, problems):
    if not problems:
        listopts.check(query, watching)
        return
    with pytest.raises(listopts.InvalidOptions) as caught:
        listopts.check(query, watching)
    assert [str(e) for e in caught.value.errors] == problems
    assert caught.value.code == 422 and caught.value.message.startswith('ListOptions.meta.k8s.io "" is invalid: ')


@pytest.mark.parametrize("query, read", [
    pytest.param({}, None, id="current"),
    pytest.param({"resourceVersion": "0"}, None, id="any"),
    pytest.param({"resourceVersion": "4"}, None, id="not-older-than-by-default"),
    pytest.param({"resourceVersion": "4", "resourceVersionMatch": "NotOlderThan"}, None, id="not-older-than"),
    pytest.param({"resourceVersion": "4", "resourceVersionMatch": "Exact"}, 4, id="exact"),
    pytest.param({"resourceVersion": "4", "limit": "2"}, 4, id="legacy-exact-with-limit"),
    pytest.param({"resourceVersion": "10", "resourceVersionMatch": "Exact"}, 10, id="exact-current"),
])
def test_what_a_list_reads(query, read):
    assert listopts.list_read(query, 10) == read


@pytest.mark.parametrize("match", ["Exact", "NotOlderThan", ""])
def test_a_version_the_store_has_not_reached_is_too_large(match):
    with pytest.raises(listopts.TooLargeResourceVersion, match="Too large resource version: 11, current: 10"):
        listopts.list_read({"resourceVersion": "11", "resourceVersionMatch": match}, 10)


@pytest.mark.parametrize("rv", ["abc", "²", "١٢"])   # (digits int() reads but kube's uint64 parse does not)
def test_a_version_that_is_not_a_number_is_a_bad_request(rv):
    with pytest.raises(errors.BadRequest, match=f'invalid resourceVersion "{rv}"'):
        listopts.list_read({"resourceVersion": rv}, 10)
