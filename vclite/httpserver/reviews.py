"""Self-subject reviews: what the caller may do and who it is (pure).

`kubectl auth can-i` (SelfSubjectAccessReview), `kubectl auth can-i --list` (SelfSubjectRulesReview)
and `kubectl auth whoami` (SelfSubjectReview) ask the server; so do dashboards (k9s, Headlamp) before
they offer an action. vclite has one user, the holder of the server's token (anything without it
is refused with 401 before getting here), and that user may do everything, as `system:masters` on
a cluster. The reviews are created, never stored: the answer is the request with its `status`
filled in (201), as kube-apiserver answers them. A request that asks to act as another user
(`Impersonate-*` headers: `kubectl --as`) is refused (`impersonation_refusal`), as there is none.
"""
from __future__ import annotations

from typing import Any

from vclite.lib import errors

Obj = dict[str, Any]

USERNAME = "vclite-admin"
GROUPS = ["system:masters", "system:authenticated"]
REASON = "vclite: the holder of the server's token may do everything"

# (group, version, plural) -> kind
KINDS = {
    ("authorization.k8s.io", "v1", "selfsubjectaccessreviews"): "SelfSubjectAccessReview",
    ("authorization.k8s.io", "v1", "selfsubjectrulesreviews"): "SelfSubjectRulesReview",
    ("authentication.k8s.io", "v1", "selfsubjectreviews"): "SelfSubjectReview",
}


IMPERSONATE = "Impersonate-"


def impersonation_refusal(headers: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(who, why) when a request asks to act as someone else (`kubectl --as`, `--as-group`: the
    `Impersonate-*` headers), which vclite refuses: it has no other user, so it could only answer
    as its own — a `kubectl auth can-i --as=bob` saying yes. None when there is no such header or it
    names the token's holder itself (and groups it is in)."""
    asked = [(k.lower(), v) for k, v in headers if k.lower().startswith(IMPERSONATE.lower())]
    if not asked:
        return None
    user = next((v for k, v in asked if k == "impersonate-user"), None)
    groups = [v for k, v in asked if k == "impersonate-group"]
    others = [k for k, _ in asked if k not in ("impersonate-user", "impersonate-group")]
    if user == USERNAME and set(groups) <= set(GROUPS) and not others:
        return None
    who = user or (groups[0] if groups else others[0])
    return who, (f"vclite has one user, {USERNAME} (the holder of the server's token), and acts as no other: "
                 f"impersonation (kubectl --as, --as-group) is not supported")


def _spec(body: Any, kind: str) -> Obj:
    if not isinstance(body, dict):
        raise errors.BadRequest(f"the body of a {kind} must be an object, not {errors.json_type(body)}")
    spec = body.get("spec")
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise errors.Invalid(kind, "", [errors.FieldError("spec", f"Invalid value: must be of type object, "
                                                                  f"not {errors.json_type(spec)}")])
    return spec


def answer(group: str, version: str, plural: str, body: Any) -> Obj:
    """The review `body` asks for, answered (errors.BadRequest or Invalid for a malformed one)."""
    kind = KINDS[(group, version, plural)]
    spec = _spec(body, kind)
    out: Obj = {"kind": kind, "apiVersion": f"{group}/{version}", "metadata": {"creationTimestamp": None}}
    if kind == "SelfSubjectAccessReview":
        attrs = [a for a in ("resourceAttributes", "nonResourceAttributes") if spec.get(a) is not None]
        if len(attrs) != 1:
            raise errors.Invalid(kind, "", [errors.FieldError(
                "spec.resourceAttributes", "Invalid value: \"null\": exactly one of nonResourceAttributes or "
                                           "resourceAttributes must be specified")])
        return {**out, "spec": spec, "status": {"allowed": True, "reason": REASON}}
    if kind == "SelfSubjectRulesReview":
        return {**out, "spec": spec, "status": {
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}], "incomplete": False}}
    return {**out, "status": {"userInfo": {"username": USERNAME, "groups": list(GROUPS)}}}
