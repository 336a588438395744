"""``RemovableHandle``: what registering a hook returns (a module's, an optimizer's), as
``torch.utils.hooks.RemovableHandle``."""

from __future__ import annotations

import itertools

_ids = itertools.count(1)


class RemovableHandle:
    """Unregisters its hook from ``hooks`` (a dict, by ``id``) on ``remove()`` or on leaving a
    ``with`` block, as ``torch.utils.hooks.RemovableHandle``; the same ``id`` goes from
    ``extra_dict`` (a dict or a list of them) too.

    >>> hooks = {}
    >>> handle = RemovableHandle(hooks)
    >>> hooks[handle.id] = print
    >>> with handle:
    ...     len(hooks)
    1
    >>> len(hooks)
    0
    """

    def __init__(self, hooks: dict, id: int | None = None, *, extra_dict=None):
        self.hooks = hooks
        self.id = next(_ids) if id is None else id
        if isinstance(extra_dict, dict):
            extra_dict = [extra_dict]
        self.extra_dicts = list(extra_dict or ())

    def remove(self) -> None:
        """Unregisters the hook (nothing to do where it is already gone)."""
        self.hooks.pop(self.id, None)
        for extra in self.extra_dicts:
            extra.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


class ListHookHandle(RemovableHandle):
    """The handle of a hook kept in a list (a tensor's or a graph node's hooks, which run in
    the order registered): ``remove()`` takes that hook object out.

    >>> hooks = [print]
    >>> ListHookHandle(hooks, print).remove()
    >>> hooks
    []
    """

    def __init__(self, hooks: list, hook) -> None:
        super().__init__({})
        self.hooks_list, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks_list:
            self.hooks_list.remove(self.hook)
