"""``clgrad.torch_version``: ``torch.torch_version.TorchVersion``, the ``str`` that
``clgrad.__version__`` is, comparing as a version (``"0.10.0" > "0.9"``) against strings,
tuples and numbers, as PyTorch's does.

>>> from clgrad.torch_version import TorchVersion
>>> TorchVersion("0.10.0") > "0.9", TorchVersion("2.1.0") >= (2, 1), TorchVersion("2.1") == "2.1.0"
(True, True, True)
"""

from __future__ import annotations

import re

__all__ = ["TorchVersion"]


def _release(version) -> tuple[int, ...]:
    """The numbers of a version's release segment (``"2.1.0+cpu"`` -> ``(2, 1, 0)``), trailing
    zeros dropped so that ``2.1`` and ``2.1.0`` compare equal, as packaging's Version does."""
    if isinstance(version, (tuple, list)):
        parts = [int(p) for p in version]
    elif isinstance(version, (int, float)):
        return _release(str(version))
    else:
        match = re.match(r"\s*v?(\d+(?:\.\d+)*)", str(version))
        if match is None:
            raise ValueError(f"Invalid version: {version!r}")
        parts = [int(p) for p in match.group(1).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


class TorchVersion(str):
    """A version string that compares as a version with strings, tuples and numbers."""

    def _cmp(self, other, op) -> bool:
        try:
            return op(_release(self), _release(other))
        except (TypeError, ValueError):
            return NotImplemented

    def __lt__(self, other):
        return self._cmp(other, tuple.__lt__)

    def __le__(self, other):
        return self._cmp(other, tuple.__le__)

    def __gt__(self, other):
        return self._cmp(other, tuple.__gt__)

    def __ge__(self, other):
        return self._cmp(other, tuple.__ge__)

    def __eq__(self, other):
        return self._cmp(other, tuple.__eq__)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = str.__hash__
