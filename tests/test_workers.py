"""workers.Waiting: a forked helper that gets ready at once, waits for the rest of its arguments, and sends
back its result or its exception; and it never outlives the build that started it."""
import os

import pytest

from generator.errors import UserError
from generator.site.report import BuildError
from generator.site.workers import Waiting, can_fork

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

READY = []


def get_ready(early):
    READY.append(os.getpid())
    return early


def work(ready, late):
    return ready, late, [os.getpid()] == READY  # prepare ran in the helper, before the work


def fail(_, message):
    raise UserError(message)


def fail_getting_ready(_):
    raise UserError("site_src/pages/x.md: front matter: broken")


class Unpicklable(Exception):
    def __init__(self, a, b):  # pickle re-creates an exception from .args: this one cannot be
        super().__init__(f"{a}{b}")


def fail_oddly(_, __):
    raise Unpicklable("odd", "ly")


def test_the_helper_gets_ready_before_its_arguments_and_sends_its_result_back():
    helper = Waiting(get_ready, work, "early")
    helper.send({"late": 1})
    assert helper.result() == ("early", {"late": 1}, True)
    assert READY == []  # negative control: getting ready happened in the helper, not here


def test_its_exception_is_raised_here_whole_or_as_one_line():
    helper = Waiting(get_ready, fail, None)
    helper.send("site_src/pages/x.md: line 3: broken")
    with pytest.raises(UserError, match="^site_src/pages/x.md: line 3: broken$"):
        helper.result()
    helper = Waiting(get_ready, fail_oddly, None)
    helper.send(None)
    with pytest.raises(BuildError, match="Unpicklable: oddly"):
        helper.result()


def test_a_helper_that_fails_getting_ready_says_why_and_sending_to_it_does_not_hang():
    helper = Waiting(fail_getting_ready, work, None)
    helper.send(b"x" * 10_000_000)  # far more than a pipe holds: nobody reads it
    with pytest.raises(UserError, match="front matter: broken"):
        helper.result()


def test_a_helper_whose_arguments_never_come_ends_and_stop_leaves_no_process():
    helper = Waiting(get_ready, work, "early")
    pid = helper.pid
    os.close(helper._args_out)  # what the build dying does to the pipe
    helper._args_out = None
    with pytest.raises(BuildError, match="ended without its result"):
        helper.result()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)  # reaped: no zombie left
    stopped = Waiting(get_ready, work, "early")
    pid = stopped.pid
    stopped.stop()
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    stopped.stop()  # twice is harmless


def test_can_fork_says_no_while_another_thread_runs():
    import threading

    assert can_fork() is (threading.active_count() == 1)
    gate = threading.Event()
    thread = threading.Thread(target=gate.wait)
    thread.start()
    try:
        assert can_fork() is False
    finally:
        gate.set()
        thread.join()
