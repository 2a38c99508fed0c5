"""The ``weatkit`` process (``python -m weatkit``, the console script) ends without tearing the
interpreter down, but with what an ordinary exit gives: the exit status, every byte of stdout
and stderr, the ``atexit`` functions run, and other threads waited for."""

from __future__ import annotations

import subprocess
import sys

import weatkit


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *(["-c", code] if code else []), *args],
        capture_output=True,
        text=True,
        check=False,
    )


def _entry(argv: list[str], before: str = "") -> subprocess.CompletedProcess[str]:
    """``entry()`` with ``argv``, after the statements ``before``."""
    return _python(f"import sys\n{before}\nsys.argv = {['weatkit', *argv]!r}\n"
                   "from weatkit.cli import entry\nentry()")  # fmt: skip


def test_status_and_output_are_those_of_an_ordinary_exit() -> None:
    fast = _python("", "-m", "weatkit", "lists")
    ordinary = _python("from weatkit.cli import main\nmain(['lists'])")
    assert fast.returncode == ordinary.returncode == 0
    assert fast.stdout == ordinary.stdout and "ca-weat" in fast.stdout
    bad = _python("", "-m", "weatkit", "run", "--lists", "nope")
    assert bad.returncode == 1 and bad.stdout == ""
    assert bad.stderr.startswith("weatkit: error: unknown list set 'nope'")
    assert bad.stderr.count("\n") == 1
    assert _python("", "-m", "weatkit", "nonexistent").returncode == 2  # click's usage error


def test_atexit_functions_run_and_other_threads_are_waited_for() -> None:
    atexit = "import atexit\natexit.register(lambda: print('atexit ran'))"
    out = _entry(["--version"], atexit)
    assert (out.returncode, out.stdout) == (
        0,
        f"weatkit, version {weatkit.__version__}\natexit ran\n",
    )
    thread = (
        "import threading, time\n"
        "threading.Thread(target=lambda: (time.sleep(0.3), print('thread done'))).start()"
    )
    out = _entry(["--version"], thread)
    assert out.returncode == 0 and out.stdout.endswith("thread done\n")
