"""Fused optimizer updates on an OpenCL device: ``kernels/optim.cl.mako``, one launch per
parameter (param, grad and state read and written once)."""

from __future__ import annotations

import numpy as np

from ... import capture
from ..base import OPTIMIZERS
from .launch import INDEX_NP, INT32_MAX


def optimizer_step(rt, kind, flags, views, scalars):
    """Launches the ``kind`` update for ``flags`` over the contiguous ``views`` (param, grad,
    states in ``OPTIMIZERS`` order) with ``scalars``; built once per (kind, flags, dtypes)."""
    n = views[0].numel()
    if n == 0:
        return
    spec = OPTIMIZERS[kind]
    flags = frozenset(flags)
    dtypes = tuple(v.dtype for v in views)
    # offsets stay inside their storages, so the largest storage bounds every index
    small = all(v.nbytes <= INT32_MAX * v.dtype.itemsize for v in views)
    itype = "int" if small else "long"
    key = ("optim", kind, flags, dtypes, itype)
    k = rt.kernels.get(key)
    if k is None:
        k = _build(rt, key, spec, kind, flags, dtypes, itype)
    args = []
    for v in views:
        args += [v.buffer, v.offset]
    first = len(args)
    args += [float(s) for s in scalars]
    args.append(n)
    rt.launch1d(k, n, args)
    # a captured step recomputes the scalars at each replay (Adam's bias corrections)
    capture.bind_source(tuple(range(first, first + len(scalars))), _floats)


def _floats(*scalars):
    return [float(s) for s in scalars]


def _build(rt, key, spec, kind, flags, dtypes, itype):
    names = ("param", "grad", *spec.state_names(flags))
    ct = dtypes[0].compute_ctype
    k = rt.kernel(
        "optim.cl.mako",
        f"cg_optim_{kind}",
        kind=kind,
        # only the flags this kind reads: a stray one must not make a second program
        flags=tuple(sorted(f for f in flags if f in spec.flags)),
        buffers=tuple((name, dt.ctype) for name, dt in zip(names, dtypes)),
        scalars=spec.scalars,
        ct=ct,
        index_t=itype,
        fp64=ct == "double",
        grid_stride=rt.is_gpu,
    )
    # typed once, so each launch passes plain Python numbers (as the elementwise kernels)
    I = INDEX_NP[itype]
    scalar = np.float64 if ct == "double" else np.float32
    rt.set_arg_types(k, [None, I] * len(names) + [scalar] * len(spec.scalars) + [I])
    rt.kernels[key] = k
    return k
