"""Standard input as a FILE: `-` (as `kubectl apply -f -`), named `<stdin>` in problems.

Standard input can be read once, so a command whose inputs are several (`vcctl run`'s FILES,
`--nodes` and `--scheduler-conf`) takes `-` for one of them only: `conflict()` says which ones
asked for it. Light on purpose: the client commands import it without the control plane.
"""
from __future__ import annotations

import sys

STDIN, STDIN_NAME = "-", "<stdin>"


def name(path: str) -> str:
    """How problems name a FILE: `<stdin>` for `-`, else the path as given."""
    return STDIN_NAME if path == STDIN else path


def read() -> bytes:
    """The whole of standard input; OSError if there is none to read (closed, or not a byte stream)."""
    try:
        return sys.stdin.buffer.read()
    except (AttributeError, ValueError) as e:
        raise OSError(str(e) or "standard input is not a byte stream") from None


def conflict(inputs: dict[str, object]) -> str | None:
    """None when at most one of `inputs` (what the user calls it -> its value: a path, or a list of
    paths) is `-`; else the message refusing the command, naming every input that is."""
    dashed = [what for what, value in inputs.items()
              if value == STDIN or (isinstance(value, (list, tuple)) and STDIN in value)]
    if len(dashed) < 2:
        return None
    joined = ", ".join(dashed[:-1]) + f" and {dashed[-1]}"
    return (f"standard input (-) can be read only once, but {joined} {'both' if len(dashed) == 2 else 'all'} "
            "ask for it: give all but one of them as files")
