"""``torch.random``: the default generator's seed and state, and ``fork_rng``.

clgrad has one default generator for every device (its numbers are the same on each), so
``fork_rng`` saves and restores that one state whatever ``devices`` it is given.

>>> import clgrad.random
>>> _ = clgrad.random.manual_seed(0)
>>> clgrad.random.initial_seed()
0
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .ops.creation import get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__all__ = ["fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(
    devices=None,
    enabled: bool = True,
    _caller: str = "fork_rng",
    _devices_kw: str = "devices",
    device_type: str = "cuda",
) -> Iterator[None]:
    """A context manager that restores the random state on leaving, like
    ``torch.random.fork_rng``: numbers drawn inside don't change what is drawn after it.
    ``enabled=False`` leaves the state alone; ``devices`` is accepted (one generator serves
    every device here).

    >>> state = clgrad.get_rng_state()
    >>> with clgrad.random.fork_rng():
    ...     _ = clgrad.rand(4)
    >>> clgrad.get_rng_state().equal(state)
    True
    """
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
