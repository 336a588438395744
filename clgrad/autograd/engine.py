"""The backward engine: iterative (a 100,000-op chain is fine), releasing the graph as it goes."""

from __future__ import annotations

import heapq
import sys
import threading
import warnings

from ..tensor import Tensor
from .function import (
    RUNNING_NODE,
    AccumulateGrad,
    GradientEdge,
    _node_post_hooks,
    _node_pre_hooks,
    grad_accumulator,
)
from .grad_mode import ANOMALY, _set, is_grad_enabled


def _collect(roots):
    """Every node reachable from ``roots`` and how many edges point at each (no recursion)."""
    deps: dict = {}
    seen = set()
    # once each: two outputs of one node are two roots, and a node walked twice would count
    # its edges twice (its inputs would wait forever for the second count)
    stack = list(dict.fromkeys(n for n in roots if n is not None))
    for n in stack:
        seen.add(n)
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen, deps


def _needed(nodes, targets):
    """The nodes on some path to a target, found by walking the edges backwards."""
    parents: dict = {}
    for node in nodes:
        for nxt, _ in node.next_functions:
            if nxt is not None:
                parents.setdefault(nxt, []).append(node)
    needed = set(targets)
    stack = list(targets)
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in needed:
                needed.add(p)
                stack.append(p)
    return needed


# Callbacks queued during a backward (queue_callback), per thread as grad mode is: run when the
# backward that was running when they were queued finishes (a reentrant one's, its own).


class _ThreadCallbacks(threading.local):
    callbacks = None  # every thread's default (``grad_mode._ThreadState`` says why)
    restricted = False  # the backward now running was given ``inputs`` (autograd.grad's too)
    depth = 0  # backwards running in this thread, one inside another's node (reentrant)
    limit = None  # the recursion limit before a reentrant backward raised it


_local = _ThreadCallbacks()


def queue_callback(fn):
    """Runs ``fn()`` once the backward now running has finished (every gradient accumulated),
    as ``torch.autograd.Variable._execution_engine.queue_callback``; only during a backward (in a
    hook). DistributedDataParallel waits for its gradient all-reduces this way.

    >>> x = clgrad.tensor([1.0], requires_grad=True)
    >>> order = []
    >>> def hook(g):
    ...     clgrad.autograd.engine.queue_callback(lambda: order.append("after"))
    ...     order.append("hook")
    >>> _ = x.register_hook(hook)
    >>> (x * 2).sum().backward()
    >>> order
    ['hook', 'after']
    """
    callbacks = _local.callbacks
    if callbacks is None:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    callbacks.append(fn)


def _run_callbacks(callbacks):
    # a callback may queue another: it runs too, in order
    while callbacks:
        callbacks.pop(0)()


def _on_input_device(node, nr, grad):
    """``grad`` (0-d) on the device of the tensor that is ``node``'s output ``nr``: a 0-d cpu
    tensor may join an op on another device, and its gradient comes back on the cpu, as
    PyTorch's engine moves it (validate_outputs). Only a 0-d gradient can be elsewhere."""
    if isinstance(node, AccumulateGrad):
        device = node.variable._storage.device
    else:
        meta = getattr(node, "output_meta", None)
        device = meta[nr][2] if meta and meta[nr] is not None else None
    if device is None or grad._storage.device is device:
        return grad
    return grad.to(device)


def _accumulate(buffer, i, grad):
    if grad is None:
        return
    old = buffer[i]
    if old is None:
        buffer[i] = grad
        return
    try:
        buffer[i] = old + grad
    except TypeError:
        # a dense gradient plus a sparse one (a sparse embedding's weight also used densely):
        # a Tensor does not add a sparse tensor, the sparse one adds the dense (a dense sum),
        # as torch's engine gives; a try costs nothing on the dense path
        if isinstance(old, Tensor) and not isinstance(grad, Tensor):
            buffer[i] = grad + old
        else:
            raise


def run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs=None, capture=False):
    """Runs backward from ``tensors``.

    With ``capture`` the gradients reaching ``inputs`` are returned instead of accumulated
    (``autograd.grad``); with ``inputs`` alone only those tensors' ``.grad`` are filled.
    """
    # each backward (a reentrant one in a node's backward too) runs the callbacks queued
    # during it when it ends, as PyTorch's graph tasks do
    callbacks, _local.callbacks = _local.callbacks, []
    restricted, _local.restricted = _local.restricted, inputs is not None
    depth = _local.depth
    _local.depth = depth + 1
    if depth and sys.getrecursionlimit() < _FRAMES_PER_REENTRANT * (depth + 10):
        # a backward inside a node's backward (a Function that calls backward, checkpoint)
        # nests Python frames, about ten a level: PyTorch runs thousands deep (its engine
        # moves to a new thread), so the limit grows with the depth instead of raising
        # (back to what it was when the outermost backward ends)
        if _local.limit is None:
            _local.limit = sys.getrecursionlimit()
        sys.setrecursionlimit(_FRAMES_PER_REENTRANT * (depth + 10))
    try:
        captured = _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, capture)
        _run_callbacks(_local.callbacks)
    finally:
        _local.restricted = restricted
        _local.callbacks = callbacks
        _local.depth = depth
        if not depth and _local.limit is not None:
            sys.setrecursionlimit(_local.limit)
            _local.limit = None
    return captured


