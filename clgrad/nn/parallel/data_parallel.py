"""DataParallel: one process, several devices; the batch is split over them, as
``torch.nn.DataParallel``.

The pieces are ``torch.nn.parallel``'s: ``scatter`` splits the inputs, ``replicate`` copies
the module onto each device with differentiable parameter copies, ``parallel_apply`` runs the
replicas and ``gather`` brings the outputs back onto one device.
"""

from __future__ import annotations

import warnings
from collections import OrderedDict
from typing import Any

from ...autograd.grad_mode import is_grad_enabled
from ...device import Device, cuda_devices, resolve
from ...ops.movement import cat
from ...tensor import Tensor
from ..modules.module import Module

__all__ = [
    "DataParallel",
    "data_parallel",
    "gather",
    "parallel_apply",
    "replicate",
    "scatter",
    "scatter_kwargs",
]


def _device(d) -> Device:
    # torch's gather reads -1 as the cpu; an int N elsewhere is cuda:N, as ``resolve`` reads it
    return resolve("cpu" if d == -1 else d)


def scatter(inputs, target_devices, dim: int = 0):
    """Splits ``inputs`` over ``target_devices`` as ``torch.nn.parallel.scatter``: a tensor is
    chunked along ``dim`` (``torch.chunk``'s sizes) and each chunk moved to its device, with
    autograd; tuples, lists and dicts are split element by element; anything else is repeated
    for every device. There are as many pieces as the smallest tensor gives chunks.

    >>> a, b = scatter((clgrad.arange(5), "tag"), ["cpu", "cpu"])
    >>> a, b
    ((tensor([0, 1, 2]), 'tag'), (tensor([3, 4]), 'tag'))
    """
    devices = [_device(d) for d in target_devices]

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            chunks = obj.chunk(len(devices), dim)
            return [c if c.device == d else c.to(d) for c, d in zip(chunks, devices)]
        if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # a namedtuple
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(x) for x in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(x) for x in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in devices]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_devices, dim: int = 0):
    """``scatter`` of the positional and the keyword arguments, padded to one length with
    ``()`` and ``{}``, as ``torch.nn.parallel.scatter_kwargs``.

    >>> scatter_kwargs((clgrad.arange(4),), {"scale": 2}, ["cpu", "cpu"])
    (((tensor([0, 1]),), (tensor([2, 3]),)), ({'scale': 2}, {'scale': 2}))
    """
    scattered_inputs = scatter(inputs, target_devices, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_devices, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs += [() for _ in range(len(scattered_kwargs) - len(scattered_inputs))]
    elif len(scattered_kwargs) < len(scattered_inputs):
        scattered_kwargs += [{} for _ in range(len(scattered_inputs) - len(scattered_kwargs))]
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def _copies(tensors, devices, detach):
    """``tensors`` (on ``devices[0]``) on each device: the tensors themselves on the first (as
    torch's broadcast, whose first outputs are its inputs), ``t.to(d)`` elsewhere, recorded in
    autograd for a tensor that requires grad (unless ``detach``), so a replica's gradient
    reaches the original tensor."""
    out = [list(tensors)]
    for d in devices[1:]:
        out.append([t.detach().to(d) if detach else t.to(d) for t in tensors])
    return out


def replicate(network: Module, devices, detach: bool = False) -> list[Module]:
    """Copies of ``network`` on ``devices``, as ``torch.nn.parallel.replicate``: the first is
    on the network's device and shares its parameters and buffers; the others hold
    ``param.to(device)`` copies recorded in autograd (plain copies with ``detach``), so their
    gradients are summed into the original parameters, and copies of the buffers (what a
    replica writes into them, BatchNorm's running statistics, is lost, as in torch).

    >>> net = clgrad.nn.Linear(2, 1)
    >>> (replica,) = replicate(net, ["cpu"])
    >>> replica.weight is net.weight, replica is net
    (True, False)
    """
    devices = [_device(d) for d in devices]
    modules = list(network.modules())
    index = {id(m): i for i, m in enumerate(modules)}
    params = list(network.parameters())
    param_index = {id(p): i for i, p in enumerate(params)}
    buffers = list(network.buffers())
    buffer_index = {id(b): i for i, b in enumerate(buffers)}
    param_copies = _copies(params, devices, detach)
    # a buffer that requires grad is copied with autograd as a parameter is; others are state
    buffer_copies = _copies(buffers, devices, detach)

    replicas = []
    for j in range(len(devices)):
        copies = []
        for m in modules:
            r = m.__new__(type(m))
            r.__dict__.update(m.__dict__)
            r.__dict__["_is_replica"] = True
            copies.append(r)
        for m, r in zip(modules, copies):
            d = r.__dict__
            d["_modules"] = OrderedDict(
                (k, None if c is None else copies[index[id(c)]]) for k, c in m._modules.items()
            )
            d["_parameters"] = OrderedDict(
                (k, None if p is None else param_copies[j][param_index[id(p)]])
                for k, p in m._parameters.items()
            )
            d["_buffers"] = OrderedDict(
                (k, None if b is None else buffer_copies[j][buffer_index[id(b)]])
                for k, b in m._buffers.items()
            )
        replicas.append(copies[0])
    return replicas


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None) -> list:
    """``modules[i](*inputs[i], **kwargs_tup[i])`` for each i, as
    ``torch.nn.parallel.parallel_apply``. They run one after another in this thread: each
    replica's kernels are queued on its own device's queue and run asynchronously, so the
    devices work at the same time as long as a replica reads nothing back to the host.

    >>> parallel_apply([clgrad.neg, clgrad.abs], [(clgrad.tensor(-1.0),), (clgrad.tensor(-2.0),)])
    [tensor(1.), tensor(2.)]
    """
    if len(modules) != len(inputs):
        raise ValueError(f"got {len(modules)} modules and {len(inputs)} inputs")
    kwargs_tup = kwargs_tup if kwargs_tup is not None else ({},) * len(modules)
    outputs = []
    for m, args, kwargs in zip(modules, inputs, kwargs_tup):
        if not isinstance(args, (list, tuple)):
            args = (args,)
        outputs.append(m(*args, **kwargs))
    return outputs


