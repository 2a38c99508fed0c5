"""``python -m weatkit`` runs the command-line interface."""

from weatkit.cli import entry

entry()
