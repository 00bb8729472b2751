"""Admission for HyperNodes (topology.volcano.sh/v1alpha1): what a cluster with Volcano refuses.

Three layers upstream, one here, in their order: the CRD's schema (`spec.tier` required, ≥ 0;
`tierName` ≤ 253 characters; `members` at least one item; a member's `type` required, Node or
HyperNode; `exactMatch.name` required, 1..253 characters, matching the CRD's DNS subdomain pattern;
`regexMatch.pattern` required, at least 1 character; the selector's two x-kubernetes-validations,
with their messages), the ValidatingAdmissionPolicy `hypernode-validation-policy` (a member's selector must name exactly
one of exactMatch, regexMatch, labelMatch), and the webhook `validatehypernode.volcano.sh` ("member
must have at least one member"; a regexMatch pattern that does not compile — Python's `re` here,
Go's RE2 there: a few patterns differ, e.g. look-arounds compile here and not there).
Field paths carry the member's index (`spec.members[1].selector.regexMatch.pattern`), where the webhook
writes `spec.members.selector.regexMatch.pattern`. The CRD declares no defaults, so nothing is
mutated. Pure functions.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.admission import base, common
from vclite.lib import errors

Obj = dict[str, Any]
FieldError = errors.FieldError

MEMBER_TYPES = ("Node", "HyperNode")
SELECTORS = ("exactMatch", "regexMatch", "labelMatch")
MAX_NAME = 253
# the CRD's x-kubernetes-validations on a member's selector
NONE_MSG = "Either ExactMatch or RegexMatch or LabelMatch must be specified"
MANY_MSG = "Only one of ExactMatch, RegexMatch, or LabelMatch can be specified"
NO_MEMBERS_MSG = "member must have at least one member"          # the webhook's
BAD_REGEX_MSG = "member regexMatch pattern is invalid: {}"        # the webhook's
# the CRD's pattern for exactMatch.name (a DNS subdomain; its length is checked apart)
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def validate(op: base.Operation, new: Obj, old: Obj | None, view: base.View,
             options: base.Options) -> list[FieldError]:
    spec = new.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, dict):
        return [FieldError("spec", common.type_error(spec, "object"))]
    errs: list[FieldError] = []
    if spec.get("tier") is None:
        errs.append(FieldError("spec.tier", common.REQUIRED))
    else:
        common.check_int(spec, "tier", "spec.tier", errs, minimum=0)
    name = common.check_type(spec, "tierName", "spec.tierName", errs, str, "string")
    if name is not None and len(name) > MAX_NAME:
        errs.append(FieldError("spec.tierName", f"Too long: may not be longer than {MAX_NAME}"))
    members = common.check_type(spec, "members", "spec.members", errs, list, "array")
    if spec.get("members") is None:   # (optional in the CRD: the webhook refuses it)
        errs.append(FieldError("spec.members", common.invalid(None, NO_MEMBERS_MSG)))
    elif members == []:   # the CRD's minItems
        errs.append(FieldError("spec.members", common.invalid(0, "spec.members in body should have at least 1 items")))
    for i, member in enumerate(members or ()):
        errs += _member(member, f"spec.members[{i}]")
    return errs


def _member(member: Any, path: str) -> list[FieldError]:
    if not isinstance(member, dict):
        return [FieldError(path, common.type_error(member, "object"))]
    errs: list[FieldError] = []
    mtype = member.get("type")
    if mtype is None or mtype == "":
        errs.append(FieldError(f"{path}.type", common.REQUIRED))
    elif mtype not in MEMBER_TYPES:
        errs.append(FieldError(f"{path}.type", common.unsupported(mtype, MEMBER_TYPES)))
    selector = member.get("selector")
    if selector is None:
        selector = {}
    if not isinstance(selector, dict):
        return errs + [FieldError(f"{path}.selector", common.type_error(selector, "object"))]
    given = [k for k in SELECTORS if selector.get(k) is not None]
    if not given:
        errs.append(FieldError(f"{path}.selector", common.invalid(selector, NONE_MSG)))
    elif len(given) > 1:
        errs.append(FieldError(f"{path}.selector", common.invalid(selector, MANY_MSG)))
    errs += _exact(selector.get("exactMatch"), f"{path}.selector.exactMatch")
    errs += _regex(selector.get("regexMatch"), f"{path}.selector.regexMatch")
    label = selector.get("labelMatch")
    if label is not None and not isinstance(label, dict):
        errs.append(FieldError(f"{path}.selector.labelMatch", common.type_error(label, "object")))
    return errs


def _member_string(selector: Any, key: str, path: str, schema_path: str) -> tuple[str | None, list[FieldError]]:
    """What exactMatch and regexMatch share: an object whose `key` is a required, non-empty string
    (the CRD's words). (value, []) when it is one; (None, problems) otherwise, or (None, []) when absent."""
    if selector is None:
        return None, []
    if not isinstance(selector, dict):
        return None, [FieldError(path, common.type_error(selector, "object"))]
    value = selector.get(key)
    if value is None:
        return None, [FieldError(f"{path}.{key}", common.REQUIRED)]
    if not isinstance(value, str):
        return None, [FieldError(f"{path}.{key}", common.type_error(value, "string"))]
    if not value:
        return None, [FieldError(f"{path}.{key}", common.invalid(value, f"{schema_path} in body should be at "
                                                                         "least 1 chars long"))]
    return value, []


def _exact(exact: Any, path: str) -> list[FieldError]:
    name, errs = _member_string(exact, "name", path, "spec.members[].selector.exactMatch.name")
    if name is None:
        return errs
    if len(name) > MAX_NAME:
        return [FieldError(f"{path}.name", f"Too long: may not be longer than {MAX_NAME}")]
    if not _DNS_SUBDOMAIN.fullmatch(name):
        return [FieldError(f"{path}.name", common.invalid(name, "spec.members[].selector.exactMatch.name in body "
                                                                f"should match '{_DNS_SUBDOMAIN.pattern}'"))]
    return []


def _regex(regex: Any, path: str) -> list[FieldError]:
    pattern, errs = _member_string(regex, "pattern", path, "spec.members[].selector.regexMatch.pattern")
    if pattern is None:
        return errs
    try:
        re.compile(pattern)
    except re.error as e:
        return [FieldError(f"{path}.pattern", common.invalid(pattern, BAD_REGEX_MSG.format(e)))]
    return []
