"""podattach against real files and processes: a log followed from where the client joined to the end of
the run (or the client's detaching), and a container's stdin pipe — kept open between clients, closed by
`stdinOnce` — as containerd's attach has them."""
import asyncio
import subprocess

import pytest

from vclite.executor import podattach, podexec


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


async def read_until(attachment, wanted):
    data = b""
    while wanted not in data:
        chunk = await attachment.read()
        assert chunk, f"the output ended before {wanted!r}: {data!r}"
        data += chunk
    return data


async def read_to_end(attachment):
    data = b""
    while chunk := await attachment.read():
        data += chunk
    return data


def attach(log_path, stdin=None, output=podexec.STDOUT):
    ended = []
    log = open(log_path, "rb")
    log.seek(0, 2)
    return podattach.Attachment(log, stdin, output, ended.append), ended


def test_the_output_from_where_the_client_joined_to_the_end_of_the_run(tmp_path):
    """History is not sent; what is written while attached is, and what the process wrote before it
    ended too; then the end (once)."""
    log = tmp_path / "main.log"
    log.write_bytes(b"history\n")

    async def go():
        a, ended = attach(log)
        with open(log, "ab") as w:
            w.write(b"new 1\n")
            w.flush()
            first = await read_until(a, b"new 1\n")
            w.write(b"new 2\n" + b"x" * 100_000 + b"\nlast\n")
        a.container_ended()
        rest = await read_to_end(a)
        assert await a.wait() == 0
        a.kill()   # (the session's end: nothing more happens)
        return first + rest, ended
    data, ended = run(go())
    assert data == b"new 1\nnew 2\n" + b"x" * 100_000 + b"\nlast\n" and len(ended) == 1


def test_a_detached_client_gets_no_more_output(tmp_path):
    log = tmp_path / "main.log"
    log.write_bytes(b"")

    async def go():
        a, ended = attach(log)
        reading = asyncio.ensure_future(a.read())
        await asyncio.sleep(podattach.FOLLOW_INTERVAL * 2)
        a.kill()
        with open(log, "ab") as w:
            w.write(b"after the detach\n")
        got = await reading, await a.read(), await a.wait()
        a.container_ended()   # (the container's end after the detach: nothing more)
        return got, ended == [a]
    assert run(go()) == ((b"", b"", 0), True)


def test_no_output_asked_for_still_ends_with_the_container(tmp_path):
    (tmp_path / "main.log").write_bytes(b"")

    async def go():
        a, _ = attach(tmp_path / "main.log", output=None)
        assert a.outputs == []
        waiting = asyncio.ensure_future(a.wait())
        await asyncio.sleep(podattach.FOLLOW_INTERVAL)
        assert not waiting.done()
        a.container_ended()
        return await waiting
    assert run(go()) == 0


async def cat_with_stdin(tmp_path, once):
    """`cat` reading a ContainerStdin as the runner starts it: opened before the start, its read end
    closed after."""
    stdin = podattach.ContainerStdin(once)
    await stdin.open()
    proc = await asyncio.create_subprocess_exec("cat", stdin=stdin.read_end, stdout=subprocess.PIPE)
    stdin.started()
    (tmp_path / "main.log").write_bytes(b"")
    return stdin, proc


@pytest.mark.parametrize("once", [False, True])
def test_stdin_is_kept_open_between_clients_unless_once(tmp_path, once):
    """Without stdinOnce, a client whose stdin ends is detached and the container's stdin stays open for
    the next; with it, the container reads end of file."""
    async def go():
        stdin, proc = await cat_with_stdin(tmp_path, once)
        a, ended = attach(tmp_path / "main.log", stdin)
        a.stdin.write(b"first\n")
        await a.stdin.drain()
        assert await proc.stdout.readline() == b"first\n"
        a.end_stdin()
        if once:
            assert await proc.stdout.read() == b"" and await proc.wait() == 0
            assert stdin.closed and not ended   # (the client stays, for the output of the container's end)
            b, _ = attach(tmp_path / "main.log", stdin)
            assert b.stdin is None   # (a later client's stdin goes nowhere)
        else:
            assert ended == [a] and not stdin.closed   # (detached: the container reads on)
            b, _ = attach(tmp_path / "main.log", stdin)
            b.stdin.write(b"second\n")
            await b.stdin.drain()
            assert await proc.stdout.readline() == b"second\n"
            stdin.close()   # (the runner, at the container's end)
            assert await proc.stdout.read() == b"" and await proc.wait() == 0
    run(go())


def test_a_once_client_that_goes_away_closes_the_containers_stdin(tmp_path):
    async def go():
        stdin, proc = await cat_with_stdin(tmp_path, once=True)
        a, _ = attach(tmp_path / "main.log", stdin)
        a.kill()   # (the connection ended without the client's stdin ending first)
        return await proc.stdout.read(), await proc.wait()
    assert run(go()) == (b"", 0)


def test_the_end_of_a_clients_stdin_does_nothing_to_a_container_without_stdin(tmp_path):
    (tmp_path / "main.log").write_bytes(b"")

    async def go():
        a, ended = attach(tmp_path / "main.log", stdin=None)
        assert a.stdin is None
        a.end_stdin()
        await asyncio.sleep(podattach.FOLLOW_INTERVAL)
        return ended
    assert run(go()) == []


def test_a_stdin_that_never_started_a_process_is_closed_whole(tmp_path):
    async def go():
        stdin = podattach.ContainerStdin(once=False)
        await stdin.open()
        stdin.close()
        return stdin.closed, stdin.read_end
    assert run(go()) == (True, -1)
