"""The OpenCL device's primitives: each renders (once) a kernel family and launches it."""

from __future__ import annotations

import math

import numpy as np
import pyopencl as cl

from ... import capture
from ... import dtypes as D
from ..base import ARANGE, COPY, Backend, View
from ..philox import normal_bits, uniform_bits
from . import conv as conv_family
from . import matmul as matmul_family
from . import reduce as reduce_family
from .fusion import FUSE_REDUCE_MAX, Deferred, ReduceEntry, alone, fusion_info
from .launch import (
    INDEX_NP,
    INT32_MAX,
    SCALAR_NP,
    broadcast_strides,
    contiguous_strides,
    dims_args,
    dims_types,
    extent,
    group_kernel,
    index_type,
    merge_dims,
)
from .template_helpers import FLOAT16_STORAGE

# strided kernels take this many dims of sizes and strides (more only where merging leaves more:
# those get a program of their own)
STRIDED_DIMS = 4

# elementwise launch plans kept before the cache starts over
PLAN_CACHE_SIZE = 4096
EMPTY = ()  # the plan of a launch over no element

# host data up to this size is written to the device from a private copy without waiting for
# the queue (``from_numpy``): a tensor made from a list, an index a pad or a pooling computes,
# a batch a loop uploads; a bigger array is written blocking rather than copied on the host
ASYNC_UPLOAD_BYTES = 1 << 20

# gather_rows: dim 0 of the launch walks the inner elements of a row from this many of them
# (else the indices)
GATHER_ALONG_INNER = 64
# add_rows on a GPU: runs of the index added atomically until about this many work-items
ADD_ROWS_ITEMS = 16384
# add_rows on a CPU device: a work-item's run of columns (a contiguous 512 bytes of float
# rows: fewer, longer streams read faster than one per column), in small groups
ADD_ROWS_WIDTH = 128
ADD_ROWS_LOCAL_CPU = 4


# values a serial put_add (no 64-bit atomics) adds per launch: under llvmpipe's 65535-iteration
# loop limit (``Runtime.loop_limit``, ``OpenCLBackend.put``)
SERIAL_CHUNK = 32768
# lines from which a GPU's cummax / cummin walks each line in a work-item (scans_extreme)
GPU_EXTREME_LINES = 4096


