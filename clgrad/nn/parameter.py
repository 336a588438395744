"""``Parameter`` and ``Buffer``: Tensors that a Module registers when they are assigned as
attributes; the uninitialized placeholders of the lazy modules."""

from __future__ import annotations

from .._torch_function import PLAIN, _disabled_torch_function_impl
from ..tensor import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter, as ``torch.nn.Parameter``: assigning one as an
    attribute of a ``Module`` registers it, so it shows up in ``parameters()`` and the state
    dict. It is a leaf that requires grad unless ``requires_grad=False``; ``Parameter(data)``
    shares ``data``'s storage (detached from its history), and ``Parameter()`` is empty.

    >>> p = clgrad.nn.Parameter(clgrad.ones(2))
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    >>> p.is_leaf, isinstance(p, clgrad.Tensor)
    (True, True)
    """

    __slots__ = ()
    # ops on a parameter give plain Tensors, as torch's; and defining these classes does not
    # switch clgrad's __torch_function__ dispatch on
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected a Tensor, got {type(data).__name__}")
        p = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        p._counter = data._counter  # as PyTorch's, which wraps data.detach()
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        # a copy of the data alone, in the parameter's own class, as PyTorch's: its .grad is
        # not copied (a deep-copied model, e.g. the best one kept while training, has none)
        p = type(self)(self.detach().clone(), self.requires_grad)
        memo[id(self)] = p
        return p

    def __reduce__(self):
        # its numbers and its dtype's name (a bfloat16 parameter's numbers are float32)
        host = self.detach().cpu()._numpy()
        return (
            _rebuild_parameter,
            (host, str(self.device), self._requires_grad, self.dtype.name),
            self.__dict__ or None,  # the attributes a program set (not deep-copied: torch's)
        )


def _rebuild_parameter(array, device, requires_grad, dtype_name=None):
    from ..ops.creation import tensor

    return Parameter(tensor(array, dtype=dtype_name, device=device), requires_grad)


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet, like ``torch.nn.UninitializedParameter``: an
    empty placeholder holding the device and dtype; ``materialize(shape)`` gives it storage of
    that shape and turns it into a plain ``Parameter`` (the same object, so a module's
    attribute and any reference to it see the change). The lazy modules (``LazyLinear``) hold
    these until their first forward.

    >>> p = clgrad.nn.UninitializedParameter()
    >>> p
    <UninitializedParameter>
    >>> p.materialize((2, 3))
    >>> type(p).__name__, p.shape
    ('Parameter', clgrad.Size([2, 3]))
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None) -> UninitializedParameter:
        from ..ops.creation import empty

        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Gives the placeholder uninitialized storage of ``shape`` (on ``device``, in
        ``dtype``, by default its own) and makes it what it stands for (``cls_to_become``)."""
        from ..ops.creation import empty

        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.data = empty(shape, device=device or self.device, dtype=dtype or self.dtype)
        self.__class__ = self.cls_to_become

    def __repr__(self):
        return "<UninitializedParameter>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedParameter(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]

    def __reduce__(self):  # a placeholder again (a Parameter's pickle would be an empty one)
        return (UninitializedParameter, (self.requires_grad, str(self.device), self.dtype))


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet, like ``torch.nn.UninitializedBuffer``: an empty
    placeholder holding the device and dtype, which ``materialize(shape)`` turns into a plain
    Tensor of that shape (the same object). The lazy norm layers hold their running statistics
    in these until their first forward.

    >>> b = clgrad.nn.UninitializedBuffer()
    >>> b
    <UninitializedBuffer>
    >>> b.materialize(3)
    >>> type(b).__name__, b.shape
    ('Tensor', clgrad.Size([3]))
    """

    __slots__ = ()
    __torch_function__ = _disabled_torch_function_impl
    persistent = True  # whether a Module that it is assigned to keeps it in the state dict

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ..ops.creation import empty

        if not persistent:
            cls = _NonPersistentUninitializedBuffer

        data = empty(0, device=device, dtype=dtype)
        b = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        b._counter = data._counter
        if requires_grad:
            b.requires_grad_(True)
        return b

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True) -> None:
        pass

    cls_to_become = Tensor
    materialize = UninitializedParameter.materialize

    def __repr__(self):
        return "<UninitializedBuffer>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = UninitializedBuffer(
                self.requires_grad, self.device, self.dtype, self.persistent
            )
        return memo[id(self)]

    def __reduce__(self):
        args = (self.requires_grad, str(self.device), self.dtype, self.persistent)
        return (UninitializedBuffer, args)


class _NonPersistentUninitializedBuffer(UninitializedBuffer):
    """An ``UninitializedBuffer(persistent=False)``: a Tensor has no room for the flag, so its
    class carries it."""

    __slots__ = ()
    persistent = False


class Buffer(Tensor):
    """A Tensor that a Module registers as a buffer when it is assigned as an attribute, as
    ``torch.nn.Buffer``: ``self.mean = Buffer(t)`` is ``self.register_buffer("mean", t)``
    (``persistent=False`` keeps it out of the state dict). It shares ``data``'s storage,
    detached from its history.

    >>> m = clgrad.nn.Module()
    >>> m.steps = clgrad.nn.Buffer(clgrad.zeros(2))
    >>> m.scratch = clgrad.nn.Buffer(clgrad.ones(1), persistent=False)
    >>> list(m.state_dict()), [name for name, _ in m.named_buffers()]
    (['steps'], ['steps', 'scratch'])
    """

    __slots__ = ("persistent",)
    __torch_function__ = _disabled_torch_function_impl

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True) -> Buffer:
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): expected a Tensor, got {type(data).__name__}")
        b = cls._make(data._storage, data._shape, data._stride, data._offset, data.dtype)
        b._counter = data._counter
        if data.requires_grad:
            b.requires_grad_(True)
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor | None = None, *, persistent: bool = True) -> None:
        pass


PLAIN.update((Parameter, Buffer))  # skipped by the dispatch's argument scan without a look-up
