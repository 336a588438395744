"""Graph nodes and ``Function``: the user contract of PyTorch's torch.autograd.Function."""

from __future__ import annotations

import functools
import inspect
import itertools
import re
import sys
import traceback
import warnings
import weakref
from types import MappingProxyType
from typing import NamedTuple

from .. import capture
from ..hooks import ListHookHandle
from ..tensor import Tensor
from .grad_mode import _ANOMALY_LISTENERS, _set, _state, is_grad_enabled

_sequence = itertools.count()

# forward-mode AD's levels (``forward_ad``'s), innermost last: each the list of its dual
# tensors; here because ``Function.apply`` consults them for a custom Function's ``jvp``
_dual_levels: list = []
# nonzero while forward_ad reads tangents by reverse passes (``BackwardNode.apply``)
_tangent_pass = [0]
# forward_ad's steps around a custom Function under a level ("inputs": the tangents its jvp
# gets; "outputs": run jvp, make the outputs duals), set by forward_ad, which imports this
# module (a level exists only once it has been imported)
_forward_mode: dict = {}
# how many of clgrad.func's transforms (grad, vjp, jvp, jacrev, ...) and vmaps are running: a
# custom Function applied under one must be written for them, as PyTorch's (``_transformable``)
_transform_depth = [0]
_vmap_depth = [0]

FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you call "
    ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
    "graph a second time or if you need to access saved tensors after calling backward."
)


# the hooks and retained tensors of a node that has none: most nodes never get one, so each
# node makes its own dict at its first (``hooks_of``, ``retain``); read-only, so none is shared
_NONE = MappingProxyType({})


class Node:
    """A step of the backward graph: ``apply(grads of its outputs)`` -> grads of its inputs."""

    _pre_hooks = _NONE  # output_nr -> hooks of the tensor that is that output
    _retained = _NONE  # output_nr -> tensor whose .grad keeps what arrives (retain_grad)

    def __init__(self, next_functions=()):
        self.next_functions = tuple(next_functions)
        self._seq = next(_sequence)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{type(self).__name__} object at {id(self):#x}>"

    def hooks_of(self, output_nr) -> list:
        """The (mutable) list of hooks on output ``output_nr`` ("node": on the node itself)."""
        if self._pre_hooks is _NONE:
            self._pre_hooks = {}
        return self._pre_hooks.setdefault(output_nr, [])

    def retain(self, output_nr, ref):
        """Output ``output_nr``'s gradient goes to ``ref()``'s ``.grad`` (retain_grad)."""
        if self._retained is _NONE:
            self._retained = {}
        self._retained[output_nr] = ref

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs once this node has run and may return
        replacement input gradients, as ``torch.autograd.graph.Node.register_hook``."""
        hooks = self.hooks_of("node")
        hooks.append(fn)
        return ListHookHandle(hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node (after its tensors' own hooks) and may
        return replacement output gradients, as ``torch.autograd.graph.Node.register_prehook``.

        >>> x = clgrad.tensor([1.0, 2.0], requires_grad=True)
        >>> y = x * 3
        >>> handle = y.grad_fn.register_prehook(lambda grads: (grads[0] * 10,))
        >>> y.sum().backward()
        >>> x.grad
        tensor([30., 30.])
        """
        hooks = self.hooks_of("node_pre")
        hooks.append(fn)
        return ListHookHandle(hooks, fn)

    @property
    def metadata(self) -> dict:
        """A dict of this node's for the user's use, as ``torch.autograd.graph.Node.metadata``
        (made on first use).

        >>> y = clgrad.ones(1, requires_grad=True) * 2
        >>> y.grad_fn.metadata["note"] = "doubled"
        >>> y.grad_fn.metadata
        {'note': 'doubled'}
        """
        meta = self.__dict__.get("_metadata")
        if meta is None:
            meta = self.__dict__["_metadata"] = {}
        return meta

    def release(self):
        pass

    def __call__(self, *grads):
        """Runs this backward step by hand on the gradients of its outputs (one argument per
        output) and returns its inputs' gradients (a tuple when there are several), as calling
        a PyTorch ``grad_fn`` does.

        >>> x = clgrad.tensor([3.0], requires_grad=True)
        >>> (x * 2).grad_fn(clgrad.tensor([1.0]))
        (tensor([2.]), None)
        """
        meta = getattr(self, "output_meta", None)
        expected = len(meta) if meta is not None else 1
        if len(grads) != expected:
            raise TypeError(f"expected {expected} arguments, got {len(grads)} instead")
        result = tuple(self.apply(list(grads)))
        return result[0] if len(result) == 1 else result


def _hook_results(hook, new, expected) -> tuple:
    """A node hook's replacement gradients, as many as it was given (torch's check)."""
    new = tuple(new) if isinstance(new, (tuple, list)) else (new,)
    if len(new) != expected:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(new)}, but "
            f"expected {expected})"
        )
    return new


