"""The docstring examples of every clgrad module, run as doctests on the default device (cpu).

One test per docstring that has examples, named ``module::object``. The namespace holds
``clgrad`` (as ``python -m pytest --doctest-modules`` with a ``doctest_namespace`` would), and
examples compare with NORMALIZE_WHITESPACE | ELLIPSIS. ``clgrad.__main__`` is never imported
(it is the command line). The modules come from the installed package, so this works the same
with ``pip install -e .`` and with ``pip install .``.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import clgrad

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
SKIP = {"clgrad.__main__"}


def _modules():
    names = ["clgrad"] + [
        m.name
        for m in pkgutil.walk_packages(clgrad.__path__, prefix="clgrad.")
        if m.name not in SKIP
    ]
    return [importlib.import_module(n) for n in sorted(names)]


class _Finder(doctest.DocTestFinder):
    """doctest's finder, told that Tensor and Size (whose ``__module__`` is ``clgrad``, as
    torch's is ``torch``) are clgrad.tensor's own: their examples run once, from there."""

    def _from_module(self, module, object):
        home = _RENAMED.get(object) if inspect.isclass(object) else None
        if home is not None:
            return module.__name__ == home
        return super()._from_module(module, object)


_RENAMED = {clgrad.Tensor: "clgrad.tensor", clgrad.Size: "clgrad.tensor"}


def _doctests():
    finder = _Finder(exclude_empty=True)
    out = []
    for module in _modules():
        for test in finder.find(module, module.__name__):
            if test.examples:
                out.append(pytest.param(module, test, id=f"{module.__name__}::{test.name}"))
    return sorted(out, key=lambda p: p.id)


@pytest.fixture
def on_cpu():
    """Each example starts on the cpu device with the default dtype float32, and leaves it so."""
    device, dtype = clgrad.default_device(), clgrad.get_default_dtype()
    clgrad.set_default_device("cpu")
    clgrad.set_default_dtype(clgrad.float32)
    yield
    clgrad.set_default_device(device)
    clgrad.set_default_dtype(dtype)


@pytest.mark.parametrize("module, test", _doctests())
def test_docstring_examples(module, test, on_cpu):
    # the module's globals, as ``python -m doctest`` gives them, and ``clgrad``
    test.globs = {**vars(module), "clgrad": clgrad}
    report = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    result = runner.run(test, out=report.append, clear_globs=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed:\n" + (
        "".join(report)
    )


def test_every_module_is_searched():
    names = {m.__name__ for m in _modules()}
    assert {"clgrad", "clgrad.tensor", "clgrad.nn.functional", "clgrad.ops.creation"} <= names
    assert not names & SKIP
