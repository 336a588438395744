"""``RemovableHandle``: what registering a hook returns (a module's, an optimizer's), as
``torch.utils.hooks.RemovableHandle``."""

from __future__ import annotations

import itertools

_ids = itertools.count(1)


class RemovableHandle:
    """Unregisters its hook from ``hooks`` (a dict, by ``id``) on ``remove()`` or on leaving a
    ``with`` block.

    >>> hooks = {}
    >>> handle = RemovableHandle(hooks)
    >>> hooks[handle.id] = print
    >>> with handle:
    ...     len(hooks)
    1
    >>> len(hooks)
    0
    """

    def __init__(self, hooks: dict, id: int | None = None):
        self.hooks = hooks
        self.id = next(_ids) if id is None else id

    def remove(self) -> None:
        """Unregisters the hook (nothing to do where it is already gone)."""
        self.hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()