def _node_pre_hooks(node, grads) -> list:
    """``grad_fn.register_prehook``'s hooks: each sees the node's output gradients (after the
    tensors' own hooks) and may replace them."""
    for hook in node._pre_hooks["node_pre"]:
        new = hook(tuple(grads))
        if new is not None:
            grads = list(_hook_results(hook, new, len(grads)))
    return grads


def _node_post_hooks(node, in_grads, grads) -> tuple:
    """``grad_fn.register_hook``'s hooks: each sees (input gradients, output gradients) once
    the node has run and may replace the input gradients."""
    for hook in node._pre_hooks["node"]:
        new = hook(tuple(in_grads), tuple(grads))
        if new is not None:
            in_grads = _hook_results(hook, new, len(in_grads))
    return in_grads


class AccumulateGrad(Node):
    """The sink of a leaf: adds what arrives into ``variable.grad``."""

    _post_hooks = ()  # hook(variable) after each accumulation; a list once one is registered

    def __init__(self, variable):
        super().__init__()
        self.variable = variable

    def name(self):
        return "torch::autograd::AccumulateGrad"  # PyTorch's, for code that compares it

    def hooked(self, grad):
        """``grad`` through the leaf's tensor hooks (``register_hook``), in their order: what
        the leaf accumulates, and what ``autograd.grad`` gives for it."""
        for hook in self.variable._hooks or ():
            new = hook(grad)
            if new is not None:
                if grad is None:  # PyTorch's engine refuses it too
                    raise RuntimeError("can't replace a None gradient with a non-None value")
                grad = new
        return grad

    def accumulate(self, grad, create_graph):
        v = self.variable
        if capture.active is not None:
            capture.note_grad(v, "accumulate")
        if v._hooks:
            grad = self.hooked(grad)
        if grad is None:  # none reached the leaf (its hooks have seen the None)
            return
        own = self._pre_hooks
        if own and "node_pre" in own:  # the node's pre-hooks see it after the tensor's
            (grad,) = _node_pre_hooks(self, [grad])
        old = v._grad
        if old is None:
            if not isinstance(grad, Tensor):  # a sparse gradient (clgrad.ops.sparse)
                v._grad = grad if create_graph else grad.detach().clone()
            elif create_graph:
                v.grad = grad
            elif _owned(grad, v):
                v.grad = grad
            else:
                # a copy: the same gradient tensor may reach several leaves, or be the user's
                v.grad = grad.clone().detach()
        elif not (isinstance(old, Tensor) and isinstance(grad, Tensor)):
            _accumulate_sparse(v, old, grad, create_graph)
        elif create_graph:
            v.grad = old + grad
        else:
            old.add_(grad.detach())
        for hook in self._post_hooks:
            hook(v)
        if own and "node" in own:  # a leaf's node has no inputs: its hooks get ()
            for hook in own["node"]:
                hook((), (grad,))


def _accumulate_sparse(v, old, grad, create_graph):
    """Adds ``grad`` into ``v``'s ``.grad`` where either is sparse, as PyTorch's AccumulateGrad:
    sparse + sparse stays sparse (the entries of both), and a dense one on either side makes
    the sum dense (a dense ``.grad`` takes a sparse one in place)."""
    if not isinstance(grad, Tensor):
        if isinstance(old, Tensor):  # dense .grad, sparse new
            if create_graph:
                v._grad = grad + old
            else:
                grad._add_into(old)
        else:  # both sparse: a new tensor, the held one unchanged (another may hold it)
            v._grad = old + (grad if create_graph else grad.detach())
    else:  # sparse .grad, dense new: the dense sum
        v._grad = old + (grad if create_graph else grad.detach())


def _owned(grad, v) -> bool:
    """Whether a leaf may keep ``grad`` itself as its ``.grad``, as PyTorch's AccumulateGrad
    steals a gradient nobody else holds (saving a copy per leaf and step): a contiguous tensor
    of the leaf's shape, recording nothing, held only by the engine's one variable and the two
    frames on the way here (``run_backward`` lets go of the rest first), over a storage no
    other tensor shares but, for a view (a bias's gradient is a reduction reshaped), the base
    only it holds. A view taken is cut from its base: the leaf's ``.grad`` is no view."""
    if not (
        sys.getrefcount(grad) <= 4  # the engine's variable, accumulate's, ours, the call's
        and grad._grad_fn is None
        and not grad._requires_grad
        and grad._offset == 0
        and grad._shape == v._shape
        and grad.is_contiguous()
    ):
        return False
    base = grad._base
    if base is None:
        return sys.getrefcount(grad._storage) <= 2  # grad's own reference, the call's
    if (
        sys.getrefcount(base) <= 3  # grad's reference, ours, the call's
        and base._storage is grad._storage
        and sys.getrefcount(grad._storage) <= 3  # base's, grad's, the call's
        and grad._storage.nbytes == grad.numel() * grad.dtype.itemsize  # no memory beside it
    ):
        grad._base = grad._view_meta = None
        return True
    return False


