"""Volcano's createJobIOIfNotExist, its decisions: the PersistentVolumeClaims a vcjob's spec.volumes name (pure).

Each spec.volumes[] entry names a claim: its `volumeClaimName`, or for an entry with only `volumeClaim` a name
generated from the job (pods.generated_claim_name: Volcano's shape `<job>-pvc-<12 characters>`, derived from the
job's uid here so every sync names it the same). An entry with a `volumeClaim` has its claim made if missing
(`claim`: that spec, the job its controller owner, as Volcano's createPVC); an entry with only a
`volumeClaimName` needs that claim to exist: until it does, the job stays Pending — no PodGroup, no pods — with
Volcano's Warning Event PVCError (`missing_message`). Every claim is recorded in status.controlledResources as
`volume-pvc-<name>`.

Must not: read or write the API (actions.py does).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from vclite.api import meta
from vclite.controllers.job import pods as pods_mod

Obj = dict[str, Any]
PVC_ERROR = "PVCError"   # (Volcano's batch.PVCError event reason)


@dataclasses.dataclass(frozen=True)
class Wanted:
    """One job volume's claim: its name, the spec to make it from (None: it must exist already), and whether
    its name was generated (to be written into the job's spec)."""
    index: int
    name: str
    spec: Obj | None
    generated: bool


def wanted(job: Obj) -> list[Wanted]:
    out = []
    for i, vol in enumerate((job.get("spec") or {}).get("volumes") or []):
        if not isinstance(vol, dict):
            continue
        given = vol.get("volumeClaimName") or ""
        spec = vol.get("volumeClaim")
        out.append(Wanted(i, given or pods_mod.generated_claim_name(job, i), spec if isinstance(spec, dict) else None,
                          not given))
    return out


def named_volumes(job: Obj, claims: list[Wanted]) -> list[Any] | None:
    """The job's spec.volumes with each generated claim name written in; None when none was generated."""
    generated = {w.index: w.name for w in claims if w.generated}
    if not generated:
        return None
    volumes = (job.get("spec") or {}).get("volumes") or []
    return [{**v, "volumeClaimName": generated[i]} if i in generated else v for i, v in enumerate(volumes)]


def claim(job: Obj, name: str, spec: Obj) -> Obj:
    """The PersistentVolumeClaim Volcano's createPVC makes: the volume's volumeClaim as its spec, the job its
    controller owner (the claim goes with the job)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": meta.namespace(job), "ownerReferences": [meta.owner_ref(job)]},
            "spec": dict(spec)}


def missing_message(name: str) -> str:
    """Volcano's error for a volumeClaimName that names no claim (checkPVCExist)."""
    return f"pvc {name} is not found, the job will be in the Pending state until the PVC is created"


def event_message(error: str) -> str:
    """Volcano's PVCError Event text (initiateJob)."""
    return f"Failed to create PVC, err: {error}"
