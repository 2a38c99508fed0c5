"""The measure plug-ins (weatkit.measures.plugins): each declaration is read everywhere it says."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml

import weatkit
from weatkit.cli import COMMANDS
from weatkit.config import schema
from weatkit.crossmethod.config import all_methods, compare_plugins
from weatkit.measures.compat import SENTENCE_PRESETS
from weatkit.measures.plugins import Plugin, load, plugins
from weatkit.measures.registry import MEASURES

DOCS = Path(__file__).resolve().parents[1] / "docs"


class _Loader(yaml.SafeLoader):
    """mkdocs.yml's ``!!python/name:`` tags read as plain strings."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _nav_pages(node: object) -> set[str]:
    if isinstance(node, str):
        return {node}
    if isinstance(node, dict):
        return set().union(*(_nav_pages(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_nav_pages(v) for v in node)) if node else set()
    return set()


@pytest.mark.parametrize("plugin", plugins(), ids=lambda p: p.name)
def test_each_declaration_is_read_where_it_says(plugin: Plugin) -> None:
    for name, target in plugin.api.items():
        module, _, attribute = target.partition(":")
        assert getattr(weatkit, name) is getattr(importlib.import_module(module), attribute)
        assert name in weatkit.__all__
    if plugin.command is not None:
        assert COMMANDS[plugin.name] == (plugin.command, plugin.summary)
    else:
        assert plugin.name not in COMMANDS
    if plugin.section is not None:
        assert schema.SECTIONS[plugin.name.upper()] is plugin.section
    presets = {k: dict(v) for k, v in plugin.presets.items()}
    assert {k: dict(v) for k, v in SENTENCE_PRESETS.get(plugin.name, {}).items()} == presets
    nav = yaml.load((DOCS.parent / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    assert (DOCS / plugin.docs).is_file() and plugin.docs in _nav_pages(nav["nav"])
    for measure in plugin.measures:
        assert MEASURES[measure.name] is measure
    if plugin.compare is not None:
        assert compare_plugins()[plugin.name] is plugin and plugin.name in all_methods()
        for target in (plugin.compare.section, plugin.compare.rows, plugin.compare.inputs):
            assert target is None or callable(load(target))
        assert f"`{plugin.name}:" in (DOCS / plugin.docs).read_text(encoding="utf-8")


def test_a_target_outside_weatkit_is_refused() -> None:
    with pytest.raises(ValueError, match=r"plugin x: 'os:path' is not weatkit.MODULE:NAME"):
        Plugin(name="x", api={"x": "os:path"}, command=None, summary="")
