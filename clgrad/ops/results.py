"""The named tuples of ops that return several tensors (``torch.return_types``' classes)."""

from __future__ import annotations

from collections import namedtuple


def return_type(name: str, fields: list[str]) -> type:
    """A named tuple class of ``fields``, named and printed as torch's ``return_types.<name>``
    (a structseq: each field on a line of its own), which tutorials print (``torch.max(x, 1)``);
    it pickles as ``clgrad.return_types.<name>``, which exports it.

    >>> r = return_type("max", ["values", "indices"])(1.0, 0)
    >>> r
    clgrad.return_types.max(
    values=1.0,
    indices=0)
    >>> r.indices, type(r).__name__
    (0, 'max')
    """

    def __repr__(self):
        body = ",\n".join(f"{field}={value!r}" for field, value in zip(self._fields, self))
        return f"clgrad.return_types.{name}(\n{body})"

    namespace = {"__slots__": (), "__repr__": __repr__, "__module__": "clgrad.return_types"}
    cls = type(name, (namedtuple(name, fields),), namespace)
    cls.__qualname__ = name
    return cls
