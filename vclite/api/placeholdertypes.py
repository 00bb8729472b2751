"""A JobTemplate's integer and boolean fields written as flow placeholders, typed once filled in.

A JobTemplate may hold a placeholder where a vcjob has a number: `replicas: "{{item}}"`,
`minAvailable: "{{params.n}}"` (JobTemplate admission leaves such a field to the vcjob a flow makes,
and `vcctl controller --print-crds` makes those fields int-or-string). Placeholders fill in text, so the
vcjob would get the string "3" and be refused (`must be of type integer`): `typed` gives each such
field of the vcjob's spec — by kindschemas.JOB_SPEC, Volcano's JobSpec: the job's and its tasks'
integers, their partitionPolicy and networkTopology — the integer or boolean its text reads as
(`3`, `-1`, `true`); a text that reads as neither stays a string, which vcjob admission then refuses,
naming the field. Fields written as they should be, and the open pod template, are left alone. Pure.
"""
from __future__ import annotations

import re
from typing import Any

from vclite.api import flowtemplate, kindschemas
from vclite.api.schemabuild import BOOL, INT, LIST, OBJ, Field

_INTEGER = re.compile(r"[+-]?[0-9]+")
_BOOLEANS = {"true": True, "false": False}


def typed(before: Any, after: Any) -> Any:
    """`after`, a JobSpec with its placeholders filled in (flowtemplate.substitute: a fresh copy, changed here),
    with each integer or boolean field that held a placeholder in `before` (the same spec before) typed."""
    return _walk(before, after, kindschemas.JOB_SPEC)


def _walk(before: Any, after: Any, fields: tuple[Field, ...]) -> Any:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return after
    for f in fields:
        old, new = before.get(f.name), after.get(f.name)
        if f.shape in (INT, BOOL):
            if isinstance(old, str) and isinstance(new, str) and flowtemplate.PLACEHOLDER.search(old):
                after[f.name] = _scalar(new, f.shape)
        elif f.shape == OBJ and f.fields:
            _walk(old, new, f.fields)
        elif f.shape == LIST and f.fields and isinstance(old, list) and isinstance(new, list):
            for x, y in zip(old, new):
                _walk(x, y, f.fields)
    return after


def _scalar(text: str, shape: str) -> Any:
    """The integer or boolean `text` reads as; `text` itself when it reads as none."""
    word = text.strip()
    if shape == INT and _INTEGER.fullmatch(word):
        return int(word)
    if shape == BOOL and word in _BOOLEANS:
        return _BOOLEANS[word]
    return text
