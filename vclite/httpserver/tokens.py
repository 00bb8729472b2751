"""TokenRequest: POST serviceaccounts/<name>/token (authentication.k8s.io/v1), what `kubectl create token`
sends, answered as kube-apiserver answers it.

The request's spec is defaulted (`expirationSeconds: 3600`, `audiences` the API server's,
AUDIENCE) and checked as ValidateTokenRequest checks it (at least 10 minutes, at most 2^32 seconds:
422). A `boundObjectRef` must name a Pod, Secret or Node that exists (400 for another kind, 404 when
missing, 409 when its uid differs; 400 for a Pod running with another account). The token is a JWT
with kube's claims (`iss`, `sub` `system:serviceaccount:<ns>:<name>`, `aud`, `exp`, `iat`, `nbf`, `jti`,
and `kubernetes.io` naming the namespace, the account and the bound object), signed with HMAC-SHA256
under a key derived from the server's own token where kube-apiserver signs with its RSA service-account
key. vclite does not accept these tokens as credentials: its API has one bearer token
(docs/differences.md).
"""
from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import json
import uuid
from typing import Any

from vclite.api import kinds, meta
from vclite.lib import clock as clock_mod
from vclite.lib import errors

Obj = dict[str, Any]
API_VERSION, KIND = "authentication.k8s.io/v1", "TokenRequest"
AUDIENCE = ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_SECONDS = 3600
MIN_SECONDS, MAX_SECONDS = 10 * 60, 1 << 32
BOUND_KINDS = {"Pod": kinds.POD, "Secret": kinds.SECRET, "Node": kinds.NODE}


class TokenInvalid(errors.ApiError):
    """422 with kube-apiserver's wording for a TokenRequest (`TokenRequest.authentication.k8s.io "" is invalid`)."""

    code = 422
    reason = "Invalid"


def signing_key(server_token: str) -> bytes:
    """The key tokens are signed with: derived from the server's bearer token, so it survives restarts."""
    return hmac.new(server_token.encode(), b"vclite serviceaccount token signing key", hashlib.sha256).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jwt(claims: Obj, key: bytes) -> str:
    """A compact JWS (HS256) of `claims`."""
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = _b64(json.dumps(claims, separators=(",", ":"), sort_keys=True).encode())
    signature = hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(signature)}"


def _spec(body: Obj) -> Obj:
    """The request's spec, defaulted and checked; BadRequest / TokenInvalid."""
    if body.get("kind") not in (None, "", KIND) or body.get("apiVersion") not in (None, "", API_VERSION):
        raise errors.BadRequest(f"expected a {KIND} of {API_VERSION}, got {body.get('kind')!r} of "
                                f"{body.get('apiVersion')!r}")
    spec = body.get("spec") if body.get("spec") is not None else {}
    if not isinstance(spec, dict):
        raise errors.BadRequest("spec: must be an object")
    seconds = spec.get("expirationSeconds")
    seconds = DEFAULT_SECONDS if seconds is None else seconds
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise errors.BadRequest(f"spec.expirationSeconds: must be an integer, got {seconds!r}")
    audiences = spec.get("audiences") or [AUDIENCE]
    if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
        raise errors.BadRequest("spec.audiences: must be an array of strings")
    problem = ("may not specify a duration less than 10 minutes" if seconds < MIN_SECONDS else
               "may not specify a duration larger than 2^32 seconds" if seconds > MAX_SECONDS else None)
    if problem:
        raise TokenInvalid(f'{KIND}.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: '
                           f'{seconds}: {problem}')
    ref = spec.get("boundObjectRef")
    if ref is not None and not isinstance(ref, dict):
        raise errors.BadRequest("spec.boundObjectRef: must be an object")
    return {"audiences": audiences, "expirationSeconds": seconds, "boundObjectRef": ref}


def _bound(client: Any, namespace: str, account: str, ref: Obj | None) -> tuple[str, Obj] | None:
    """The bound object's kind and stored version, or None; errors as kube-apiserver's (a Pod must run
    with `account`)."""
    if ref is None:
        return None
    kind = BOUND_KINDS.get(str(ref.get("kind") or ""))
    if kind is None or ref.get("apiVersion") not in (None, "", "v1"):
        raise errors.BadRequest(f"cannot bind token for object of type {ref.get('apiVersion') or ''}, "
                                f"Kind={ref.get('kind') or ''}")
    obj = client.get(kind, namespace if kind.namespaced else "", str(ref.get("name") or ""))
    runs_as = (obj.get("spec") or {}).get("serviceAccountName") or "default" if kind is kinds.POD else account
    if runs_as != account:
        raise errors.BadRequest(f'cannot bind token for serviceaccount "{account}" to pod running with '
                                f'serviceaccount "{runs_as}"')
    if ref.get("uid") and ref["uid"] != meta.uid(obj):
        raise errors.Conflict(f'Operation cannot be fulfilled on {kind.kind}.{kind.group} "{meta.name(obj)}": the '
                              f"UID in the bound object reference ({ref['uid']}) does not match the UID in record. "
                              "The object might have been deleted and then recreated")
    return kind.kind, obj


def request(client: Any, namespace: str, name: str, body: Obj, key: bytes, now: datetime.datetime) -> Obj:
    """The TokenRequest answered for ServiceAccount `namespace/name` (NotFound when it is missing)."""
    spec = _spec(body)
    account = client.get(kinds.SERVICEACCOUNT, namespace, name)
    bound = _bound(client, namespace, name, spec["boundObjectRef"])
    issued = int(now.timestamp())
    expires = issued + spec["expirationSeconds"]
    private: Obj = {"namespace": namespace, "serviceaccount": {"name": name, "uid": meta.uid(account)}}
    if bound is not None:
        kind, obj = bound
        private[kind.lower()] = {"name": meta.name(obj), "uid": meta.uid(obj)}
    claims = {"aud": spec["audiences"], "exp": expires, "iat": issued, "nbf": issued, "iss": ISSUER,
              "jti": str(uuid.uuid4()), "sub": f"system:serviceaccount:{namespace}:{name}", "kubernetes.io": private}
    expiry = datetime.datetime.fromtimestamp(expires, datetime.timezone.utc)
    return {"kind": KIND, "apiVersion": API_VERSION,
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
            "spec": spec, "status": {"token": jwt(claims, key),
                                     "expirationTimestamp": clock_mod.format_time(expiry)}}
