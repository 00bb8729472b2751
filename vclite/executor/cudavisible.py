"""Which of a host's GPUs a CUDA_VISIBLE_DEVICES value lets CUDA see, as CUDA reads the variable. Pure.

CUDA's documented rules, with the details PyTorch's own reading of the variable (written to agree with CUDA's,
and tested that way) pins down:
- A value whose first entry begins with `GPU-` names GPUs by UUID, one beginning with `MIG-` MIG devices; the
  list then ends at the first entry without that prefix (`GPU-8932f937,2` is the one GPU).
- Otherwise its entries are indices, each read as C's strtoul reads a number: blanks around it, a sign, then its
  leading digits (`1gpu` is 1, `+3` is 3, `-0` is 0). The list ends at the first entry that is not an index of
  one of the host's GPUs: no digits (`none`, an empty entry), a negative one (`-1`, the usual way to hide every
  GPU) or one past the last GPU (`0,5,1` on a host with two is GPU 0 alone).
- A UUID may be abbreviated: it names the GPU whose UUID begins with it (`GPU-8932f937`); the list ends at one
  that names no GPU, or more than one. A MIG device's id cannot be checked without asking the driver: each is
  taken as written.
- A GPU named twice (`0,1,0`, `GPU-8932f937,GPU-8932`): CUDA sees none at all.
"""
from __future__ import annotations

import re
from typing import Sequence

_INDEX = re.compile(r"\s*([+-]?)(\d+)")
UUID_PREFIX, MIG_PREFIX = "GPU-", "MIG-"


def visible(value: str, gpus: Sequence[str]) -> tuple[str, ...]:
    """The GPUs CUDA sees with CUDA_VISIBLE_DEVICES=`value` on a host whose GPUs are `gpus` (their UUIDs in
    CUDA's order, or "0", "1", … when only their number is known): an index as a plain number, a UUID as the
    host's whole UUID (as written when the UUIDs are unknown), a MIG id as written."""
    if not gpus:
        return ()
    entries = [entry.strip() for entry in value.split(",")]
    first = entries[0]
    if first.startswith((UUID_PREFIX, MIG_PREFIX)):
        prefix = first[:len(UUID_PREFIX)]
        listed = []
        for entry in entries:
            if not entry.startswith(prefix):
                break
            listed.append(entry)
        found = _by_uuid(listed, gpus) if prefix == UUID_PREFIX else listed
    else:
        found = _by_index(entries, len(gpus))
    return () if len(set(found)) < len(found) else tuple(found)


def _by_index(entries: list[str], count: int) -> list[str]:
    out = []
    for entry in entries:
        m = _INDEX.match(entry)
        if m is None:
            break
        n = int(m[2])
        if (m[1] == "-" and n) or n >= count:
            break
        out.append(str(n))
    return out


def _by_uuid(listed: list[str], gpus: Sequence[str]) -> list[str]:
    if not any(g.startswith(UUID_PREFIX) for g in gpus):   # (the UUIDs are unknown: as written)
        return listed
    out = []
    for entry in listed:
        matches = [g for g in gpus if g.startswith(entry)]
        if len(matches) != 1:
            break
        out.append(matches[0])
    return out
