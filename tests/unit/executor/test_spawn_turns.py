"""processes.SpawnTurns: at most `per_turn` process starts go on per turn of the event loop, the others in the
next turns in the order they came (a burst of pods starting leaves turns to the loop's other callbacks)."""
import asyncio

import pytest

from vclite.executor import processes


async def _through(gate, starters, cancel=()):
    """The turn of the event loop in which each starter got through `take()` (None: cancelled)."""
    loop = asyncio.get_running_loop()
    turn = [0]

    def tick():   # (runs once every turn of the loop)
        turn[0] += 1
        loop.call_soon(tick)
    loop.call_soon(tick)
    got = {}

    async def starter(i):
        await gate.take()
        got[i] = turn[0]
    tasks = [loop.create_task(starter(i)) for i in range(starters)]
    await asyncio.sleep(0)   # (all of them asking in the same turn)
    for i in cancel:
        tasks[i].cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return [got.get(i) for i in range(starters)]


@pytest.mark.parametrize("per_turn, starters, cancel, turns", [
    pytest.param(4, 3, (), [1, 1, 1], id="fewer-than-a-turn's"),
    pytest.param(4, 4, (), [1, 1, 1, 1], id="a-turn's-worth"),
    pytest.param(2, 5, (), [1, 1, 3, 3, 4], id="the-rest-in-later-turns-in-order"),
    pytest.param(2, 5, (2,), [1, 1, None, 3, 3], id="a-cancelled-one-takes-no-place"),
])
def test_at_most_per_turn_starts_go_on_in_one_turn_of_the_loop(per_turn, starters, cancel, turns):
    got = asyncio.run(_through(processes.SpawnTurns(per_turn), starters, cancel))
    firsts = [t for t in got if t is not None]
    assert firsts == sorted(firsts), got   # in the order they asked
    assert all(firsts.count(t) <= per_turn for t in set(firsts)), got
    assert [None if t is None else t - got[0] + 1 for t in got] == turns, got


def test_waiting_says_whether_starts_wait_for_a_turn():
    async def scenario():
        gate, seen = processes.SpawnTurns(1), []
        tasks = [asyncio.get_running_loop().create_task(gate.take()) for _ in range(3)]
        seen.append(gate.waiting())
        await asyncio.sleep(0)   # (one went through, two wait)
        seen.append(gate.waiting())
        await asyncio.gather(*tasks)
        seen.append(gate.waiting())
        return seen
    assert asyncio.run(scenario()) == [False, True, False]
