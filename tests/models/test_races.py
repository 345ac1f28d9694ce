"""engine.races: `unless` (the one place where "await X unless Y happens first" is decided) and `to_the_end`."""

import asyncio

import pytest

from engine.races import to_the_end, unless


def run(coro):
    return asyncio.run(coro)


def test_the_work_finishes_first():
    async def go():
        ev = asyncio.Event()
        return await unless(asyncio.sleep(0.01, result="done"), ev.wait())
    assert run(go()) == (True, "done")


def test_the_interrupt_comes_first_and_the_work_is_cancelled_and_reaped():
    state = {}

    async def work():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            state["cancelled"] = True
            raise

    async def go():
        ev = asyncio.Event()
        asyncio.get_running_loop().call_later(0.01, ev.set)
        out = await unless(work(), ev.wait())
        return out, state.get("cancelled")
    assert run(go()) == ((False, None), True)


def test_the_works_error_propagates():
    async def boom():
        await asyncio.sleep(0)
        raise ValueError("page said no")

    async def go():
        return await unless(boom(), asyncio.Event().wait())
    with pytest.raises(ValueError, match="page said no"):
        run(go())


@pytest.mark.parametrize("stop_wins", [True, False])
def test_a_tie_goes_to_the_work_unless_the_interrupt_must_win(stop_wins):
    async def go():
        loop = asyncio.get_running_loop()
        work, stop = loop.create_future(), loop.create_future()
        work.set_result("late result")
        stop.set_result(None)  # both are done at the first look
        return await unless(work, stop, interrupt_wins_tie=stop_wins)
    assert run(go()) == ((False, None) if stop_wins else (True, "late result"))


def test_a_tie_lost_by_a_failed_call_does_not_leave_an_unretrieved_error(recwarn):
    async def go():
        loop = asyncio.get_running_loop()
        work, stop = loop.create_future(), loop.create_future()
        work.set_exception(RuntimeError("abandoned"))
        stop.set_result(None)
        out = await unless(work, stop, interrupt_wins_tie=True)
        return out, work._log_traceback  # False once the exception was retrieved
    assert run(go()) == ((False, None), False)


@pytest.mark.parametrize("waited", [True, False])
def test_clean_up_runs_to_its_end_however_often_it_is_cancelled(waited):
    """A run's `finally` releases what it holds (a grid session) with `to_the_end`: cancelled twice while it
    releases, and (not waited for) cancelled again by asyncio.run's shutdown, every step still ends."""
    done: list[str] = []

    async def release(what: str) -> None:
        await asyncio.sleep(0.05)
        done.append(what)

    async def failing() -> None:
        raise OSError("the browser was already gone")

    async def worker(started: asyncio.Event) -> None:
        try:
            started.set()
            await asyncio.Event().wait()
        finally:
            await to_the_end(lambda: release("browser closed"), failing, lambda: release("session deleted"))

    async def go() -> bool | None:
        started = asyncio.Event()
        task = asyncio.ensure_future(worker(started))
        await started.wait()
        task.cancel()
        await asyncio.sleep(0.01)
        task.cancel()  # (Ctrl+C cancels a fleet's runs; gather cancels them again)
        await asyncio.sleep(0.01)
        if not waited:
            return None  # asyncio.run cancels the task again as it shuts down
        with pytest.raises(asyncio.CancelledError):
            await task
        return task.cancelled()

    assert run(go()) in (True, None)
    assert done == ["browser closed", "session deleted"]


def test_a_clean_up_step_that_cancels_itself_is_left_at_once():
    """A step whose own work was cancelled (not the caller) is not started again until `limit` runs out: it
    would only cancel itself again. The steps after it still run."""
    done: list[str] = []
    starts = 0

    async def cancels_itself() -> None:
        nonlocal starts
        starts += 1
        inner = asyncio.get_running_loop().create_future()
        inner.cancel()
        await inner

    async def release() -> None:
        done.append("session deleted")

    async def go() -> float:
        loop = asyncio.get_running_loop()
        t = loop.time()
        await to_the_end(cancels_itself, release, limit=5.0)
        return loop.time() - t

    assert run(go()) < 1.0
    assert starts == 1 and done == ["session deleted"]
