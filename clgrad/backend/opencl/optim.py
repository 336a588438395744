"""Fused optimizer updates on an OpenCL device: ``kernels/optim.cl.mako``, one launch per
parameter or per group of parameters (param, grad and state read and written once)."""

from __future__ import annotations

import numpy as np

from ... import capture
from ..base import OPTIMIZERS
from .launch import INDEX_NP, INT32_MAX


def optimizer_step(rt, kind, flags, views, scalars):
    """Launches the ``kind`` update for ``flags`` over the contiguous ``views`` (param, grad,
    states in ``OPTIMIZERS`` order) with ``scalars``; built once per (kind, flags, dtypes)."""
    optimizer_step_group(rt, kind, flags, [views], scalars)


def optimizer_step_group(rt, kind, flags, members, scalars):
    """The ``kind`` update of several parameters in one launch: ``members`` holds each one's
    views (as ``optimizer_step``'s, one dtype signature for all), ``scalars`` are shared. Each
    parameter's range is padded to whole work-groups, so that a work-group updates one
    parameter only."""
    members = [views for views in members if views[0].numel()]
    if not members:
        return
    spec = OPTIMIZERS[kind]
    flags = frozenset(flags)
    dtypes = tuple(v.dtype for v in members[0])
    # offsets stay inside their storages, so the largest storage bounds every index
    small = all(v.nbytes <= INT32_MAX * v.dtype.itemsize for views in members for v in views)
    local = rt.local_size
    groups = sum(-(-views[0].numel() // local) for views in members)
    itype = "int" if small and groups * local <= INT32_MAX else "long"
    grid_stride = rt.is_gpu and len(members) == 1
    # kernels for 1, 2, 4 and 8 tensors only (fewer to build): the slots past the members
    # repeat the last one's buffers with no elements, so no work-group falls in their range
    slots = 1 << (len(members) - 1).bit_length()
    key = ("optim", kind, flags, dtypes, itype, slots, grid_stride)
    k = rt.kernels.get(key)
    if k is None:
        k = _build(rt, key, spec, kind, flags, dtypes, itype, slots, grid_stride)
    args, groups_end = [], 0
    for slot in range(slots):
        views = members[min(slot, len(members) - 1)]
        for v in views:
            args += [v.buffer, v.offset]
        n = views[0].numel() if slot < len(members) else 0
        groups_end += -(-n // local)
        args += [n, groups_end]
    first = len(args)
    args += [float(s) for s in scalars]
    if grid_stride:
        rt.launch1d(k, members[0][0].numel(), args)
    else:
        rt.launch(k, (groups_end * local,), (local,), args)
    # a captured step recomputes the scalars at each replay (Adam's bias corrections)
    capture.bind_source(tuple(range(first, first + len(scalars))), _floats)


def _floats(*scalars):
    return [float(s) for s in scalars]


def _build(rt, key, spec, kind, flags, dtypes, itype, tensors, grid_stride):
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
        grid_stride=grid_stride,
        tensors=tensors,
    )
    # typed once, so each launch passes plain Python numbers (as the elementwise kernels)
    I = INDEX_NP[itype]
    scalar = np.float64 if ct == "double" else np.float32
    rt.set_arg_types(k, ([None, I] * len(names) + [I, I]) * tensors + [scalar] * len(spec.scalars))
    rt.kernels[key] = k
    return k