_FRAMES_PER_REENTRANT = 100  # a generous bound on the frames a reentrant level takes


def _is_checkpoint_valid() -> bool:
    """Whether the backward now running goes everywhere (PyTorch's name): not one given
    ``inputs`` (``autograd.grad``, ``backward(inputs=...)``), whose gradients a reentrant
    checkpoint's inner backward, which accumulates into ``.grad``, cannot deliver.

    >>> clgrad.autograd.engine._is_checkpoint_valid()
    True
    """
    return not _local.restricted


def _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, capture):
    roots = [(t.grad_fn or grad_accumulator(t), t._output_nr) for t in tensors]
    nodes, deps = _collect([n for n, _ in roots])
    targets = {}  # (node, output_nr) -> position in inputs
    if inputs is not None:
        for k, t in enumerate(inputs):
            if isinstance(t, GradientEdge):
                key = (t.node, t.output_nr)
            elif t.grad_fn is not None:
                key = (t.grad_fn, t._output_nr)
            else:
                key = (grad_accumulator(t), 0)
            targets[key] = k
        needed = _needed(nodes, {n for n, _ in targets})
    else:
        needed = nodes
    pruned = needed is not nodes  # else every node reached is needed: no lookup per edge
    captured = [None] * (len(inputs) if inputs is not None else 0)

    buffers: dict = {}
    for (node, nr), g in zip(roots, grad_tensors):
        buf = buffers.setdefault(node, [None] * _n_outputs(node))
        _accumulate(buf, nr, g)
    ready = [(-n._seq, id(n), n) for n, _ in roots if deps.get(n, 0) == 0 and n in needed]
    ready = list({id(e[2]): e for e in ready}.values())
    heapq.heapify(ready)

    prev = is_grad_enabled()
    in_grads = g = buf = None
    # buffers the engine made itself, by id, which a view's gradient may be added into in
    # place (``accumulate_into``); an id leaves the set when its buffer is handed on
    owned: set = set()
    fast_slices = not create_graph and not ANOMALY[0]
    node = None
    try:
        _set(create_graph)
        while ready:
            _, _, node = heapq.heappop(ready)
            grads = buffers.pop(node, None) or [None] * _n_outputs(node)
            if owned:
                for g in grads:
                    owned.discard(id(g))
            if node._pre_hooks:  # (most nodes have none: no loop to set up)
                for nr, hooks in node._pre_hooks.items():
                    if type(nr) is not int:  # the node's own hooks ("node", "node_pre")
                        continue
                    for hook in hooks:
                        # called with None too where this output got no gradient (the node
                        # runs for its others), as PyTorch's tensor hooks are
                        new = hook(grads[nr])
                        if new is not None:
                            grads[nr] = _replaced(grads[nr], new)
            if node._retained:
                for nr, ref in node._retained.items():
                    t = ref()
                    if t is not None and grads[nr] is not None:
                        g = grads[nr] if create_graph else grads[nr].detach()
                        t.grad = g.clone() if t.grad is None else t.grad + g
            hit = False
            sink = isinstance(node, AccumulateGrad)
            for nr, g in enumerate(grads) if targets else ():
                k = targets.get((node, nr))
                if k is not None:
                    hit = True
                    if capture:  # (a leaf's tensor hooks first, as in its accumulation)
                        captured[k] = node.hooked(g) if sink and node.variable._hooks else g
                    elif g is not None and sink:
                        node.accumulate(g, create_graph)
                    elif g is not None:
                        t = inputs[k]  # (a non-leaf: ``_grad``, as ``.grad`` would warn)
                        retained = node._retained.get(nr) if node._retained else None
                        if retained is None or retained() is not t:  # (else .grad has it)
                            t._grad = g.detach() if t._grad is None else t._grad + g.detach()
            if node._pre_hooks and "node_pre" in node._pre_hooks and not sink:
                grads = _node_pre_hooks(node, grads)
            if sink:
                if not hit and inputs is None and grads[0] is not None:
                    # only ``g`` holds the gradient now, so the leaf may keep it (_owned)
                    g = grads[0]
                    grads = in_grads = None
                    node.accumulate(g, create_graph)
                    g = None
                elif not hit and inputs is None and node.variable._hooks:
                    # no gradient reached the leaf: its hooks still see None, as PyTorch's
                    node.accumulate(None, create_graph)
                continue
            if (
                hit
                and capture
                and not any(nxt in needed for nxt, _ in node.next_functions if nxt is not None)
            ):
                continue
            into = getattr(node, "function", None)
            into = getattr(into, "accumulate_into", None) if fast_slices else None
            if into is not None and grads[0] is not None and not node._pre_hooks:
                # a view's gradient added into its input's gradient where it lies, in a buffer
                # of the engine's own: no zeros of the input's shape per view (a sequence
                # model's x[t] at each of its steps, an LSTM's four gate chunks)
                nxt, nr = node.next_functions[0]
                if nxt is not None and not (pruned and nxt not in needed):
                    buf = buffers.get(nxt)
                    if buf is None:
                        buf = buffers[nxt] = [None] * _n_outputs(nxt)
                    total = buf[nr]
                    if total is not None and id(total) not in owned:
                        total = total.clone()  # a gradient others may hold: not written
                    buf[nr] = into(node.ctx, total, grads[0])
                    owned.add(id(buf[nr]))
                    left = deps[nxt] - 1
                    deps[nxt] = left
                    if left == 0:
                        heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
                if not retain_graph:
                    node.release()
                grads = total = buf = None
                continue
            if (grads[0] is None) if len(grads) == 1 else all(g is None for g in grads):
                in_grads = (None,) * len(node.next_functions)
            else:
                in_grads = node.apply(grads)
                if ANOMALY[0]:
                    _check_nan(node, in_grads)
                if node._pre_hooks and "node" in node._pre_hooks:
                    in_grads = _node_post_hooks(node, in_grads, grads)
            if not retain_graph:
                node.release()
            for (nxt, nr), g in zip(node.next_functions, in_grads):
                if nxt is None or (pruned and nxt not in needed):
                    continue
                if g is not None and not g._shape:
                    g = _on_input_device(nxt, nr, g)
                buf = buffers.get(nxt)
                if buf is None:
                    buf = buffers[nxt] = [None] * _n_outputs(nxt)
                _accumulate(buf, nr, g)
                left = deps[nxt] - 1
                deps[nxt] = left
                if left == 0:
                    heapq.heappush(ready, (-nxt._seq, id(nxt), nxt))
            in_grads = g = buf = None  # the buffers hold them now (see _owned)
    except Exception as e:
        if ANOMALY[0] and node is not None and not getattr(e, "_anomaly_reported", False):
            _report_anomaly(node)
            e._anomaly_reported = True  # (an enclosing backward does not report it again)
        raise
    finally:
        _set(prev)
    # the end of a backward pass ends a training step's launches: queued now, a step's
    # deferred launches are the same list each step, whose fused plan the runtime keeps
    # (cut wherever the deferred list filled up, they would make a new plan most steps)
    for device in {t._storage.device for t in tensors}:
        device.flush()
    return captured


