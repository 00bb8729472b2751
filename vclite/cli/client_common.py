"""What every `vcctl` client command shares: the `-s/--master` and `-k/--kubeconfig` options,
connecting, Volcano's error convention, ages, tables, describe output, and reading `-f` files.

Volcano's vcctl prints a failed command as `Failed to <sub> <group>: <error>` on stdout and exits
with -1 (255); `fail()` does the same. Output helpers are pure functions (the caller passes `now`,
taken from the injected clock `clock_of(ctx)` — tests put a clock in the click context object).
This module must not know any particular kind's columns.
"""
from __future__ import annotations

import datetime as dt
import json
import pathlib
import re
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterable

import click

from vclite.api import yamlio
from vclite.cli import gotyped, stdinput
from vclite.lib import clock as clock_mod
from vclite.lib import errors

if TYPE_CHECKING:
    from vclite.kube import client as kube_client

Obj = dict[str, Any]
EXIT_FAILED = 255  # Go's os.Exit(-1)


class CommandError(Exception):
    """A usage problem reported in Volcano's `Failed to …` form (a missing name, a bad flag value)."""


# ---- options (as Volcano's util.InitFlags) ---------------------------------------------------------
def common_options(fn: Callable) -> Callable:
    fn = click.option("-k", "--kubeconfig", default="", metavar="PATH",
                      help="(optional) absolute path to the kubeconfig file (default: $KUBECONFIG, "
                           "the `vcctl server` kubeconfig, ~/.kube/config).")(fn)
    return click.option("-s", "--master", default="", metavar="URL", help="the address of apiserver")(fn)


def namespace_option(what: str) -> Callable:
    return click.option("-n", "--namespace", default="default", show_default=True, help=f"the namespace of {what}")


def name_option(what: str) -> Callable:
    return click.option("-N", "--name", default="", help=f"the name of {what}")


# ---- connecting and failing ------------------------------------------------------------------------
# The HTTP client and kubeconfig reader (http.client, ssl…) load only when a command connects:
# `vcctl run` and `vcctl validate` never do, and start about 50 ms sooner for it.
def connect(master: str, kubeconfig_path: str, typed: bool = True) -> Any:
    """The API client of a command; `typed` (vcctl's client commands): reads decoded as Volcano's typed Go
    clientset decodes them (TypedClient). `vcctl controller` takes the plain client."""
    from vclite.kube import client as kube_client
    from vclite.kube import kubeconfig
    client = kube_client.HttpClient(kubeconfig.load(kubeconfig_path or None, master or None))
    return TypedClient(client) if typed else client


class TypedClient:
    """An API client whose `get`, `list` and `list_with_version` return only objects that decode into their kind's
    Go type (kindtypes.py), as Volcano's vcctl reads through its typed clientsets: one mistyped stored field (a
    `status` that is a string, `tasks` that is an object) fails the command with CommandError in the decoder's
    words, and a list fails whole, before anything is printed. A watch's events are the caller's to check
    (`typed`: client_live's live view). Every other method is the client's own."""

    def __init__(self, client: Any):
        from vclite.cli import kindtypes
        self._client, self._types, self._holes = client, kindtypes.BY_KIND, kindtypes.PLACEHOLDERS

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get(self, kind: Any, namespace: str, name: str) -> Obj:
        return self._decoded(kind, self._client.get(kind, namespace, name))

    def list(self, kind: Any, *args: Any, **kwargs: Any) -> list[Obj]:
        return [self._decoded(kind, obj) for obj in self._client.list(kind, *args, **kwargs)]

    def list_with_version(self, kind: Any, *args: Any, **kwargs: Any) -> tuple[list[Obj], str]:
        objects, version = self._client.list_with_version(kind, *args, **kwargs)
        return [self._decoded(kind, obj) for obj in objects], version

    def typed(self, kind: Any, obj: Obj) -> Obj:
        """`obj` (of `kind`, e.g. a watch event's), once it decodes into its Go type; else CommandError."""
        return self._decoded(kind, obj)

    def _decoded(self, kind: Any, obj: Obj) -> Obj:
        typ = self._types.get(kind)
        if typ is not None:
            decoded(obj, typ, kind.kind, self._holes.get(kind))
        return obj


def decoded(obj: Obj, typ: gotyped.GoType, kind: str, holes: re.Pattern[str] | None = None) -> None:
    """CommandError in the Go decoder's words (`json: cannot unmarshal string into Go struct field Job.status of
    type v1alpha1.JobStatus (default/j: 'weird')`) when `obj` does not decode into `typ` (`holes`: gotyped.mismatch's,
    the flow placeholders a JobTemplate or a JobFlow's patch may hold where a number goes)."""
    found = gotyped.mismatch(obj, typ, holes=holes)
    if found is None:
        return
    if not found.path:   # (the API never serves an object that is not a JSON object)
        raise CommandError(f"json: cannot unmarshal {_go_type_of(obj)} into Go value of type {found.go_type}")
    if found.words:
        raise CommandError(f"{found.words} ({kind}.{'.'.join(found.path)}{_whose(obj, found.value)})")
    raise _undecodable(dict(obj, kind=kind), found.path, found.value, found.go_type)


