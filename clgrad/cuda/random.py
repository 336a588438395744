"""``clgrad.cuda.random``: ``torch.cuda``'s random-state functions for the cuda devices.

clgrad has one default generator (``clgrad.ops.creation.default_generator``) for every device:
a counter-based Philox generator whose numbers are the same on each device (``randn``'s last
bits may differ). So each cuda device's generator is that one: its state saved by
``get_rng_state`` and restored by ``set_rng_state`` replays the numbers drawn after it on the
device, and seeding it seeds the cpu's numbers too (PyTorch's cuda and cpu generators are
separate).

>>> state = clgrad.cuda.get_rng_state() if clgrad.cuda.is_available() else None
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from ..device import cuda_device, cuda_devices
from ..ops.creation import default_generator
from ..tensor import Tensor

__all__ = [
    "get_rng_state",
    "get_rng_state_all",
    "initial_seed",
    "manual_seed",
    "manual_seed_all",
    "seed",
    "seed_all",
    "set_rng_state",
    "set_rng_state_all",
]


def get_rng_state(device="cuda") -> Tensor:
    """The generator state of a cuda device as a uint8 cpu tensor, as
    ``torch.cuda.get_rng_state``; RuntimeError where there is no such cuda device.

    >>> if clgrad.cuda.is_available():
    ...     state = clgrad.cuda.get_rng_state()
    ...     a = clgrad.rand(3, device="cuda")
    ...     clgrad.cuda.set_rng_state(state)
    ...     assert a.equal(clgrad.rand(3, device="cuda"))
    """
    cuda_device(device)  # raises, naming the devices, where it is no cuda device
    return default_generator.get_state()


def set_rng_state(new_state: Tensor, device="cuda") -> None:
    """Restores a state ``get_rng_state`` gave, as ``torch.cuda.set_rng_state``.

    >>> if clgrad.cuda.is_available():
    ...     clgrad.cuda.set_rng_state(clgrad.cuda.get_rng_state())
    """
    cuda_device(device)
    default_generator.set_state(new_state)


def get_rng_state_all() -> list[Tensor]:
    """The generator state of every cuda device, as ``torch.cuda.get_rng_state_all`` (an empty
    list where there is none).

    >>> len(clgrad.cuda.get_rng_state_all()) == clgrad.cuda.device_count()
    True
    """
    return [get_rng_state(i) for i in range(len(cuda_devices()))]


def set_rng_state_all(new_states: Iterable[Tensor]) -> None:
    """Restores every cuda device's state from ``get_rng_state_all``, as
    ``torch.cuda.set_rng_state_all``.

    >>> clgrad.cuda.set_rng_state_all(clgrad.cuda.get_rng_state_all())
    """
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seeds the generator, as ``torch.cuda.manual_seed`` (the cpu's numbers too: one
    generator serves every device).

    >>> clgrad.cuda.manual_seed(0)
    >>> clgrad.initial_seed()
    0
    """
    default_generator.manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seeds the generator of every cuda device, as ``torch.cuda.manual_seed_all`` (the one
    generator, see ``manual_seed``).

    >>> clgrad.cuda.manual_seed_all(0)
    """
    default_generator.manual_seed(int(seed))


def seed() -> None:
    """Seeds the generator from the operating system's randomness, as ``torch.cuda.seed``
    (``initial_seed`` tells the seed).

    >>> clgrad.cuda.seed()
    """
    default_generator.manual_seed(int.from_bytes(os.urandom(8), "little"))


def seed_all() -> None:
    """``seed`` for every cuda device, as ``torch.cuda.seed_all``.

    >>> clgrad.cuda.seed_all()
    """
    seed()


def initial_seed() -> int:
    """The seed the current cuda device's generator was last started from, as
    ``torch.cuda.initial_seed``; RuntimeError where there is no cuda device.

    >>> if clgrad.cuda.is_available():
    ...     clgrad.cuda.manual_seed(7)
    ...     assert clgrad.cuda.initial_seed() == 7
    """
    cuda_device()
    return default_generator.initial_seed()
