"""Two helper processes for a cold build's slow work: training the playground's model pairs while this process
computes the facts, then drawing the figures.

Only a build with something to compute starts them: a build that finds everything in the cache stays one
process. They start from a fresh interpreter (multiprocessing's forkserver), not as copies of the build, and
they end with it: each holds the reading end of a pipe whose only writer is the build, and leaves as soon as
that pipe closes, which the kernel does when the build ends in any way, SIGKILL included.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future

WORKERS = 2


def leave_with_the_build(build) -> None:
    """Run in each helper as it starts: it ends when the build does (Ctrl-C is the build's to handle)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    def wait_for_the_end() -> None:
        build.poll(None)  # nothing is ever written: this returns when the build's end of the pipe closes
        os._exit(1)

    threading.Thread(target=wait_for_the_end, daemon=True).start()


def helper_starts(build) -> None:
    """Each helper's first steps: it leaves with the build, and imports matplotlib's canvas while the build computes
    the facts the figures wait for (longer than the playground takes), so the import costs the build no time."""
    leave_with_the_build(build)
    import matplotlib.backends.backend_agg  # noqa: F401 (imported for its effect)
    import matplotlib.figure  # noqa: F401


class Helpers:
    """submit(f, *args) runs f(*args) in a helper process, started on first use; on a machine of one core it runs
    f at once, here. Leaving the `with` block waits for what was handed over; after an error it cancels what has not
    started and waits for what has; after Ctrl-C it stops the helpers at once."""

    def __init__(self, workers: int = WORKERS) -> None:
        self.workers = min(workers, os.cpu_count() or 1)
        self.pool = None  # a concurrent.futures.ProcessPoolExecutor, once started
        self.pipe = None  # (the helpers' end, the build's)

    def submit(self, function: Callable, *args) -> Future:
        if self.workers < 2:
            done: Future = Future()
            try:
                done.set_result(function(*args))
            except Exception as exc:  # handed to whoever reads the result, as the pool would
                done.set_exception(exc)
            return done
        if self.pool is None:
            self.pool, self.pipe = start_pool(self.workers)
        with ctrl_c_held():  # a task handed over may start a helper: see ctrl_c_held
            return self.pool.submit(function, *args)

    def __enter__(self) -> Helpers:
        return self

    def __exit__(self, error_type, *_) -> None:
        if self.pool is None:
            return
        if error_type is not None and not issubclass(error_type, Exception):  # Ctrl-C: they leave as the pipe closes
            self.close_pipe()
        # After an error the running tasks finish: a helper stopped while it sends its result would leave the pool
        # reading the rest of that result forever (a build hung in shutdown, seen in CI when the other corpus's
        # training was being sent back as the build failed on the first).
        self.pool.shutdown(wait=True, cancel_futures=True)  # none outlives this, nor starts after it
        self.close_pipe()

    def close_pipe(self) -> None:
        for end in self.pipe:
            end.close()  # a second close does nothing


@contextlib.contextmanager
def ctrl_c_held():
    """Ctrl-C held back while a helper may be starting, then acted on: a helper left half-started by a build that
    ended would print a traceback of its own. Processes started meanwhile (the forkserver, the helpers it forks)
    inherit SIGINT blocked, so a Ctrl-C at the terminal stops the build alone, and the helpers with it. Both are
    needed: the mask alone does not stop the signal reaching this process through its other threads (numpy's)."""
    if threading.current_thread() is not threading.main_thread():  # only the main thread handles signals
        yield
        return
    pressed = []
    handler = signal.signal(signal.SIGINT, lambda *_: pressed.append(True))
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        signal.signal(signal.SIGINT, handler)
        if pressed and callable(handler):
            handler(signal.SIGINT, None)  # Python's own handler raises KeyboardInterrupt


def start_pool(workers: int):
    """A pool of helpers that start from multiprocessing's forkserver, and the pipe they watch. Imported here: a
    build that needs no helper does without."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()  # first: starting it unblocks Ctrl-C, which submit blocks while it hands over
    context = multiprocessing.get_context("forkserver")
    pipe = context.Pipe(duplex=False)
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=helper_starts, initargs=(pipe[0],))
    return pool, pipe