def _config_error() -> type[Exception]:
    from vclite.kube import kubeconfig
    return kubeconfig.ConfigError


def clock_of(ctx: click.Context) -> clock_mod.Clock:
    obj = ctx.find_root().obj
    clock = obj.get("clock") if isinstance(obj, dict) else None
    return clock or clock_mod.RealClock()


def fail(sub: str, group: str, err: BaseException | str) -> None:
    """Volcano's util.CheckError: print `Failed to <sub> <group>: <err>` on stdout, exit 255 (a root command
    such as `vcancel` passes neither: `Failed to: <err>`)."""
    message = err.message if isinstance(err, errors.ApiError) else str(err)
    words = "".join(f" {w}" for w in (sub, group) if w)
    click.echo(f"Failed to{words}: {message}")
    sys.exit(EXIT_FAILED)


FILE_ERRORS = (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)


def run_checked(sub: str, group: str, fn: Callable[[], Any]) -> Any:
    """Run a command body; any API, kubeconfig, usage or file error ends it through `fail()`."""
    try:
        return fn()
    except (errors.ApiError, CommandError, _config_error()) as exc:
        fail(sub, group, exc)
    except FILE_ERRORS as exc:  # Go's os.ReadFile wording
        fail(sub, group, f"open {exc.filename}: {(exc.strerror or str(exc)).lower()}")


# ---- time -----------------------------------------------------------------------------------------
def human_duration(seconds: float, zero_days: bool = False) -> str:
    """See vclite.lib.clock.human_duration."""
    return clock_mod.human_duration(seconds, zero_days)


# ---- stored fields as a typed Go client reads them ---------------------------------------------------
# vcctl's Go client decodes each object into Volcano's types: an object stored with a field of the wrong type
# (by an older version, or written into the store by hand; the API serves stored objects as they are) fails
# the whole command with the decoder's error, not with a traceback. These read such a field the same way.
def _go_type_of(value: Any, go_type: str = "") -> str:
    """The JSON value's kind in the decoder's words; a number that no integer type takes is named with its text
    (`number 2.5`, as Go's decoder says for an int field)."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)) and go_type.startswith(("int", "uint")):
        return f"number {json.dumps(value)}"
    return {str: "string", dict: "object", list: "array", float: "number", int: "number"}.get(type(value), "value")


def _whose(obj: Obj, value: Any) -> str:
    """`, <namespace/name of the object>: <the value>` (vclite's words after the decoder's: which object), from
    whatever its metadata holds."""
    md = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    ns, name = md.get("namespace"), md.get("name")
    who = (f"{ns}/" if ns and isinstance(ns, str) else "") + (name if isinstance(name, str) else "")
    return f", {who}: {value!r}" if who else f", {value!r}"


def _undecodable(obj: Obj, path: tuple[str, ...], value: Any, go_type: str) -> CommandError:
    return CommandError(f"json: cannot unmarshal {_go_type_of(value, go_type)} into Go struct field "
                        f"{obj.get('kind') or 'Object'}.{'.'.join(path)} of type {go_type} ({_whose(obj, value)[2:]})")


def _at(obj: Obj, path: tuple[str, ...]) -> Any:
    value: Any = obj
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return value


def stored_int(obj: Obj, *path: str, value: Any = None) -> int:
    """The integer at `path` of `obj` (or `value`, read from there), 0 when unset; CommandError in the Go
    decoder's words when it is not an integer."""
    value = _at(obj, path) if value is None else value
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():   # (JSON has one number type: 2.0 is 2 to Go)
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and -(1 << 31) <= value < 1 << 31:
        return value
    raise _undecodable(obj, path, value, "int32")


def stored_str(obj: Obj, path: tuple[str, ...], go_types: tuple[str, ...]) -> str:
    """The string at `path` of `obj` ("" when unset); CommandError in the Go decoder's words when a struct on the way
    is not an object or the value not a string. `go_types`: the Go type of each step (`v1alpha1.JobFlowStatus`, …)."""
    value: Any = obj
    for i, key in enumerate(path):
        value = value.get(key)
        if value is None:
            return ""
        if not isinstance(value, dict if i < len(path) - 1 else str):
            raise _undecodable(obj, path[:i + 1], value, go_types[i])
    return value


def stored_time(obj: Obj, *path: str) -> dt.datetime | None:
    """The metav1.Time at `path` of `obj` (None when unset); CommandError in the Go decoder's words when it
    is not an RFC 3339 time."""
    value = _at(obj, path)
    if not value:
        return None
    if isinstance(value, str):
        try:
            return clock_mod.parse_time(value)
        except ValueError:
            pass
    raise _undecodable(obj, path, value, "v1.Time")