def gather(outputs, target_device, dim: int = 0):
    """Concatenates the replicas' ``outputs`` on ``target_device`` along ``dim`` (with
    autograd), as ``torch.nn.parallel.gather``: tuples, lists and dicts element by element;
    0-d tensors are stacked into a vector (with torch's warning); None stays None.

    >>> gather([clgrad.tensor([1, 2]), clgrad.tensor([3])], "cpu")
    tensor([1, 2, 3])
    """
    device = _device(target_device)

    def gather_map(outs):
        out = outs[0]
        if isinstance(out, Tensor):
            if all(o.ndim == 0 for o in outs):
                warnings.warn(
                    "Was asked to gather along dimension 0, but all input tensors were "
                    "scalars; will instead unsqueeze and return a vector.",
                    UserWarning,
                    stacklevel=4,
                )
                outs = [o.unsqueeze(0) for o in outs]
                return cat([o if o.device == device else o.to(device) for o in outs], 0)
            return cat([o if o.device == device else o.to(device) for o in outs], dim)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outs])) for k in out)
        if isinstance(out, tuple) and hasattr(out, "_fields"):  # a namedtuple
            return type(out)(*map(gather_map, zip(*outs)))
        return type(out)(map(gather_map, zip(*outs)))

    return gather_map(outputs)


