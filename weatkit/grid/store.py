"""Finished jobs on disk: ``OUTPUT/jobs/<job>.json``, one atomic write per finished job.

A record holds the job's key and its tables as JSON records (floats round-trip exactly). A job
killed mid-way leaves no record (only a hidden temporary file, removed on the next write), so a
rerun recomputes it; a record whose key differs from the current plan's is recomputed too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from weatkit.errors import WeatkitError
from weatkit.grid.jobs import Job
from weatkit.report.tables import write_outputs


class JobStore:
    """Reads and writes the records of finished jobs under ``output / "jobs"``."""

    def __init__(self, output: Path) -> None:
        self.directory = output / "jobs"

    def load(self, job: Job) -> dict[str, Any] | None:
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

    def save(self, job: Job, record: dict[str, Any]) -> None:
        """Write the record atomically (temporary file, then rename)."""
        data = {"id": job.id, "kind": job.kind, "key": job.key, **record}
        text = json.dumps(data, ensure_ascii=False, default=str, indent=1)
        write_outputs(self.directory, {job.file_name: (text + "\n").encode()})

    def clean_temporaries(self) -> None:
        """Remove temporary files left by a killed run."""
        if not self.directory.is_dir():
            return
        for leftover in self.directory.glob(".*.tmp"):
            try:
                leftover.unlink()
            except OSError as err:
                raise WeatkitError(f"cannot remove {leftover}: {err.strerror}") from err
