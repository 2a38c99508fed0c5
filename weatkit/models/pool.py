"""The process's model handles: each model's weights loaded once, whoever asks for them.

:func:`get_model` returns the one :class:`~weatkit.models.handle.ModelHandle` of a model under
given loading options (key: the model — a local directory by its absolute path — and the
:class:`~weatkit.models.options.LoadOptions`), so word-vector extraction, GEST, StereoSet, CrowS and
MBE scoring of the same model in one run share one tokenizer and one set of weights.

Release policy: a handle keeps its weights until it is released. :func:`release` drops one model
(its weights and tokenizers; the handle object stays valid and reloads on next need),
:func:`clear` drops every model, and :func:`scope` releases, on leaving its block, the handles
first obtained inside it. A run over many models (``compare``, a grid) should finish with one
model before it asks for the next and release it (``with scope(): ...`` per model), so that at
most one model is in memory at a time; a run over one model needs nothing.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from weatkit.models.handle import ModelHandle
from weatkit.models.hub import is_local
from weatkit.models.options import LoadOptions

_HANDLES: dict[tuple[str, LoadOptions], ModelHandle] = {}
_LOCK = threading.RLock()


def _key(model: str, options: object | None) -> tuple[str, LoadOptions]:
    name = str(model)
    if is_local(name):
        name = str(Path(os.path.expanduser(name)).resolve())
    return name, LoadOptions.of(options)


def get_model(model: str, options: object | None = None) -> ModelHandle:
    """The shared handle of ``model`` (hub id or directory) under ``options``' loading options
    (a :class:`LoadOptions` or any object with its attributes, e.g. ``ContextualOptions``);
    a one-line :class:`~weatkit.errors.ConfigError` for an option the ``hf`` backend does not
    take (:meth:`LoadOptions.check_backend`)."""
    key = _key(model, options)
    key[1].check_backend("hf")
    with _LOCK:
        handle = _HANDLES.get(key)
        if handle is None:
            handle = _HANDLES[key] = ModelHandle(str(model), key[1])
        return handle


def handles() -> list[ModelHandle]:
    """The handles of this process, in the order they were first asked for."""
    with _LOCK:
        return list(_HANDLES.values())


def release(model: str | ModelHandle, options: object | None = None) -> None:
    """Drop a model's weights and tokenizers and forget its handle (a handle object still held
    by a caller reloads on next need)."""
    with _LOCK:
        if isinstance(model, ModelHandle):
            keys = [k for k, h in _HANDLES.items() if h is model]
            model.release()
        else:
            keys = [_key(model, options)]
        for key in keys:
            handle = _HANDLES.pop(key, None)
            if handle is not None:
                handle.release()


def clear() -> None:
    """Release every model of the process."""
    with _LOCK:
        for handle in _HANDLES.values():
            handle.release()
        _HANDLES.clear()


@contextmanager
def scope() -> Iterator[None]:
    """Release, on leaving the block, the models first asked for inside it (models already in
    the pool before the block are kept)."""
    with _LOCK:
        before = set(_HANDLES)
    try:
        yield
    finally:
        with _LOCK:
            for key in [k for k in _HANDLES if k not in before]:
                _HANDLES.pop(key).release()