def _replaced(grad, new):
    """A tensor hook's replacement for ``grad``: refused for a gradient that is None, as
    PyTorch's engine refuses it (a hook may not create a gradient where none arrived)."""
    if grad is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    return new


def _running_node(frame):
    """The node whose backward is running in ``frame``'s thread (the innermost backward), or
    None outside a backward: anomaly mode's parent of a node made then."""
    code = _run_backward.__code__
    while frame is not None:
        if frame.f_code is code:
            return frame.f_locals.get("node")
        frame = frame.f_back
    return None


RUNNING_NODE[0] = _running_node


def _anomaly_warn(message: str) -> None:
    # warnings made errors print instead: the backward's own error is the one to raise
    try:
        warnings.warn(message, UserWarning, stacklevel=3)
    except UserWarning:
        print(message, file=sys.stderr)


def _report_anomaly(node) -> None:
    """Anomaly mode's warnings for an error in ``node``'s backward, as PyTorch's: the forward
    call that made it, then those that made its parents (nodes made in a backward)."""
    no_info = (
        "No forward pass information available. Enable detect anomaly during forward pass for "
        "more information."
    )
    lead, what = "Error detected in {}.", "caused the error"
    while node is not None:
        stack = getattr(node, "_anomaly_stack", None)
        if stack is None:
            _anomaly_warn(f"{lead.format(node.name())} {no_info}")
            return
        _anomaly_warn(f"{lead.format(node.name())} Traceback of forward call that {what}:\n{stack}")
        lead, what = (
            "\n\nPrevious calculation was induced by {}.",
            "induced the previous calculation",
        )
        node = getattr(node, "_anomaly_parent", None)


def _check_nan(node, in_grads):
    """Anomaly mode's check, as torch's: the first gradient a backward function returned that
    holds a NaN raises, naming the function and the output's position."""
    for i, g in enumerate(in_grads):
        if isinstance(g, Tensor) and g.is_floating_point() and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _n_outputs(node):
    meta = getattr(node, "output_meta", None)
    return len(meta) if meta is not None else 1


