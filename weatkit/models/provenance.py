"""Which command is running: the label the cache records with what a run writes.

:data:`COMMAND` is ``weatkit CMD`` while the command line runs ``CMD`` (set by
:func:`weatkit.cli.main`), else ``the Python API``. This module imports nothing heavy, so the
command line can set it before any command is imported.
"""

from __future__ import annotations

from contextvars import ContextVar

#: The running command, as the cache names the writer of an entry.
COMMAND: ContextVar[str] = ContextVar("weatkit_command", default="the Python API")