class SavedTensor:
    """A tensor saved for backward, with the version it had; unpacking checks it is unchanged.
    Under ``autograd.graph.saved_tensors_hooks`` what is kept is the pack hook's result, given
    back through the unpack hook."""

    __slots__ = ("tensor", "version", "output_nr", "unpack_hook", "edge")

    def __init__(self, tensor, output_nr=None):
        # An output is kept without its grad_fn (that would be a cycle) and given it back later.
        self.tensor = tensor.detach() if output_nr is not None else tensor
        self.version = tensor._version
        self.output_nr = output_nr
        self.unpack_hook = None
        hooks = _state.saved_hooks
        if hooks:
            pack, self.unpack_hook = hooks[-1]
            # what the unpacked tensor's gradient flows to: the saved tensor's history (its
            # grad_fn, or its AccumulateGrad for a leaf), as PyTorch's, not the hooks' own
            # computation (a pack hook's ``2 * x`` is not differentiated through)
            self.edge = None
            if output_nr is None and tensor.requires_grad:
                if tensor._grad_fn is not None:
                    self.edge = (tensor._grad_fn, tensor._output_nr)
                else:
                    self.edge = (grad_accumulator(tensor), 0)
            self.tensor = pack(self.tensor)

    def unpack(self, node):
        if self.unpack_hook is not None:  # (the packed value is the hooks' business)
            t = self.unpack_hook(self.tensor)
            if not isinstance(t, Tensor):
                raise TypeError(
                    "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                    f"of type {type(t).__name__}"
                )
            if self.output_nr is not None:
                return Tensor._alias(t, grad_fn=node, output_nr=self.output_nr)
            if self.edge is not None:
                return Tensor._alias(t, grad_fn=self.edge[0], output_nr=self.edge[1])
            return t
        t = self.tensor
        if t._version != self.version:
            # as torch's: the node whose output the tensor is (a saved input: its history now)
            if self.output_nr is not None:
                raise modified_in_place(t, self.version, node, self.output_nr)
            raise modified_in_place(t, self.version)
        if self.output_nr is not None:
            return Tensor._alias(t, grad_fn=node, output_nr=self.output_nr)
        return t


_BACKWARD_SUFFIX = re.compile(r"Backward\d*$")  # a node's name, back to its op's


def modified_in_place(t, expected: int, fn=None, nr: int | None = None) -> RuntimeError:
    """PyTorch's error for a tensor saved for backward at version ``expected`` and written in
    place since, naming the node it is output ``nr`` of (default: its own history) by its op's
    name (SigmoidBackward0 -> Sigmoid); none for a tensor without history."""
    if fn is None:
        fn, nr = t._grad_fn, t._output_nr
    which = ""
    if fn is not None:
        which = f", which is output {nr} of {_BACKWARD_SUFFIX.sub('', fn.name())},"
    return RuntimeError(
        "one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{t.type()} {list(t.shape)}]{which} is at version "
        f"{t._version}; expected version {expected} instead. Hint: enable anomaly "
        "detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True, check_nan=False)."
    )