def _parse_go_time(timestamp: Any) -> dt.datetime:
    """An RFC 3339 time as metav1.Time decodes it; CommandError in Go's words when it is not one."""
    try:
        return clock_mod.parse_time(timestamp)
    except (ValueError, AttributeError, TypeError):
        raise CommandError(gotyped.time_words(timestamp)) from None


def age(timestamp: str | None, now: dt.datetime, zero_days: bool = False) -> str:
    """translateTimestampSince: `<unknown>` for a missing timestamp."""
    when = _parse_go_time(timestamp) if timestamp else None
    if when is None:
        return "<unknown>"
    return human_duration((now - when).total_seconds(), zero_days)


def go_time(timestamp: str | None) -> str:
    """A metav1.Time printed with Go's %s, in local time (`2024-01-02 03:04:05 +0000 UTC`; Go's
    zero time if unset)."""
    when = _parse_go_time(timestamp) if timestamp else None
    if when is None:
        return "0001-01-01 00:00:00 +0000 UTC"
    return when.astimezone().strftime("%Y-%m-%d %H:%M:%S %z %Z")


# ---- tables ---------------------------------------------------------------------------------------
def padded_table(headers: list[str], rows: Iterable[list[str]], spacing: int = 4) -> str:
    """Volcano's jobflow/jobtemplate tables: every column left-aligned, as wide as its widest cell
    plus `spacing` (the last column too, so lines end in spaces)."""
    rows = list(rows)
    widths = [max([len(h)] + [len(r[i]) for r in rows]) + spacing for i, h in enumerate(headers)]
    return "".join("".join(cell.ljust(w) for cell, w in zip(line, widths)) + "\n" for line in [headers, *rows])


# ---- describe output (sigs.k8s.io/yaml and encoding/json of the Go types: see gotyped.py) -------------
_GO_HTML_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028",
                                  "\u2029": "\\u2029"})


def go_json(obj: Obj) -> str:
    """encoding/json.MarshalIndent with two spaces, escaping as go_json_compact does."""
    return json.dumps(obj, indent=2, ensure_ascii=False).translate(_GO_HTML_ESCAPES) + "\n"


def go_json_compact(value: Any) -> str:
    """encoding/json.Marshal: no spaces, map keys sorted, UTF-8 kept, `<`, `>`, `&`, U+2028 and U+2029 escaped
    (`sh -c 'a && b'` in an annotation reads `a \\u0026\\u0026 b`)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False).translate(_GO_HTML_ESCAPES)


def describe_text(obj: Obj, fmt: str) -> str:
    """One object in `-o yaml|json`; Volcano prints `Unsupported format: <f>` (no newline) otherwise."""
    if fmt == "json":
        return go_json(obj)
    if fmt == "yaml":
        return gotyped.go_yaml(obj)
    return f"Unsupported format: {fmt}"


# ---- files ----------------------------------------------------------------------------------------
def read_documents(path: str) -> list[Obj]:
    """Every non-empty document of a YAML file (Volcano splits on `---` and skips blank ones).
    A file that is not UTF-8 text or not YAML is one CommandError naming the file, line and column
    of the first problem (as `vcctl validate` prints it), so nothing of the file is sent. A path
    of `-` is standard input, named `<stdin>`."""
    if not path:
        raise CommandError("a file must be given with -f/--file")
    data = stdinput.read() if path == stdinput.STDIN else pathlib.Path(path).read_bytes()
    path = stdinput.name(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise CommandError(f"{path}:{line}: not UTF-8 text: {exc.reason} at byte {exc.start}") from exc
    docs, problems = yamlio.parse_string(text, path, objects=False)
    if problems:
        more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
        raise CommandError(f"{problems[0]}{more}")
    out = []
    for doc in docs:
        if not isinstance(doc.obj, dict):
            raise CommandError(f"{path}:{doc.line}: document {doc.index} must be an object, "
                               f"not {errors.json_type(doc.obj)}")
        out.append(doc.obj)
    return out


def of_kind(docs: list[Obj], kind: str, api_version: str, path: str) -> list[Obj]:
    """The documents of one kind (a document without `kind` counts as that kind, as Volcano
    unmarshals every document into its type). Others are skipped with a note on stderr, so a
    file holding a JobFlow and its JobTemplates can be given to both `create` commands."""
    out = []
    for doc in docs:
        if doc.get("kind") in (None, "", kind):
            doc = dict(doc)
            doc["kind"], doc["apiVersion"] = kind, doc.get("apiVersion") or api_version
            out.append(doc)
        else:
            name = (doc.get("metadata") or {}).get("name", "")
            click.echo(f"{path}: skipped {doc.get('kind')} {name} (not a {kind})", err=True)
    return out
