"""Structured logs on stderr: one JSON object per line (`--log-format json`) or plain text lines.

Every record carries time (RFC 3339, UTC, milliseconds), level, logger and message; fields given
through `extra={"fields": {...}}` (the request log: method, path, code, duration…) are merged
into the JSON object, or appended as `key=value` in text (unless `extra={"text_fields": False}`:
the request log's message already says it all in one line). `configure` installs one handler on the
`vclite` logger (idempotent: a second call replaces it).
"""
from __future__ import annotations

import datetime
import json
import logging
import sys
from typing import Any

HANDLER_NAME = "vclite-server"


def _time(record: logging.LogRecord) -> str:
    t = datetime.datetime.fromtimestamp(record.created, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {"time": _time(record), "level": record.levelname.lower(), "logger": record.name,
                               "msg": record.getMessage()}
        out.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str, separators=(",", ":"))


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        fields = (getattr(record, "fields", None) or {}) if getattr(record, "text_fields", True) else {}
        extra = " ".join(f"{k}={v}" for k, v in fields.items())
        line = f"{_time(record)} {record.levelname.lower():5} {record.getMessage()}" + (f" {extra}" if extra else "")
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def configure(fmt: str = "text", level: int = logging.INFO) -> None:
    root = logging.getLogger("vclite")
    for h in list(root.handlers):
        if h.get_name() == HANDLER_NAME:
            root.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler.set_name(HANDLER_NAME)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False