def _make_grads(tensors, grads):
    out = []
    for i, (t, g) in enumerate(zip(tensors, grads)):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {t.dtype}"
                )
            g = Tensor._full(t._shape, 1, t.dtype, t.device)
        elif tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] "
                f"has a shape of {t.shape}."
            )
        out.append(g)
    return out


def _as_list(x):
    if x is None:
        return None
    if isinstance(x, GradientEdge):  # (a named tuple, but one input)
        return [x]
    return [x] if not isinstance(x, (list, tuple)) else list(x)


def _check_requires_grad(tensors):
    for i, t in enumerate(tensors):
        if not t.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulates the gradients of ``tensors`` into the ``.grad`` of the leaves.

    >>> x = clgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> clgrad.autograd.backward([(x * 3).sum()])
    >>> x.grad
    tensor([3., 3.])
    """
    tensors = _as_list(tensors)
    grads = _as_list(grad_tensors) or [None] * len(tensors)
    _check_requires_grad(tensors)
    grads = _make_grads(tensors, grads)
    if retain_graph is None:
        retain_graph = create_graph
    inputs = _as_list(inputs)
    if inputs is not None and not inputs:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    if create_graph:
        _warn_create_graph()
    run_backward(tensors, grads, retain_graph, create_graph, inputs=inputs)


_create_graph_warned = [False]


def _warn_create_graph():
    """PyTorch's warning for ``backward(create_graph=True)``: given once (every time under
    ``set_warn_always(True)``); ``autograd.grad`` does not give it."""
    # clgrad.set_warn_always's flag, read from the loaded package: autograd sits below the
    # package's __init__ in the layers and may not import it
    root = sys.modules[__name__.partition(".")[0]]
    if _create_graph_warned[0] and not root.is_warn_always_enabled():
        return
    _create_graph_warned[0] = True
    warnings.warn(
        "Using backward() with create_graph=True will create a reference cycle between the "
        "parameter and its gradient which can cause a memory leak. We recommend using "
        "autograd.grad when creating the graph to avoid this. If you have to use this function, "
        "make sure to reset the .grad fields of your parameters to None after use to break the "
        "cycle and avoid the leak.",
        UserWarning,
        stacklevel=3,
    )


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    retain_graph=None,
    create_graph=False,
    only_inputs=True,
    allow_unused=None,
    is_grads_batched=False,
    materialize_grads=False,
):
    """The gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    >>> x = clgrad.tensor(3.0, requires_grad=True)
    >>> clgrad.autograd.grad(x ** 3, x)[0].item()
    27.0
    """
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:  # one backward per slice of the gradients' leading dim, stacked
        return _batched_grad(
            outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
            materialize_grads,
        )  # fmt: skip
    outputs, inputs = _as_list(outputs), _as_list(inputs)
    _check_requires_grad(outputs)
    for t in inputs:
        if isinstance(t, GradientEdge):
            if materialize_grads:
                raise RuntimeError(
                    "materialize_grads cannot be used when the given input is a GradientEdge"
                )
        elif not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, _as_list(grad_outputs) or [None] * len(outputs))
    if retain_graph is None:
        retain_graph = create_graph
    result = run_backward(outputs, grads, retain_graph, create_graph, inputs=inputs, capture=True)
    for i, (g, t) in enumerate(zip(result, inputs)):
        if g is None:
            if materialize_grads:
                result[i] = Tensor._full(t._shape, 0, t.dtype, t.device)
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {i} appears to not have been used in the "
                    "graph. Set allow_unused=True if this is the desired behavior."
                )
    return tuple(result)


def _batched_grad(
    outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads
):
    """``grad`` with ``is_grads_batched``: each grad_output has an extra leading dim of vectors
    (torch vmaps over it); here a backward per vector, the results stacked."""
    grad_outputs = _as_list(grad_outputs)
    if grad_outputs is None or any(g is None for g in grad_outputs):
        raise RuntimeError("is_grads_batched=True requires grad_outputs for every output")
    count = grad_outputs[0].shape[0]
    per_slice = [
        grad(
            outputs,
            inputs,
            [g[i] for g in grad_outputs],
            True,
            create_graph,
            allow_unused=allow_unused,
            materialize_grads=materialize_grads,
        )  # fmt: skip
        for i in range(count)
    ]
    result = []
    for k in range(len(per_slice[0]) if per_slice else len(_as_list(inputs))):
        column = [s[k] for s in per_slice]
        if any(c is None for c in column):
            result.append(None)
            continue
        first = column[0]
        stacked = first.new_empty((count, *first.shape))
        for i, c in enumerate(column):
            stacked[i] = c
        result.append(stacked)
    return tuple(result)
