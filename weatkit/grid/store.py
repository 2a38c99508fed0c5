"""Finished jobs on disk: ``OUTPUT/jobs/<job>.json``, one atomic write per finished job.

Any job with an id, kind, key and file name (:class:`~weatkit.grid.jobs.RunnableJob`: a grid's,
a comparison's) is kept the same way.

A record holds the job's key and its tables as JSON records (floats round-trip exactly). A job
killed mid-way leaves no record (only the hidden staging folder ``OUTPUT/.jobs.<pid>-*.write`` of
:func:`weatkit._io.atomic.write_outputs`, removed by the next run), so a rerun recomputes it; a
record whose key differs from the current plan's is recomputed too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weatkit._io.atomic import remove_stale, write_outputs
from weatkit.grid.jobs import RunnableJob


class JobStore:
    """Reads and writes the records of finished jobs under ``output / "jobs"``."""

    def __init__(self, output: Path) -> None:
        self.directory = output / "jobs"

    def load(self, job: RunnableJob) -> dict[str, Any] | None:
        """The job's record if it finished with the same key, else None."""
        path = self.directory / job.file_name
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None  # unreadable or corrupt: recompute
        if not isinstance(record, dict) or record.get("key") != job.key:
            return None
        return record

    def save(self, job: RunnableJob, record: dict[str, Any]) -> None:
        """Write the record atomically (temporary file, then rename)."""
        data = {"id": job.id, "kind": job.kind, "key": job.key, **record}
        text = json.dumps(data, ensure_ascii=False, default=str, indent=1)
        write_outputs(self.directory, {job.file_name: (text + "\n").encode()})

    def clean_temporaries(self) -> None:
        """Remove the staging folders of record writes left by killed runs (the rule of
        :func:`weatkit._io.atomic.remove_stale`); every :meth:`save` does it too."""
        remove_stale(self.directory.parent, self.directory.name, ".write")