class OpenCLBackend(Backend):
    def __init__(self, runtime):
        self.rt = runtime
        self._plans = {}  # elementwise launch plans (see ``elementwise``)
        self.fuse = runtime.fuser is not None  # elementwise launches deferred (fusion.py)

    def elementwise(self, kernel, out, operands, compute):
        """out = kernel(operands...), each operand converted to its compute dtype first; with
        fusion on, the planned launch is deferred (``Runtime.defer``, fusion.py)."""
        self.run_elementwise(self.elementwise_plan(kernel, out, operands, compute), out, operands)

    def elementwise_plan(self, kernel, out, operands, compute):
        """The launch plan of ``elementwise`` (kernel object, sizes, the arguments after the
        operands, its ``Fusable``, and the kernel and compute dtypes it was made for), or EMPTY:
        decided by the geometry and dtypes alone, so one plan runs any buffers, offsets and
        numbers of that geometry (``run_elementwise``)."""
        # Every op comes here, mostly with a geometry seen before: the plan is cached by what
        # decides it. A View's [2:5] is its shape, strides and dtype; a scalar operand's type
        # is its compute dtype's.
        key = (
            kernel,
            out[2:5],
            tuple(compute),
            *[x[2:5] if type(x) is View else 0 for x in operands],
        )
        plan = self._plans.get(key)
        if plan is None:
            plan = self._elementwise_plan(kernel, out, operands, compute)
            if plan is not EMPTY:
                plan += (kernel, tuple(compute))
            if len(self._plans) >= PLAN_CACHE_SIZE:  # shapes that keep changing: start over
                self._plans.clear()
            self._plans[key] = plan
        return plan

    def run_elementwise(self, plan, out, operands):
        """Runs (or defers) ``plan`` over these views and numbers, of the geometry it was made
        for."""
        if plan is EMPTY:
            return
        # a plan indexes with 32-bit ints: only for storages whose sizes allow it (fields by
        # index, here and below: this runs for every elementwise op)
        big = out[5] > INT32_MAX  # nbytes
        for x in operands:
            if type(x) is View and x[5] > INT32_MAX:
                big = True
        if big:  # (the plan's kernel and compute dtypes)
            self._elementwise_uncached(plan[5], out, operands, plan[6])
        elif self.fuse:  # the arguments are made at the flush, if it runs the launch alone
            self.rt.defer(Deferred(plan[4], out, operands, plan))
        else:
            self.rt.enqueue(*alone(plan, out, operands))

    def _elementwise_plan(self, kernel, out, operands, compute, wide=False):
        """(kernel, global size, local size, the arguments after the operands, its ``Fusable``
        or None) of a launch with 32-bit indices (64-bit with ``wide``); EMPTY when there is
        nothing to do."""
        n = out.numel()
        if n == 0:
            return EMPTY
        rt = self.rt
        shape = out.shape
        flat = out.is_contiguous()
        views, ins = [], []
        for x, dt in zip(operands, compute):
            if isinstance(x, View):
                views.append(x)
                ins.append((x.dtype.ctype, dt.compute_ctype))
                flat = flat and x.shape == shape and x.is_contiguous()
            else:
                ins.append((None, dt.compute_ctype))
        ins = tuple(ins)
        # offsets stay inside their storages, so a storage's size bounds every index
        itype = "long" if wide else "int"
        if flat:
            mshape, mstrides, layout = (n,), None, "flat"
        else:
            strides = [out.strides] + [broadcast_strides(v, shape) for v in views]
            mshape, mstrides = merge_dims(shape, strides)
            if len(mshape) == 1 and all(s[0] == 1 for s in mstrides):
                layout = "flat"
            else:
                # a 2-D launch pays off once rows are long enough to fill work-groups
                layout = "rows" if mshape[-1] >= 64 else "general"
        ndim = len(mshape)
        maxd = STRIDED_DIMS if ndim <= STRIDED_DIMS else ndim
        key = ("elementwise", kernel, ins, out.dtype, layout, maxd, itype)
        k = rt.kernels.get(key)
        if k is None:
            k = self._elementwise_kernel(key, kernel, ins, out, compute, maxd, layout)
        tail = []
        if layout != "flat":
            tail += dims_args(mshape, mstrides, maxd)
        tail.append(n)
        fuse = fusion_info(kernel, out, operands, compute)
        L = rt.local_size
        if layout == "rows":
            inner = mshape[-1]
            return k, (-(-inner // L) * L, n // inner), (L, 1), tuple(tail), fuse
        items = max(1, min(n, rt.max_work_items))  # as launch1d: grid-stride past the limit
        return k, (-(-items // L) * L,), (L,), tuple(tail), fuse

    def _elementwise_uncached(self, kernel, out, operands, compute):
        """A launch over a storage of over 2 GiB: planned for this call only, with 64-bit
        indices where a storage holds more than 2**31 - 1 elements."""
        views = [out, *(x for x in operands if isinstance(x, View))]
        wide = any(v.nbytes > INT32_MAX * v.dtype.itemsize for v in views)
        plan = self._elementwise_plan(kernel, out, operands, compute, wide)
        self.rt.enqueue(*alone(plan, out, operands))

    def _elementwise_kernel(self, key, kernel, ins, out, compute, maxd, layout):
        rt = self.rt
        itype = key[-1]
        ct = compute[0].compute_ctype if compute else out.dtype.compute_ctype
        params = dict(
            ins=ins,
            out_ct=out.dtype.ctype,
            out_bool=out.dtype.name == "bool",
            maxd=maxd,
            index_t=itype,
            fp64=any(d.name == "float64" for d in (out.dtype, *compute)),
            grid_stride=rt.is_gpu,
        )
        function = f"cg_elementwise_{kernel.name}_{layout}"

        def build(members):
            ops = tuple((m.name, m.expr.replace("{T}", ct)) for m in members)
            return rt.kernel("elementwise.cl.mako", function, ops=ops, **params)

        k = rt.bundled(_bundle_key(ins, out.dtype), kernel, build)
        # the argument types are known now: typing the kernel once lets every launch pass
        # plain Python numbers (no NumPy scalar per argument)
        I = INDEX_NP[itype]
        types = [None, I]
        n_views = 0
        for st, cty in ins:
            if st is None:
                types.append(SCALAR_NP[cty])
            else:
                types += [None, I]
                n_views += 1
        if layout != "flat":  # the output's and each view's strides
            types += dims_types(I, 1 + n_views, maxd)
        rt.set_arg_types(k, types + [I])
        rt.kernels[key] = k
        return k

    def arange(self, out, start, step, dt):
        self.elementwise(ARANGE, out, [start, step], [dt, dt])

    def reduce(self, kernel, out, x, dims, acc):
        rt = self.rt
        if (
            self.fuse
            and rt.deferred
            and out.numel() == 1
            and not kernel.arg
            and 0 < x.numel() <= FUSE_REDUCE_MAX
            and out.dtype.ctype not in FLOAT16_STORAGE
            and (acc is None or acc.ctype not in FLOAT16_STORAGE)
        ):
            # a full reduction of what a deferred launch writes: that launch's kernel may
            # reduce the values as it computes them (fusion.py). Under the lock of the list:
            # another thread's flush may empty it at any moment.
            with rt.flush_lock:
                if id(x.buffer) in rt.written:
                    rt.defer(ReduceEntry(kernel, out, x, dims, acc))
                    return
        reduce_family.reduce(rt, kernel, out, x, dims, acc)

    def scan(self, out, x, dim, acc, kernel):
        reduce_family.scan(self.rt, out, x, dim, acc, kernel)

    def scans_extreme(self, lines, length):
        # a work-item walks a line: on a GPU only where lines fill it or are short (a doubling
        # scan of Tensor ops is faster on a few long lines there); where loops are limited
        # (llvmpipe), only lines within the limit (its count includes the exit test)
        rt = self.rt
        if rt.loop_limit is not None and length >= rt.loop_limit:
            return False
        return not rt.is_gpu or lines >= GPU_EXTREME_LINES or length <= 64

    def cum_extreme(self, values, indices, x, dim, largest):
        reduce_family.cum_extreme(self.rt, values, indices, x, dim, largest)

    def matmul(self, out, a, b, acc):
        matmul_family.matmul(self.rt, out, a, b, acc)

    def random(self, out, kind, seed, offset, dt):
        n = out.numel()
        if n == 0:
            return
        rt = self.rt
        acc = "double" if dt.name == "float64" else "float"
        bits = uniform_bits(out.dtype.name)
        nbits = normal_bits(dt.name)  # (the host's philox_uniform takes as many)
        k = rt.cached(
            ("random", kind, out.dtype, acc, bits, nbits, rt.is_gpu),
            "random.cl.mako",
            "cg_random",
            kind=kind,
            out_ct=out.dtype.ctype,
            acc=acc,
            bits=bits,
            normal_bits=nbits,
            fp64=acc == "double",
            grid_stride=rt.is_gpu,
        )
        args = [out.buffer, np.uint64(out.offset), *_random_args(seed, offset), np.uint64(n)]
        rt.launch1d(k, n, args)
        # a captured step draws new numbers at each replay: seed and offset come from the
        # generator then (see clgrad.capture.scalar_source)
        capture.bind_source((2, 3, 4), _random_args)

    def to_numpy(self, x):
        """Waits for the queue and copies the view's elements to a new host array."""
        host = np.empty(x.shape, x.dtype.np)
        if host.size == 0:
            return host
        if not x.is_contiguous():
            dense = View(
                self.rt.allocator.alloc(host.nbytes),
                0,
                x.shape,
                contiguous_strides(x.shape),
                x.dtype,
                host.nbytes,
            )
            try:
                self.elementwise(COPY, dense, [x], [x.dtype])
                self._read(host, dense)
            finally:
                self.rt.allocator.release(dense.buffer, dense.nbytes)
            return host
        self._read(host, x)
        return host

    def _read(self, host, x):
        capture.note_transfer("a read of device memory to the host (.item(), .numpy(), print)")
        offset = x.offset * x.dtype.itemsize
        self.rt.host_wait(
            lambda q: cl.enqueue_copy(q, host, x.buffer, src_offset=offset, is_blocking=True)
        )

    def from_numpy(self, dst, arr):
        """Copies a host array into a contiguous view. Up to ASYNC_UPLOAD_BYTES the copy is
        queued behind the device's work, from a private copy of the array that is kept until
        the device has read it (the caller may change or drop its array at once), instead of
        waiting for all that work first; a bigger array is written blocking, from itself."""
        given = arr
        if dst.dtype is D.bfloat16 and arr.dtype != np.uint16:  # numbers, not bit patterns
            arr = D.bfloat16_bits(arr)
        with np.errstate(over="ignore", invalid="ignore"):  # 1e300 as float32 is inf, quietly
            arr = np.ascontiguousarray(arr, dtype=dst.dtype.np)
        if not arr.size:
            return
        capture.note_transfer("a copy of host data to the device (a tensor made from data)")
        offset = dst.offset * dst.dtype.itemsize
        if arr.nbytes <= ASYNC_UPLOAD_BYTES:
            own = arr.copy() if np.may_share_memory(arr, given) else arr  # (converted: ours)
            done = cl.enqueue_copy(
                self.rt.queue, dst.buffer, own, dst_offset=offset, is_blocking=False
            )
            self.rt.hold(done, own)
            return
        self.rt.host_wait(
            lambda q: cl.enqueue_copy(q, dst.buffer, arr, dst_offset=offset, is_blocking=True)
        )

    def copy_from(self, dst, src, src_backend, keep):
        """A buffer-to-buffer copy on this device's queue from another device of the same
        context, after the work queued on the source device (a marker event): neither queue
        waits on the host, and the source's queue never waits for this one."""
        src_rt = getattr(src_backend, "rt", None)
        if src_rt is None or src_rt is self.rt or src_rt.context != self.rt.context:
            return False
        nbytes = dst.numel() * dst.dtype.itemsize
        if nbytes == 0:
            return True
        capture.note_transfer("a copy between two devices")
        ready = src_rt.host_wait(cl.enqueue_marker)  # not a wait: this queue waits for it
        done = cl.enqueue_copy(
            self.rt.queue,  # (its deferred launches queued first: ``Runtime.queue``)
            dst.buffer,
            src.buffer,
            byte_count=nbytes,
            src_offset=src.offset * src.dtype.itemsize,
            dst_offset=dst.offset * dst.dtype.itemsize,
            wait_for=[ready],
        )
        src_rt.hold(done, keep)
        return True

    def _index_kernel(self, dtype, function):
        rt = self.rt
        return rt.cached(
            ("index", function, dtype),
            "index.cl.mako",
            function,
            ct=dtype.ctype,
            atomic64=rt.atomic64,
            logical=dtype.name == "bool",
            fp64=dtype.name == "float64",
            gpu=rt.is_gpu,
        )

    def take(self, out, src, offsets):
        """out (contiguous) = src's storage at int64 ``offsets`` (contiguous)."""
        k = self._index_kernel(src.dtype, "cg_index_take")
        n = out.numel()
        self.rt.launch1d(
            k,
            n,
            [
                out.buffer,
                np.int64(out.offset),
                src.buffer,
                np.int64(src.nbytes // src.dtype.itemsize),
                offsets.buffer,
                np.int64(offsets.offset),
                np.int64(n),
            ],
        )

    def gather_rows(self, out, src, index):
        """out[o, j, i] = src[o, index[j], i]: ``out`` contiguous (O, J, I), ``src`` (O, R, I)
        through its strides, ``index`` a contiguous int64 vector of J rows in [0, R)."""
        O, J, I = out.shape
        if I >= GATHER_ALONG_INNER or I >= J:
            along = "inner_unit" if src.strides[2] == 1 else "inner"
        else:
            along = "index"
        k = self._index_kernel(src.dtype, f"cg_index_gather_rows_{along}")
        n0, rows = (J, O * I) if along == "index" else (I, O * J)
        L = self.rt.local_size
        self.rt.launch(
            k,
            (-(-n0 // L) * L, rows),
            (L, 1),
            [
                out.buffer,
                np.int64(out.offset),
                src.buffer,
                np.int64(src.offset),
                np.int64(src.nbytes // src.dtype.itemsize),
                *(np.int64(s) for s in src.strides),
                index.buffer,
                np.int64(index.offset),
                np.int64(J),
                np.int64(I),
                np.int64(n0),
            ],
        )

    def gather_dim(self, out, src, index, dim):
        nd = len(out.shape)
        rt = self.rt
        k = rt.cached(
            ("gather_dim", src.dtype, nd, dim),
            "gather.cl.mako",
            "cg_gather_dim",
            ct=src.dtype.ctype,
            nd=nd,
            d=dim,
            fp64=False,  # (moved as raw bits: no double arithmetic)
        )
        args = [out.buffer, np.int64(out.offset), src.buffer, np.int64(src.offset)]
        args += [np.int64(src.nbytes // src.dtype.itemsize), index.buffer, np.int64(index.offset)]
        for size, ss, is_ in zip(out.shape, src.strides, index.strides):
            args += [np.int64(size), np.int64(ss), np.int64(is_)]
        n = out.numel()
        rt.launch1d(k, n, [*args, np.int64(n)])

    def add_rows(self, out, index, src):
        """out[o, index[j], i] += src[o, j, i]: ``out`` (O, R, I) and ``src`` (O, J, I) through
        their strides, ``index`` a contiguous int64 vector of J rows in [0, R).

        On a CPU device a work-item adds a run of ADD_ROWS_WIDTH columns of every row, in order
        (``cg_index_add_rows_cpu``). On a GPU a work-item walks a run of j for one (o, i):
        alone (plain adds, in order) where O * I work-items fill the device, else J is cut
        into runs added atomically, up to ADD_ROWS_ITEMS work-items (never for 64-bit types
        without 64-bit atomics). Launches of few enough rows keep llvmpipe's loops whole."""
        rt = self.rt
        O, J, I = src.shape
        steps = [
            "1" if s == 1 else "0" if s == 0 else "s" for s in (out.strides[2], src.strides[2])
        ]
        if steps[0] != "1":  # (an out of stride 0 has no run to add to)
            steps = ["s", "s"]
        args = [
            out.buffer,
            np.int64(out.offset),
            np.int64(out.nbytes // out.dtype.itemsize),
            *(np.int64(s) for s in out.strides),
            index.buffer,
            np.int64(index.offset),
            src.buffer,
            np.int64(src.offset),
            *(np.int64(s) for s in src.strides),
            np.int64(I),
        ]
        if not rt.is_gpu:
            if steps[1] == "s":
                steps = ["s", "s"]
            k = self._index_kernel(out.dtype, "cg_index_add_rows_cpu_{}_{}".format(*steps))
            width = min(I, ADD_ROWS_WIDTH)
            n_chunks = -(-I // width)
            # (llvmpipe's limit counts every loop's iterations and each exit test: two loops
            # deep, a row takes 2 * width + 3 of them)
            step = J if rt.loop_limit is None else max(1, rt.loop_limit // (2 * width + 3))
            L = min(rt.local_size, ADD_ROWS_LOCAL_CPU)
            for j0 in range(0, J, step):
                count = np.int64(min(step, J - j0))
                rt.launch(
                    k,
                    (-(-(O * n_chunks) // L) * L,),
                    (L,),
                    [*args, np.int64(j0), count, np.int64(width), np.int64(n_chunks), np.int64(O)],
                )
            return
        k = self._index_kernel(out.dtype, "cg_index_add_rows_{}_{}".format(*steps))
        columns = O * I
        chunks = 1
        if columns < ADD_ROWS_ITEMS and (out.dtype.itemsize < 8 or rt.atomic64):
            chunks = max(1, min(J, ADD_ROWS_ITEMS // columns))
        step = J if rt.loop_limit is None else rt.loop_limit * chunks
        L = rt.local_size
        for j0 in range(0, J, step):
            count = np.int64(min(step, J - j0))
            tail = [np.int64(j0), count, np.int64(chunks)]
            rt.launch(k, (-(-I // L) * L, O * chunks), (L, 1), [*args, *tail])

    def put(self, dst, offsets, values, accumulate):
        """dst's storage at ``offsets`` = values, or += values (atomically) with ``accumulate``.

        Without 64-bit atomics, a 64-bit put_add runs in one work-item (index.cl.mako), in
        launches of SERIAL_CHUNK values: llvmpipe (Mesa's rusticl on the CPU) ends any loop
        after 65535 iterations, silently (its loop limiter), so one launch over more values
        would drop the rest."""
        k = self._index_kernel(dst.dtype, "cg_index_put_add" if accumulate else "cg_index_put")
        n = offsets.numel()
        serial = accumulate and dst.dtype.itemsize == 8 and not self.rt.atomic64
        chunk = SERIAL_CHUNK if serial else max(n, 1)
        for start in range(0, n, chunk):
            count = min(chunk, n - start)
            self.rt.launch1d(
                k,
                count,
                [
                    dst.buffer,
                    np.int64(dst.nbytes // dst.dtype.itemsize),
                    offsets.buffer,
                    np.int64(offsets.offset + start),
                    values.buffer,
                    np.int64(values.offset + start),
                    np.int64(count),
                ],
            )

    def nonzero(self, x):
        """Indices of the nonzero elements (the count decides the shape: this reads the device)."""
        host = D.host_values(self.to_numpy(x), x.dtype)  # (bfloat16's -0.0 is zero)
        if not x.ndim:
            return np.zeros((int(bool(host)), 0), np.int64)
        return np.stack(np.nonzero(host), axis=1).astype(np.int64)

    def synchronize(self):
        self.rt.synchronize()

    def sort(self, values, indices, x, descending):
        from . import sort as sort_family  # the family loads on first use

        sort_family.sort(self.rt, values, indices, x, descending)

    def computes_distances(self, outputs, length):
        # a work-item walks a pair's coordinates: within llvmpipe's loop limit (its launches
        # are grid-stride: each item walks that many pairs at most)
        limit = self.rt.loop_limit
        per_item = -(-outputs // self.rt.max_work_items)
        return limit is None or per_item * (length + 2) + 1 < limit

    def distances(self, out, x1, x2, p):
        n = out.numel()
        if n == 0:
            return
        rt = self.rt
        norm = {0.0: "zero", 1.0: "one", 2.0: "two", 3.0: "three", math.inf: "inf"}.get(
            float(p), "p"
        )
        itype = index_type(extent(x1), extent(x2), extent(out), n + rt.max_work_items)
        I = INDEX_NP[itype]
        k = group_kernel(rt, "distance.cl.mako", "cg_cdist", out, out.dtype, itype, norm=norm)
        ct = SCALAR_NP[out.dtype.compute_ctype]
        args = [out.buffer, I(out.offset), x1.buffer, I(x1.offset), *map(I, x1.strides)]
        args += [x2.buffer, I(x2.offset), *map(I, x2.strides)]
        args += [I(x1.shape[1]), I(x2.shape[1]), I(x1.shape[2]), ct(p), I(n)]
        rt.launch1d(k, n, args)

    def selects_topk(self, rows, n, k):
        from . import sort as sort_family

        return sort_family.selects(self.rt, rows, n, k)

    def topk(self, values, indices, x, k, largest):
        from . import sort as sort_family

        sort_family.topk(self.rt, values, indices, x, k, largest)

    def optimizer_step(self, kind, flags, views, scalars):
        from . import optim as optim_family  # the family loads on first use

        optim_family.optimizer_step(self.rt, kind, flags, views, scalars)

    # Parameters per fused optimizer launch (PyTorch's foreach path): each launch costs the host
    # and the queue more than a small parameter's update costs the device. On an H200, 3
    # parameters of 68K elements in all took 20 us in one launch against 45 us one by one; on
    # PoCL, the SGD step of the 784-256-256-10 MLP's 6 parameters 194 us against 310 us.
    optimizer_group_max = 8

    def optimizer_step_group(self, kind, flags, members, scalars):
        from . import optim as optim_family

        optim_family.optimizer_step_group(self.rt, kind, flags, members, scalars)

    def matmul_max_k(self):
        # half the loop limit: a product's work-items loop over K (the micro-kernels two
        # deep: 70,000 summed right on llvmpipe, 140,000 did not)
        limit = self.rt.loop_limit
        return None if limit is None else limit // 2

    def norm_fits(self, a, c, b) -> bool:
        from . import norm as norm_family  # the family loads on first use

        return norm_family.fits(self.rt, a * b)

    def product_sum_chunks(self, Z, G, M, N, K, dtype) -> int:
        return matmul_family.product_sum_chunks(self.rt, Z, G, M, N, K, dtype)

    def product_sum(self, out, a, b, acc):
        matmul_family.product_sum(self.rt, out, a, b, acc)

    def matmul_row_align(self, dtype) -> int:
        # CPU devices: the micro-kernel reads B's rows in place as NR-wide vectors (direct),
        # at full speed only where every row starts on a vector boundary and its last block is
        # readable whole (196-float rows: 4.7 ms against 2.8 ms with room to 208)
        return matmul_family.row_align(self.rt, dtype)

    def unfold(self, out, x, stride, dilation, padding):
        conv_family.unfold(self.rt, out, x, stride, dilation, padding)

    def fold(self, out, cols, stride, dilation, padding):
        conv_family.fold(self.rt, out, cols, stride, dilation, padding)

    def window_max(self, values, indices, win):
        conv_family.window_max(self.rt, values, indices, win)

    def window_put(self, out, grad, indices, win):
        conv_family.window_put(self.rt, out, grad, indices, win)

    def softmax_fits(self, n, inner):
        from . import softmax as softmax_family

        return softmax_family.fits(self.rt, n, inner)

    def softmax(self, out, x, dim, log, acc):
        from . import softmax as softmax_family  # the family loads on first use

        softmax_family.softmax(self.rt, out, x, dim, log, acc)

    def softmax_backward(self, out, y, g, dim, log, acc):
        from . import softmax as softmax_family

        softmax_family.softmax(self.rt, out, y, dim, log, acc, g)

    def norm(self, y, stats, x, weight, bias, per, eps, acc):
        from . import norm as norm_family  # the family loads on first use

        norm_family.norm(self.rt, y, stats, x, weight, bias, per, eps, acc)

    def norm_backward(self, dx, dw, db, x, g, weight, mean, rstd, per, acc):
        from . import norm as norm_family

        norm_family.norm_backward(self.rt, dx, dw, db, x, g, weight, mean, rstd, per, acc)

    def nll(self, out, x, target, weight, ignore_index, acc):
        from . import nll as nll_family  # the family loads on first use

        if out.ndim == 2:
            nll_family.nll_total(self.rt, out, x, target, weight, ignore_index, acc)
        else:
            nll_family.nll_terms(self.rt, out, x, target, weight, ignore_index, acc)

    def nll_grad(self, out, g, target, weight, ignore_index, acc):
        from . import nll as nll_family

        nll_family.nll_grad(self.rt, out, g, target, weight, ignore_index, acc)


def _bundle_key(ins, out_dtype):
    """The ``backend.base.BUNDLES`` key of an elementwise kernel over operand types ``ins``
    ((storage, compute) C types): (operands, compute type, result dtype name) where some operand
    is a tensor and every operand has one compute type, else None (no bundle)."""
    computed = {ct for _, ct in ins}
    if len(computed) != 1 or all(st is None for st, _ in ins):
        return None
    return (len(ins), *computed, out_dtype.name)


def _random_args(seed, offset) -> tuple:
    """The seed and offset arguments of ``cg_random`` (positions 2, 3, 4)."""
    return np.uint32(seed & 0xFFFFFFFF), np.uint32((seed >> 32) & 0xFFFFFFFF), np.uint64(offset)
