"""Renders the ``kernels/*.cl.mako`` templates (strict_undefined: a missing name is an error).

Every render also gets ``h``, the module ``template_helpers``: the one place for what the
templates share (C type sizes and limits, loads and stores, substituting declared C text). It
is passed here rather than imported by each template so templates never import ``clgrad`` by
its package path, and so it stays out of the parameters that key the program caches.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from pathlib import Path

from mako.exceptions import text_error_template
from mako.lookup import TemplateLookup

from . import template_helpers

# One kernel build at a time in the process, whichever thread and context: fused kernels build
# in a background thread while the user's thread builds others, and a driver's compiler may
# keep state shared across contexts (PoCL locks its compiler per context only); ``warnings``'
# filters, which a build swaps, are the process's too. Held by ``Runtime``'s builds and by the
# first launch that makes PoCL generate a kernel's code; the innermost lock: whoever holds it
# takes no other (a runtime's lock is held around builds).
BUILD_LOCK = threading.Lock()


class KernelRenderError(RuntimeError):
    """A template failed to render; the message names the template and its parameters."""


def kernels_dir() -> Path:
    """The templates: inside the installed package, or the repository's top-level kernels/."""
    here = Path(__file__).resolve().parents[2]  # .../clgrad
    for candidate in (here / "kernels", here.parent / "kernels"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"clgrad's kernel templates are missing (looked in {here / 'kernels'})")


@lru_cache(maxsize=1)
def _lookup() -> TemplateLookup:
    return TemplateLookup(directories=[str(kernels_dir())], strict_undefined=True)


def templates() -> list[str]:
    return sorted(p.name for p in kernels_dir().glob("*.cl.mako") if not p.name.startswith("_"))


# the C types a source names helpers of: the prelude's helpers are cg_<fn>_<type>
_HELPER_TYPE = re.compile(r"\bcg_\w+?_(uchar|char|short|int|long|float|double|bf16)\b")


def helper_types(source: str) -> frozenset:
    """The C types whose prelude helpers ``source`` calls (by their names' last part).

    >>> sorted(helper_types("y = cg_exp_float(x) + cg_floordiv_uchar(a, b); cg_reduce_sum(z)"))
    ['float', 'uchar']
    """
    return frozenset(_HELPER_TYPE.findall(source))


def render(template: str, **params) -> str:
    """The C source of ``template`` for ``params`` (and ``h``: the shared helpers), after the
    prelude (``kernels/_prelude.cl.mako``: extensions and the ``cg_*`` helpers, of the C types
    the template's source names only)."""
    if "h" in params:
        raise ValueError("'h' is reserved for the template helpers")
    lookup = _lookup()
    try:
        body = lookup.get_template(template).render(h=template_helpers, **params)
        prelude = lookup.get_template("_prelude.cl.mako").render(
            fp64=params["fp64"], helper_types=helper_types(body)
        )
        return prelude + body
    except Exception as e:
        detail = text_error_template().render()
        shown = ", ".join(f"{k}={v!r}" for k, v in sorted(params.items()))
        raise KernelRenderError(
            f"rendering {template} failed with {type(e).__name__}: {e}\n"
            f"parameters: {shown}\n{detail}"
        ) from e