class FunctionCtx:
    """The ``ctx`` of a Function: save_for_backward, saved_tensors, needs_input_grad, ..."""

    # defaults live on the class: a ctx is made for every op call, so it starts empty
    _to_save = ()
    _saved = None
    _node = None
    _non_differentiable = ()
    _dirty = ()
    materialize_grads = True
    recording = False  # True when apply will record a node: forward may skip what backward needs

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}"
                )
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        """Keeps ``tensors`` for the Function's ``jvp``, as PyTorch's ctx: each a tensor or
        None. clgrad computes forward-mode products from ``backward`` (two reverse passes), so
        they are what ``ctx.saved_tensors`` gives while ``jvp`` runs (forward-mode AD).

        >>> class Double(clgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_forward(x)
        ...         return x * 2
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * 2
        >>> Double.apply(clgrad.tensor([1.0], requires_grad=True)).tolist()
        [2.0]
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError(  # PyTorch asserts it
                    "save_for_forward expects all arguments to be tensors; you should save "
                    "non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def mark_dirty(self, *tensors):
        """The inputs forward changed in place: returned as outputs, they stay the same tensor
        objects and their history continues from this node, as PyTorch's."""
        self._dirty = tensors

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value

    saved_for_forward = ()
    _in_jvp = False

    @property
    def saved_tensors(self):
        if self._in_jvp:  # jvp reads what forward kept with save_for_forward, as PyTorch's
            return self.saved_for_forward
        if self._saved is None:
            if self._node is None:  # not recorded: forward ran without grad
                return self._to_save
            raise RuntimeError(FREED)
        node = self._node()
        return tuple(None if s is None else s.unpack(node) for s in self._saved)

    @property
    def saved_variables(self):
        """``saved_tensors`` under its old name, with PyTorch's deprecation warning."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2
        )
        return self.saved_tensors


class BackwardNode(Node):
    """The node a ``Function`` records; its class is named ``<Function>Backward0``."""

    function = None

    def __init__(self, ctx, next_functions, outputs):
        self.next_functions = next_functions  # Node.__init__, inlined: a node per recorded op
        self._seq = next(_sequence)
        self.ctx = ctx
        # shape, dtype, device of each output: a missing output grad is materialized as zeros
        self.output_meta = [
            (o._shape, o.dtype, o._storage.device) if o is not None else None for o in outputs
        ]

    def apply(self, grads):
        seeded = self.seeded
        if seeded:
            # forward-mode AD made outputs of this node duals with its jvp's tangents: their
            # zero seeds are its last edges, each getting its output's gradient
            seeds = tuple([grads[i] for i in seeded])
            if _tangent_pass[0]:
                # the tangents are read from the seeds: the path through backward to the
                # inputs' seeds is not taken a second time
                return (None,) * (len(self.next_functions) - len(seeds)) + seeds
            return self._input_grads(grads) + seeds
        return self._input_grads(grads)

    def _input_grads(self, grads):
        ctx = self.ctx
        # a user's backward raises only when it reads ctx.saved_tensors (one that reads none
        # runs again, as PyTorch's); clgrad's own ops may keep what they saved elsewhere
        if ctx._saved is None and self._released and self.function._internal:
            raise RuntimeError(FREED)
        if ctx.materialize_grads and (len(grads) > 1 or grads[0] is None):
            grads = [
                Tensor._full(m[0], 0, m[1], m[2]) if g is None and m is not None else g
                for g, m in zip(grads, self.output_meta)
            ]
        result = self.function.backward(ctx, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_in = self.n_args
        if len(result) < n_in:
            if not self.function._internal:  # a user's backward answers for every input
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_in}, got {len(result)})"
                )
            result = result + (None,) * (n_in - len(result))
        elif len(result) > n_in:
            if any(r is not None for r in result[n_in:]):
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n_in}, got {len(result)})"
                )
            result = result[:n_in]
        if self.positions is not None:  # one per edge: the arguments that have one
            result = tuple([result[i] for i in self.positions])
        cast = None
        for i, (g, meta) in enumerate(zip(result, self.input_meta)):
            if g is None or meta is None:
                continue
            shape, dt = meta
            if g._shape != shape:
                # PyTorch's engine (validate_outputs) takes a gradient that its input expands
                # to, summed back to the input's shape (a backward that leaves a broadcast
                # undone), and refuses any other shape
                if not _broadcasts_to(g._shape, shape):
                    raise RuntimeError(
                        f"Function {self.name()} returned an invalid gradient at index {i} - got "
                        f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                    )
                if cast is None:
                    cast = list(result)
                g = cast[i] = g.sum_to_size(shape)
            # A gradient has its input's dtype, as PyTorch's engine makes it (validate_outputs):
            # a backward that works in the promoted dtype (cat, where, matmul, index ops of
            # mixed dtypes; a user's Function) needn't cast each gradient back itself.
            if g.dtype is not dt and self.next_functions[i][0] is not None:
                if cast is None:
                    cast = list(result)
                cast[i] = g.to(dt)
        return result if cast is None else tuple(cast)

    _released = False
    seeded = ()  # the outputs that forward AD made duals (their jvp tangents), in edge order
    # the forward's argument count, and the arguments with an edge (None: all of them)
    n_args = 0
    positions = None

    def release(self):
        # only a node that saved tensors is spent: one that saved none (a sum, a view, an add)
        # backpropagates again, as PyTorch's
        saved = self.ctx._saved
        if saved is not None and (
            any(s is not None for s in saved) or getattr(self.ctx, "holds_number", False)
        ):
            self.ctx._saved = None
            self._released = True


_plain_node_init = BackwardNode.__init__


def _recording_node_init(self, ctx, next_functions, outputs):
    """BackwardNode's constructor while anomaly mode is on, as PyTorch's: the node also keeps
    the stack of the forward call that made it and, made during a backward (create_graph), the
    node whose backward that was (its "parent")."""
    _plain_node_init(self, ctx, next_functions, outputs)
    frame = sys._getframe(1)
    self._anomaly_stack = "".join(traceback.format_stack(frame))
    self._anomaly_parent = RUNNING_NODE[0](frame)


# the engine's ``_running_node(frame)``, set when it loads (it imports this module: no cycle)
RUNNING_NODE = [lambda frame: None]


def _anomaly_switch(on: bool) -> None:
    BackwardNode.__init__ = _recording_node_init if on else _plain_node_init


_ANOMALY_LISTENERS.append(_anomaly_switch)


class BackwardCFunction(BackwardNode):
    """The base of a user's Function's nodes (clgrad's own ops' are plain BackwardNodes), as
    PyTorch's: code tells a custom Function's ``grad_fn`` by ``isinstance``.

    >>> class Double(clgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.factor = 2
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> y = Double.apply(clgrad.ones(1, requires_grad=True))
    >>> isinstance(y.grad_fn, clgrad.autograd.function.BackwardCFunction), y.grad_fn.factor
    (True, 2)
    """

    def __getattr__(self, name):
        # PyTorch's grad_fn of a custom Function is its ctx: what forward set on ctx, and
        # saved_tensors / needs_input_grad, read through the node
        if name.startswith("__") or name == "ctx":
            raise AttributeError(name)
        try:
            return getattr(self.ctx, name)
        except AttributeError:
            raise AttributeError(
                f"'{type(self).__name__}' object has no attribute '{name}'"
            ) from None


def _broadcasts_to(target, shape):
    return len(shape) <= len(target) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(target))
    )


def grad_accumulator(t) -> AccumulateGrad:
    """The one AccumulateGrad of leaf ``t`` while a graph holds it (a weak reference on t)."""
    acc = t._accumulator() if t._accumulator is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._accumulator = weakref.ref(acc)
    return acc


class GradientEdge(NamedTuple):
    """An edge of the backward graph: a node and which of its outputs (PyTorch's
    ``torch.autograd.graph.GradientEdge``); ``autograd.grad`` takes one among its inputs for the
    gradient arriving there."""

    node: Node
    output_nr: int


class _Held:
    """Stands in for the weak reference of ``t._accumulator`` when the accumulator must outlive
    the graphs that hold it: it carries the tensor's post-accumulate-grad hooks."""

    __slots__ = ("node",)

    def __init__(self, node):
        self.node = node

    def __call__(self):
        return self.node


def register_post_accumulate_grad_hook(t, hook):
    """``hook(t)`` runs after each backward has accumulated into leaf ``t``'s ``.grad``, as
    ``torch.Tensor.register_post_accumulate_grad_hook``; returns a handle whose ``remove()``
    takes it off. (DistributedDataParallel starts a bucket's all-reduce from these.)

    >>> w = clgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> seen = []
    >>> handle = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
    >>> (w * 3).sum().backward()
    >>> seen
    [[3.0, 3.0]]
    >>> handle.remove()
    """
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    acc = grad_accumulator(t)
    # the leaf holds its accumulator strongly from now on (a cycle the GC takes with the leaf):
    # the hooks live there and must survive between graphs
    t._accumulator = _Held(acc)
    if isinstance(acc._post_hooks, tuple):
        acc._post_hooks = []
    acc._post_hooks.append(hook)
    return ListHookHandle(acc._post_hooks, hook)


def _edge(t):
    if t is None:
        return (None, 0)
    # t.requires_grad and t.grad_fn without the properties (a call per edge of every op): a
    # view whose storage was written in place since its history was set gets a new one first
    if t._base is not None and t._view_version != t._storage.version:
        Tensor._refresh_view(t)
    if not t._requires_grad:
        return (None, 0)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    return (grad_accumulator(t), 0)


class _FunctionMeta(type):
    def __init__(cls, name, bases, ns):
        super().__init__(name, bases, ns)
        # clgrad's own ops call no Tensor ops in forward that would record: they skip
        # switching grad mode off when nothing needs recording. (A class a docstring's example
        # defines runs in a clgrad module's namespace but is a user's, as it shows one.)
        defined_in = sys._getframe(1).f_code.co_filename  # the class statement's file
        cls._internal = cls.__module__.startswith("clgrad.") and not defined_in.startswith(
            "<doctest"
        )
        # PyTorch names its own ops' nodes <Op>Backward0, a user's Function's <Name>Backward
        node_name = ns.get("node_name") or f"{name}Backward{'0' if cls._internal else ''}"
        base = BackwardNode if cls._internal else BackwardCFunction
        cls._node_class = type(node_name, (base,), {"function": cls})


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, ...)`` and ``backward(ctx, *grads)``; call ``.apply``.

    >>> class Square(clgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = clgrad.tensor([1.0, 3.0], requires_grad=True)
    >>> Square.apply(x).sum().backward()
    >>> x.grad
    tensor([2., 6.])
    """

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    # leading arguments with an edge in the graph even when they are Python numbers (a
    # declared elementwise op's operands); other non-tensor arguments have none, as in PyTorch
    number_edges = 0

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError

    # PyTorch's marker for a Function whose vmap rule torch.func may derive itself: clgrad's
    # vmap runs a Function once per sample, but allows one under vmap only where PyTorch does
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """PyTorch's batching rule of a Function (``generate_vmap_rule = True`` instead lets
        torch derive one). clgrad's vmap runs the Function once per sample and never calls it,
        but as in PyTorch a Function with neither cannot be applied under vmap.

        >>> class Double(clgrad.autograd.Function):
        ...     generate_vmap_rule = True
        ...     @staticmethod
        ...     def forward(x):
        ...         return x * 2
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         pass
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * 2
        >>> clgrad.func.vmap(Double.apply)(clgrad.tensor([[1.0], [2.0]]))
        tensor([[2.],
                [4.]])
        """
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )

    @staticmethod
    def jvp(ctx, *tangents):
        """The forward-mode rule: the output tangents from the input tangents (one per forward
        argument: None for a non-tensor or an integer tensor), as PyTorch's; forward AD
        (``autograd.forward_ad``, ``func.jvp``) uses it where a Function defines it.

        >>> class Cube(clgrad.autograd.Function):
        ...     @staticmethod
        ...     def forward(x):
        ...         return x ** 3
        ...     @staticmethod
        ...     def setup_context(ctx, inputs, output):
        ...         ctx.save_for_forward(inputs[0])
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         raise RuntimeError("forward mode does not call backward")
        ...     @staticmethod
        ...     def jvp(ctx, t):
        ...         (x,) = ctx.saved_tensors  # what save_for_forward kept
        ...         return 3 * x ** 2 * t
        >>> clgrad.func.jvp(Cube.apply, (clgrad.tensor([2.0]),), (clgrad.tensor([1.0]),))
        (tensor([8.]), tensor([12.]))
        """
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @staticmethod
    def setup_context(ctx, inputs, output):
        """PyTorch 2's form: a Function that defines it has ``forward(*args)`` without ctx,
        and saves what backward needs here, from the inputs and the output."""
        raise NotImplementedError

    @classmethod
    def _forward(cls, ctx, args):
        if cls.setup_context is Function.setup_context:
            return cls.forward(ctx, *args)
        out = cls.forward(*args)
        cls.setup_context(ctx, args, out)
        return out

    @classmethod
    def _bound(cls, args, kwargs) -> tuple:
        """A user's keyword arguments, bound to forward's parameters in order (with their
        defaults, for the setup_context form), as PyTorch's apply binds them: each is an
        input, whose gradient backward returns in its place."""
        ctx_form = cls.setup_context is Function.setup_context
        bound = inspect.signature(cls.forward).bind(*((None,) if ctx_form else ()), *args, **kwargs)
        if not ctx_form:
            bound.apply_defaults()
        return tuple(bound.args[1:] if ctx_form else bound.args)

    @classmethod
    def _transformable(cls):
        """PyTorch's refusals of a Function applied under a torch.func transform: one in the
        ``forward(ctx, ...)`` form, and under vmap one without a vmap rule."""
        if cls.setup_context is Function.setup_context:
            raise RuntimeError(
                "In order to use an autograd.Function with functorch transforms (vmap, grad, "
                "jvp, jacrev, ...), it must override the setup_context staticmethod. For more "
                "details, please see https://pytorch.org/docs/main/notes/extending.func.html"
            )
        if not _vmap_depth[0]:
            return
        own_rule = cls.vmap is not Function.vmap
        if cls.generate_vmap_rule and own_rule:
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
                "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
                "delete the overridden vmap staticmethod to avoid ambiguity. For more details, "
                "please see https://pytorch.org/docs/main/notes/extending.func.html"
            )
        if not (cls.generate_vmap_rule or own_rule):
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it does not have vmap support. "
                "Please override and implement the vmap staticmethod or set "
                "generate_vmap_rule=True. For more details, please see "
                "https://pytorch.org/docs/main/notes/extending.func.html"
            )

    @classmethod
    def apply(cls, *args, **kwargs):
        if (_transform_depth[0] or _vmap_depth[0]) and not cls._internal:
            cls._transformable()
        if kwargs or (not cls._internal and cls.setup_context is not Function.setup_context):
            args = cls._bound(args, kwargs)
        ctx = FunctionCtx()
        if not needs_recording(args):
            # Nothing to record; a user's forward still runs without grad, as in PyTorch.
            if cls._internal:
                out = cls.forward(ctx, *args)
                # clgrad's view ops view their first argument
                if (
                    isinstance(out, Tensor)
                    and args
                    and isinstance(args[0], Tensor)
                    and out._storage is args[0]._storage
                ):
                    mark_view(out, args[0], cls.__name__)
                else:
                    _own_outputs(out, args)
                return out
            ctx.needs_input_grad = (False,) * len(args)  # (torch's ctx has it in forward too)
            prev = is_grad_enabled()
            _set(False)
            try:
                out = cls._forward(ctx, args)
            finally:
                _set(prev)
            _mark_views(cls, [out] if not isinstance(out, tuple) else out, args, False)
            return out
        ctx.needs_input_grad = tuple([isinstance(a, Tensor) and a.requires_grad for a in args])
        ctx.recording = True
        tangents = None
        if _dual_levels and _dual_levels[-1] and not cls._internal:
            # read before forward runs: an input it changes in place gets this node's history
            tangents = _forward_mode["inputs"](cls, args)
        try:
            _set(False)
            out = cls._forward(ctx, args)
        finally:
            _set(True)  # recording happens only with grad mode on
        single = not isinstance(out, tuple)
        outputs = [out] if single else list(out)
        dirty = ctx._dirty
        for t in dirty:
            if not _is_among(t, args):
                warnings.warn(
                    "ctx.mark_dirty() received a tensor that was not an input. Only input "
                    "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                    UserWarning,
                    stacklevel=3,
                )
            if not _is_among(t, outputs):
                raise RuntimeError(
                    "Some elements marked as dirty during the forward method were not returned "
                    "as output. The inputs that are modified inplace must all be outputs of the "
                    "Function."
                )
        if len(outputs) > 1 and any(t._base is not None for t in dirty):
            raise RuntimeError(
                "If your Function modifies inplace an input that is a view of another Tensor, "
                "your Function cannot return more than one Tensor. This is not supported by the "
                "current autograd engine. You should either make sure the input is not a view "
                "(using .clone() for example) or make your Function only return one Tensor "
                "(potentially splitting it into two Functions: one doing the inplace that "
                "returns a single Tensor and a second one that does the other operations). You "
                "can ask on the forum https://discuss.pytorch.org/ if you need help to do this "
                "change."
            )
        for i, o in enumerate(outputs):
            if isinstance(o, Tensor) and _is_among(o, args):
                if dirty and _is_among(o, dirty) and o._base is None:
                    # changed in place: the same object, its history rebased on this node below
                    if o._grad_fn is None and o._requires_grad:
                        raise RuntimeError(
                            "a leaf Variable that requires grad has been used in an in-place "
                            "operation."
                        )
                    o._bump_version()  # as torch's mark_dirty: saved copies of it are stale
                    continue
                outputs[i] = Tensor._alias(o)  # an input returned as is: a new tensor object
        _mark_views(cls, outputs, args)
        # the edges and (shape, dtype) of the inputs, in one pass (the edge reads the input's
        # history as forward left it)
        # An edge per tensor argument, as PyTorch's (a Function's other arguments have none),
        # and per number among a declared op's operands (torch's wrapped scalars).
        edges, metas, positions = [], [], []
        numbers = cls.number_edges
        for i, a in enumerate(args):
            if isinstance(a, Tensor):
                edges.append(_edge(a))
                metas.append((a._shape, a.dtype))
            elif i < numbers:
                edges.append((None, 0))
                metas.append(None)
            else:
                continue
            positions.append(i)
        node = cls._node_class(
            ctx,
            tuple(edges),
            [o if isinstance(o, Tensor) else None for o in outputs],
        )
        node.input_meta = metas
        node.n_args = len(args)
        if len(positions) != len(args):
            node.positions = positions
        non_diff = ctx._non_differentiable
        for i, o in enumerate(outputs):
            if isinstance(o, Tensor) and o.dtype.category >= 2 and not _is_among(o, non_diff):
                o._requires_grad = True
                o._grad_fn = node
                o._output_nr = i
        ctx._node = weakref.ref(node)  # node -> ctx only: no cycle to wait for the GC
        ctx._saved = [None if t is None else _saved(t, outputs) for t in ctx._to_save]
        ctx._to_save = ()
        if tangents is not None:
            _forward_mode["outputs"](cls, ctx, node, args, tangents, outputs)
        return outputs[0] if single else tuple(outputs)


FunctionMeta = _FunctionMeta  # PyTorch's name of the metaclass


class InplaceFunction(Function):
    """PyTorch's base of a Function that may work in place: an ``inplace`` flag on the
    (legacy-style) instance, as ``torch.autograd.function.InplaceFunction``.

    >>> class Neg(clgrad.autograd.function.InplaceFunction):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return -x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return -g
    >>> Neg.apply(clgrad.tensor([1.0]))
    tensor([-1.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


def apply_new_output(cls, args, positions=None):
    """``cls.apply(*args)`` where it records, for a Function whose forward returns one new
    tensor (no input, no view of one) and whose arguments at ``positions`` (all by default)
    have an edge, the others none (dims, flags, a number operand PyTorch takes as a Scalar):
    what a declared elementwise op or reduction records on each call of a training step,
    without the generic path's searches (about half of such an op's host time)."""
    ctx = FunctionCtx()
    ctx.recording = True
    out = cls.forward(ctx, *args)
    edged = args if positions is None else [args[i] for i in positions]
    metas = [(a._shape, a.dtype) if isinstance(a, Tensor) else None for a in edged]
    ctx.needs_input_grad = tuple([isinstance(a, Tensor) and a.requires_grad for a in args])
    node = cls._node_class(
        ctx, tuple([(None, 0) if m is None else _edge(a) for a, m in zip(edged, metas)]), [out]
    )
    node.input_meta = metas
    node.n_args = len(args)
    if len(edged) < len(args):
        node.positions = positions
    if out.dtype.category >= 2:
        out._requires_grad = True
        out._grad_fn = node
        out._output_nr = 0
    ctx._node = weakref.ref(node)
    ctx._saved = [
        None if t is None else SavedTensor(t, 0) if t is out else SavedTensor(t)
        for t in ctx._to_save
    ]
    ctx._to_save = ()
    return out


def needs_recording(args) -> bool:
    """Whether an op on ``args`` records a node: grad mode on and an input requires grad."""
    if not _state.enabled:  # is_grad_enabled(), a call saved on every op
        return False
    for a in args:
        # a view's requires_grad may change when its base is written in place
        if isinstance(a, Tensor) and (
            a._requires_grad or (a._base is not None and a.requires_grad)
        ):
            return True
    return False


def _is_among(t, tensors) -> bool:
    for x in tensors:
        if x is t:
            return True
    return False


def _saved(t, outputs) -> SavedTensor:
    """``t`` saved for backward, as the output it is (if it is one)."""
    for i, o in enumerate(outputs):
        if o is t:
            return SavedTensor(t, i)
    return SavedTensor(t)


# How a view was made, when that restricts writing into it in place (PyTorch's CreationMeta):
# ("no_grad",) made with grad mode off; ("multi", op name, output number) an output of an op
# that returns several views (split, unbind, chunk), or a view of one.
NO_GRAD_VIEW = ("no_grad",)
INFERENCE_VIEW = ("inference",)  # a no-grad view made in inference mode: its own message


def mark_view(o, a, name):
    """Records that output ``o`` of op ``name`` is a view of input ``a`` (sharing its storage):
    its ``_base`` is a's base (or a), as PyTorch's ``._base``."""
    base = a._base
    o._base = a if base is None else base
    o._view_version = a._storage.version
    meta = a._view_meta
    if not is_grad_enabled():
        o._view_meta = INFERENCE_VIEW if _state.inference else NO_GRAD_VIEW
    elif meta is not None:
        inherited = meta is NO_GRAD_VIEW or meta is INFERENCE_VIEW
        o._view_meta = meta if inherited else ("multi", name, 0)


def _mark_views(cls, outputs, args, recording=True):
    for o in outputs:
        if isinstance(o, Tensor):
            for a in args:
                if isinstance(a, Tensor) and a._storage is o._storage:
                    mark_view(o, a, cls.__name__)
                    break
    if cls._internal:
        _own_outputs(outputs, args)
    elif is_grad_enabled():
        _custom_views(cls, outputs, args, recording)


def _custom_views(cls, outputs, args, recording):
    """A user Function's outputs that are views (of an input, returned as is or viewed, or of
    a temporary of its forward) refuse in-place writes that autograd would record, as
    PyTorch's: the view+inplace logic would bypass the Function's backward. With several
    differentiable outputs (recorded) the message is that of a function returning multiple
    views."""
    views = [
        (i, o)
        for i, o in enumerate(outputs)
        if isinstance(o, Tensor) and o._base is not None and not _is_among(o, args)
    ]  # (an input written in place, mark_dirty, is returned itself: a view as it was)
    if not views:
        return
    n = sum(1 for o in outputs if isinstance(o, Tensor) and o.dtype.category >= 2)
    kind = "multi" if recording and n > 1 else "custom"
    for i, o in views:
        o._view_meta = (kind, cls.__name__, i)


def _own_outputs(outputs, args):
    """An op's outputs that view no input but a temporary of its forward (conv2d's reshaped
    product, viewed under forward's no_grad) become tensors of their own, as PyTorch's native
    ops return them: no ``_base``, and no no-grad view that an in-place write would refuse.
    (A user's Function keeps such views, as PyTorch's custom Functions do.)"""
    for o in outputs if isinstance(outputs, (tuple, list)) else (outputs,):
        if isinstance(o, Tensor) and o._base is not None:
            for a in args:
                if isinstance(a, Tensor) and a._storage is o._storage:
                    break
            else:
                o._base = o._view_meta = None


def once_differentiable(backward):
    """Marks a custom Function's ``backward`` as not differentiable itself, as PyTorch's
    ``torch.autograd.function.once_differentiable``: it runs without recording, so asking for
    a second derivative through it raises RuntimeError.

    >>> class Cube(clgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     @clgrad.autograd.function.once_differentiable
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 3 * x * x * g
    >>> x = clgrad.tensor([2.0], requires_grad=True)
    >>> Cube.apply(x).sum().backward()
    >>> x.grad
    tensor([12.])
    """

    @functools.wraps(backward)
    def wrapper(ctx, *args):
        previous = _state.enabled
        _set(False)
        try:
            result = backward(ctx, *args)
        finally:
            _set(previous)
        # As PyTorch's: under create_graph (grad mode on, a gradient that requires grad) the
        # gradients require grad through an Error node, so a backward that reaches them
        # raises instead of giving a silently wrong second derivative.
        if not (previous and any(isinstance(a, Tensor) and a.requires_grad for a in args)):
            return result
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        node = _DelayedError([_edge(o) if isinstance(o, Tensor) else (None, 0) for o in outputs])
        wrapped = tuple(
            Tensor._alias(o, grad_fn=node, output_nr=i) if isinstance(o, Tensor) else o
            for i, o in enumerate(outputs)
        )
        return wrapped[0] if single else wrapped

    return wrapper


class _DelayedError(Node):
    """What a ``once_differentiable`` backward's gradients record under create_graph: a
    backward that reaches it raises (PyTorch's ``Error`` node)."""

    def name(self):
        return "torch::autograd::Error"  # PyTorch's, for code that compares it

    def apply(self, grads):
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )
