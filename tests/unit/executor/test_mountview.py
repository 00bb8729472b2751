"""mountview: a container's volumeMounts and termination message path at their own paths, in real mount namespaces.

The decisions are table-driven; the views themselves are made for real (the script run as the runner runs it) and
looked at from inside and from the host: what the program sees, what reaches the host, what must not.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid

import pytest

from vclite.executor import mountview
from vclite.executor.mountview import Bind, Spec

needs_views = pytest.mark.skipif(mountview.available() is not None,
                                 reason=f"no mount namespace on this host: {mountview.available()}")


@pytest.mark.parametrize("spec, program", [
    pytest.param(Spec("/r", "/w", ()), ["true"], id="no-binds"),
    pytest.param(Spec("/r", "/", (Bind("/src", "/data"), Bind("/f", "/dev/termination-log", True))),
                 ["sh", "-c", "echo -- x"], id="binds-and-a-program-with-dashes"),
])
def test_encode_and_decode_are_inverse(spec, program):
    assert mountview.decode([*mountview.encode(spec), "--", *program]) == (spec, program)


@pytest.mark.parametrize("args", [
    pytest.param(["/r", "/w", "true"], id="no-separator"),
    pytest.param(["/r", "--", "true"], id="no-cwd"),
    pytest.param(["/r", "/w", "--"], id="no-program"),
    pytest.param(["/r", "/w", "--bind", "/src", "--", "true"], id="bind-without-target"),
    pytest.param(["/r", "/w", "--mount", "/src", "/data", "--", "true"], id="unknown-flag"),
    pytest.param(["/r", "/w", "--bind", "/src", "data", "--", "true"], id="relative-target"),
])
def test_decode_refuses_what_encode_cannot_make(args):
    with pytest.raises(ValueError):
        mountview.decode(args)


def test_the_script_says_why_it_refuses_its_arguments():
    done = subprocess.run(mountview.command(Spec("/r", "/w", ()), ["true"])[:4] + ["/r", "--", "true"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "mountview: expected ROOT CWD" in done.stderr


BINDS = (Bind("/h/data", "/data"), Bind("/h/cache", "/data/cache"), Bind("/h/term", "/dev/termination-log"))


@pytest.mark.parametrize("path, host", [
    pytest.param("/data", "/h/data", id="the-mount-point"),
    pytest.param("/data/x/y", "/h/data/x/y", id="inside-a-mount"),
    pytest.param("/data/cache/z", "/h/cache/z", id="the-deepest-mount-wins"),
    pytest.param("/data/cachez", "/h/data/cachez", id="a-name-that-only-starts-like-a-mount"),
    pytest.param("/database", "/database", id="not-a-prefix-on-a-path-boundary"),
    pytest.param("/opt/vclite-test/x", "/opt/vclite-test/x", id="the-hosts-own"),
    pytest.param("/data/./x/../y", "/h/data/y", id="normalized"),
    pytest.param("/dev/termination-log", "/h/term", id="a-file-bind"),
])
def test_host_path(path, host):
    assert mountview.host_path(path, BINDS) == host



@pytest.mark.parametrize("mount, path", [
    pytest.param("real/tools", "link/tools/run.sh", id="a-program-named-through-a-link-to-the-mount"),
    pytest.param("link/tools", "real/tools/run.sh", id="a-mount-point-named-through-a-link"),
    pytest.param("link/tools", "link/tools/run.sh", id="both-through-the-link"),
    pytest.param("real/tools", "real/../link/tools/run.sh", id="dot-dot-then-a-link"),
])
def test_host_path_follows_symbolic_links_as_the_view_has_them(tmp_path, mount, path):
    """/var/run -> /run, /lib -> usr/lib: a volume at /run/tools is /var/run/tools too (the view is made through
    the links), so its program is found by either name."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to("real")
    vol = tmp_path / "vol"
    binds = (Bind(str(vol), f"{tmp_path}/{mount}"),)
    assert mountview.host_path(f"{tmp_path}/{path}", binds) == f"{vol}/run.sh"


def test_host_path_follows_a_link_inside_a_volume(tmp_path):
    (tmp_path / "vol").mkdir()
    (tmp_path / "vol" / "latest").symlink_to("/models/v2")
    binds = (Bind(str(tmp_path / "vol"), "/models"),)
    assert mountview.host_path("/models/latest/weights", binds) == f"{tmp_path}/vol/v2/weights"

def test_outer_mount_points_are_mounted_first():
    binds = [Bind("/a", "/data/cache/x"), Bind("/b", "/data"), Bind("/c", "/data/cache"), Bind("/d", "/etc")]
    assert [b.target for b in mountview.ordered(binds)] == ["/data", "/etc", "/data/cache", "/data/cache/x"]


@pytest.mark.parametrize("f_flag, flags", [
    pytest.param(0, 0, id="none"),
    pytest.param(1 | 2 | 4 | 8, mountview.MS_RDONLY | mountview.MS_NOSUID | mountview.MS_NODEV | mountview.MS_NOEXEC,
                 id="locked-ones"),
    pytest.param(4096, mountview.MS_RELATIME, id="relatime-has-another-bit"),
    pytest.param(1024 | 2048, mountview.MS_NOATIME | mountview.MS_NODIRATIME, id="atime"),
    pytest.param(64, 0, id="mandatory-locks-not-kept"),
])
def test_mount_flags_kept_by_a_read_only_remount(f_flag, flags):
    assert mountview.mount_flags(f_flag) == flags


@pytest.mark.parametrize("container, wanted", [
    pytest.param({"command": ["sh", "-c", "true"]}, False, id="nothing-to-map"),
    pytest.param({"volumeMounts": [{"name": "v", "mountPath": "/data"}]}, True, id="a-volume-mount"),
    pytest.param({"volumeMounts": []}, False, id="an-empty-list"),
    pytest.param({"command": ["sh", "-c", "echo 1 > /dev/termination-log"]}, True, id="writes-the-default-path"),
    pytest.param({"args": ["echo 1 >> /dev/termination-log"]}, True, id="in-args"),
    pytest.param({"terminationMessagePath": "/out/result"}, True, id="a-path-of-its-own"),
    pytest.param({"terminationMessagePath": "/dev/termination-log", "command": ["run"]}, False,
                 id="the-default-written-out-not-named"),
    pytest.param({"command": ["sh", "-c", 'echo 1 > "$TERMINATION_MESSAGE_PATH"']}, False, id="the-variable"),
    pytest.param({"command": ["sh", "-c", 'echo 1 > "${TERMINATION_MESSAGE_PATH:-/dev/termination-log}"']}, False,
                 id="the-variable-with-the-path-as-its-fallback"),
])
def test_which_containers_want_a_view(container, wanted):
    assert mountview.wants_view(container) is wanted


def test_turned_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(mountview.OFF, "off")
    assert mountview.available() == f"{mountview.OFF}=off"


# ---- real views ---------------------------------------------------------------------------------------------
def in_view(tmp_path, binds, script, cwd="/", user=None):
    root = tmp_path / f"root-{uuid.uuid4().hex[:6]}"
    root.mkdir()
    argv = mountview.command(Spec(str(root), cwd, tuple(binds)), ["sh", "-c", script])
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd="/")


@pytest.fixture
def unique():
    """A top-level name no host has (a mount point made only in the view)."""
    name = f"/vclite-test-{uuid.uuid4().hex[:10]}"
    yield name
    assert not os.path.lexists(name), "made on the host"


@needs_views
def test_a_volume_at_a_path_the_host_lacks(tmp_path, unique):
    vol = tmp_path / "vol"
    vol.mkdir()
    (vol / "in").write_text("from the volume\n")
    done = in_view(tmp_path, [Bind(str(vol), unique)], f"cat {unique}/in; echo out > {unique}/out; ls /usr/bin/env")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "from the volume\n/usr/bin/env\n"
    assert (vol / "out").read_text() == "out\n"


@needs_views
def test_the_termination_message_file_at_dev_termination_log(tmp_path):
    term = tmp_path / "term"
    term.write_bytes(b"")
    done = in_view(tmp_path, [Bind(str(term), "/dev/termination-log")],
                   "echo 0.93 > /dev/termination-log; echo x > /dev/null; head -c 1 /dev/zero | wc -c")
    assert done.returncode == 0, done.stderr
    assert term.read_text() == "0.93\n" and done.stdout.strip() == "1"   # (the host's devices still work)
    assert not os.path.exists("/dev/termination-log") or os.path.getsize("/dev/termination-log") == 0


@needs_views
def test_a_read_only_mount_refuses_writes(tmp_path, unique):
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "app.yaml").write_text("lr: 0.1\n")
    done = in_view(tmp_path, [Bind(str(cfg), unique, read_only=True)],
                   f"cat {unique}/app.yaml; echo x > {unique}/new && echo wrote")
    assert done.stdout == "lr: 0.1\n" and "Read-only file system" in done.stderr
    assert sorted(os.listdir(cfg)) == ["app.yaml"]


@needs_views
def test_a_mount_point_inside_a_host_directory_shadows_only_that_directory(tmp_path):
    """/etc/config on a host whose /etc has no config: /etc is shadowed, its entries still the host's (a write to
    an existing file reaches it), a new file beside the mount point stays in the view."""
    host_dir = tempfile.mkdtemp(prefix="vclite-shadow-", dir=tmp_path)
    os.chmod(host_dir, 0o755)
    with open(os.path.join(host_dir, "existing"), "w") as fh:
        fh.write("host\n")
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    (cfg / "app.yaml").write_text("lr: 0.1\n")
    script = (f"cat {host_dir}/config/app.yaml {host_dir}/existing; echo changed > {host_dir}/existing; "
              f"echo new > {host_dir}/beside; cat {host_dir}/beside")
    done = in_view(tmp_path, [Bind(str(cfg), f"{host_dir}/config")], script)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "lr: 0.1\nhost\nnew\n"
    assert open(os.path.join(host_dir, "existing")).read() == "changed\n"
    assert sorted(os.listdir(host_dir)) == ["existing"]   # (no mount point, no new file on the host)


@needs_views
@pytest.mark.parametrize("read_only, order", [
    pytest.param(False, "on-the-entry-first", id="entry-first"),
    pytest.param(False, "beside-first", id="beside-first"),
    pytest.param(True, "on-the-entry-first", id="read-only-entry-first"),
])
def test_a_mount_on_a_host_entry_survives_a_mount_point_made_beside_it(tmp_path, read_only, order):
    """/dev/shm (an existing host directory) and /dev/termination-log (a file /dev lacks: /dev gets shadowed):
    the volume stays at /dev/shm, whichever is mounted first (a shadow made later used to bring the host's
    /dev/shm back over it, and the writes went to the host)."""
    host_dir = tempfile.mkdtemp(prefix="vclite-beside-", dir=tmp_path)
    os.chmod(host_dir, 0o755)
    os.mkdir(os.path.join(host_dir, "shm"))
    vol, term = tmp_path / "vol", tmp_path / "term"
    vol.mkdir()
    (vol / "in").write_text("vol\n")
    term.write_bytes(b"")
    binds = [Bind(str(vol), f"{host_dir}/shm", read_only), Bind(str(term), f"{host_dir}/termination-log")]
    if order == "beside-first":
        binds.reverse()
    script = (f"cat {host_dir}/shm/in; echo m > {host_dir}/termination-log; "
              f"echo w > {host_dir}/shm/w 2>/dev/null || echo refused")
    done = in_view(tmp_path, binds, script)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "vol\n" + ("refused\n" if read_only else "")
    assert term.read_text() == "m\n" and os.listdir(os.path.join(host_dir, "shm")) == []
    assert sorted(os.listdir(vol)) == (["in"] if read_only else ["in", "w"])


@needs_views
def test_a_mount_inside_another_volume_makes_its_mount_point_in_that_volume(tmp_path, unique):
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    cache.mkdir()
    done = in_view(tmp_path, [Bind(str(cache), f"{unique}/cache"), Bind(str(data), unique)],
                   f"echo c > {unique}/cache/c; echo d > {unique}/d")
    assert done.returncode == 0, done.stderr
    assert (cache / "c").read_text() == "c\n" and (data / "d").read_text() == "d\n"
    assert sorted(os.listdir(data)) == ["cache", "d"]   # (as runc makes it: in the outer volume)


@needs_views
def test_a_path_through_a_symbolic_link_is_followed_in_the_view(tmp_path):
    base = tempfile.mkdtemp(prefix="vclite-link-", dir=tmp_path)
    os.chmod(base, 0o755)
    os.mkdir(os.path.join(base, "real"))
    os.symlink(os.path.join(base, "real"), os.path.join(base, "link"))
    vol = tmp_path / "vol"
    vol.mkdir()
    done = in_view(tmp_path, [Bind(str(vol), f"{base}/link/data")], f"echo x > {base}/real/data/f")
    assert done.returncode == 0, done.stderr
    assert (vol / "f").read_text() == "x\n"
    assert os.listdir(os.path.join(base, "real")) == []


@needs_views
def test_the_working_directory_and_a_file_mount(tmp_path, unique):
    wd, conf = tmp_path / "wd", tmp_path / "settings.json"
    wd.mkdir()
    conf.write_text("{}\n")
    done = in_view(tmp_path, [Bind(str(wd), unique), Bind(str(conf), f"{unique}/conf/settings.json")],
                   "pwd; cat conf/settings.json; echo here > made-here", cwd=unique)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{unique}\n{{}}\n"
    assert (wd / "made-here").read_text() == "here\n"


@needs_views
def test_a_program_the_view_lacks_fails_with_127_and_says_why(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    done = subprocess.run(mountview.command(Spec(str(root), "/", ()), ["/no/such/program-vclite"]),
                          capture_output=True, text=True)
    assert done.returncode == mountview.FAILED
    assert "vclite: exec '/no/such/program-vclite': No such file or directory" in done.stderr


@needs_views
def test_a_bind_whose_source_is_gone_fails_before_the_program(tmp_path, unique):
    done = in_view(tmp_path, [Bind(str(tmp_path / "gone"), unique)], "echo ran")
    assert done.returncode == mountview.FAILED and done.stdout == ""
    assert "cannot give the container its volumeMounts' paths" in done.stderr



@needs_views
@pytest.mark.parametrize("binds, program, report", [
    pytest.param([], ["true"], None, id="exec-closes-it-unwritten"),
    pytest.param([("gone", "/data")], ["true"], {"target": "/data", "error": "{tmp}/gone: no such file or directory"},
                 id="a-missing-source"),
    pytest.param([("dir", "/etc/hostname")], ["true"],
                 {"target": "/etc/hostname", "error": "a directory ({tmp}/dir) cannot be mounted on a file "
                                                      "(/etc/hostname)"}, id="a-directory-on-a-file"),
    pytest.param([], ["/no/such/program-vclite"],
                 {"program": "/no/such/program-vclite", "errno": 2, "error": "No such file or directory"},
                 id="an-exec-error"),
])
def test_the_script_reports_what_failed_on_its_descriptor(tmp_path, binds, program, report):
    (tmp_path / "dir").mkdir()
    root = tmp_path / "root"
    root.mkdir()
    r, w = os.pipe()
    try:
        spec = Spec(str(root), "/", tuple(Bind(str(tmp_path / s), t) for s, t in binds))
        done = subprocess.run(mountview.command(spec, program, report=w), pass_fds=(w,), capture_output=True)
        os.close(w)
        with os.fdopen(r, "rb") as fh:
            written = fh.read()
    finally:
        for fd in (r, w):
            try:
                os.close(fd)
            except OSError:
                pass
    assert done.returncode == (0 if report is None else mountview.FAILED)
    expected = None if report is None else {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else v
                                            for k, v in report.items()}
    assert (json.loads(written) if written else None) == expected

@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None,
                    reason="needs root to become another user (setpriv)")
@needs_views
def test_another_user_gets_the_view_through_a_user_namespace(unique):
    """Not root: unshare makes a user namespace too (the user mapped to itself); the program runs as that user
    with no capability, and what it writes is that user's."""
    base = tempfile.mkdtemp(prefix="vclite-user-", dir="/tmp")   # (not under a 0700 directory of root's)
    try:
        os.chmod(base, 0o755)
        vol = os.path.join(base, "vol")
        os.mkdir(vol)
        os.chown(vol, 65534, 65534)
        root = os.path.join(base, "root")
        os.mkdir(root)
        argv = mountview.command(Spec(root, "/", (Bind(vol, unique),)),
                                 ["sh", "-c", f"id -u; echo x > {unique}/f; grep CapEff /proc/self/status"])
        done = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv],
                              capture_output=True, text=True, timeout=60, cwd="/")
        if "Operation not permitted" in done.stderr:
            pytest.skip(f"unprivileged user namespaces are not allowed here: {done.stderr.strip()}")
        assert done.returncode == 0, done.stderr
        uid, caps = done.stdout.splitlines()[0], done.stdout.splitlines()[1]
        assert uid == "65534" and caps.split()[1] == "0000000000000000"
        assert os.stat(os.path.join(vol, "f")).st_uid == 65534
    finally:
        shutil.rmtree(base)


def test_the_script_needs_only_the_standard_library():
    """It runs with `python -I -S` before vclite is importable: nothing of vclite's, nothing installed."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c",
                           f"import runpy, sys; runpy.run_path({mountview.__file__!r}); "
                           "print(sorted(m for m in sys.modules if m.startswith('vclite') or m == 'dataclasses'))"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
