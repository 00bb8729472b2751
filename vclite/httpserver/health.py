"""`/healthz`, `/livez`, `/readyz` as kube-apiserver answers them (pure).

Each endpoint has named checks; the answer is `ok` when all pass, a named check alone at
`/<endpoint>/<check>` (404 for a check it does not have), and with `?verbose` one line per check
(`[+]ping ok`, `[-]shutdown failed: reason withheld`) then `<endpoint> check passed|failed` — what
`kubectl get --raw '/readyz?verbose'` prints. A failure answers 503 (kube-apiserver: 500), so that a
load balancer takes a stopping server out at once.
"""
from __future__ import annotations

Checks = list[tuple[str, bool]]


def answer(endpoint: str, sub: str | None, checks: Checks, verbose: bool) -> tuple[int, str]:
    """(HTTP status, text) for `/<endpoint>[/<sub>]`."""
    if sub is not None:
        found = [ok for name, ok in checks if name == sub]
        if not found:
            return 404, "404 page not found\n"
        return (200, "ok") if found[0] else (503, f"internal server error: {sub} failed")
    passed = all(ok for _, ok in checks)
    if not verbose:
        return (200, "ok") if passed else (503, "not ready")
    lines = [f"[+]{name} ok" if ok else f"[-]{name} failed: reason withheld" for name, ok in checks]
    lines.append(f"{endpoint} check {'passed' if passed else 'failed'}")
    return (200 if passed else 503), "\n".join(lines) + "\n"