class DataParallel(Module):
    """Data parallelism over the devices of one process, as ``torch.nn.DataParallel``.

    Each forward splits the inputs along ``dim`` over ``device_ids`` (``scatter``: tensors are
    chunked as ``torch.chunk``, inside tuples, lists and dicts too; other values go to every
    replica), runs a replica of ``module`` on each device (``replicate``: parameters are
    differentiable copies of ``module``'s, so backward sums the replicas' gradients into
    ``module``'s parameters on ``device_ids[0]``; buffers are copied from ``module``, and only
    the first replica's updates of them, on ``module``'s own buffers, are kept) and
    concatenates the outputs on ``output_device`` (default ``device_ids[0]``) along ``dim``.

    ``device_ids`` are devices, device strings (``"cl:1"``) or ints (``cuda:N``); None means
    every cuda device (``clgrad.cuda.device_count()``); with none, or one, the module runs
    as it is. ``module`` must be on ``device_ids[0]``.

    The replicas run one after another in this thread. Kernels are queued asynchronously on
    each device's own queue, so the devices still compute at the same time as long as nothing
    reads a value back to the host in between (``.item()``, printing, ``nonzero``). With
    BatchNorm in training mode each replica normalizes its chunk with the chunk's statistics,
    as in torch.

    >>> net = clgrad.nn.Linear(3, 2)
    >>> dp = clgrad.nn.DataParallel(net, device_ids=["cpu"])
    >>> dp(clgrad.ones(4, 3)).shape, dp.module is net
    (clgrad.Size([4, 2]), True)
    >>> list(dp.state_dict())
    ['module.weight', 'module.bias']
    >>> dp = clgrad.nn.DataParallel(net, device_ids=["cl:0", "cl:1"])  # doctest: +SKIP
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        self.module = module
        if device_ids is None:
            device_ids = list(cuda_devices())
        self.device_ids = [_device(d) for d in device_ids]
        self.dim = dim
        if not self.device_ids:
            self.output_device = None
            self.src_device_obj = None
            return
        self.output_device = _device(output_device if output_device is not None else device_ids[0])
        self.src_device_obj = self.device_ids[0]

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """Scatters the inputs, runs the replicas and gathers their outputs (see the class)."""
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in (*self.module.parameters(), *self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(
                    "module must have its parameters and buffers on device "
                    f"{self.src_device_obj} (device_ids[0]) but found one of them on device: "
                    f"{t.device}"
                )
        inputs, kwargs = scatter_kwargs(inputs, kwargs, self.device_ids, self.dim)
        if not inputs and not kwargs:  # no argument at all: one replica runs with none
            inputs, kwargs = ((),), ({},)
        if len(self.device_ids) == 1:
            return self.module(*inputs[0], **kwargs[0])
        replicas = self.replicate(self.module, self.device_ids[: len(inputs)])
        outputs = self.parallel_apply(replicas, inputs, kwargs)
        return self.gather(outputs, self.output_device)

    def replicate(self, module: Module, device_ids) -> list[Module]:
        """``replicate(module, device_ids)``, detached where grad mode is off."""
        return replicate(module, device_ids, not is_grad_enabled())

    def scatter(self, inputs, kwargs, device_ids):
        """``scatter_kwargs`` along ``self.dim``."""
        return scatter_kwargs(inputs, kwargs, device_ids, dim=self.dim)

    def parallel_apply(self, replicas, inputs, kwargs) -> list:
        """``parallel_apply`` of the replicas."""
        return parallel_apply(replicas, inputs, kwargs, self.device_ids[: len(replicas)])

    def gather(self, outputs, output_device):
        """``gather`` along ``self.dim``."""
        return gather(outputs, output_device, dim=self.dim)


def data_parallel(
    module: Module, inputs, device_ids=None, output_device=None, dim: int = 0, module_kwargs=None
):
    """``DataParallel(module, device_ids, output_device, dim)(*inputs, **module_kwargs)`` in one
    call, as ``torch.nn.parallel.data_parallel``.

    >>> data_parallel(clgrad.nn.Identity(), clgrad.ones(2), device_ids=["cpu"])
    tensor([1., 1.])
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
