"""``torch.backends.mps``: clgrad has no Metal backend (an Apple GPU is used through OpenCL).

>>> clgrad.backends.mps.is_available(), clgrad.backends.mps.is_built()
(False, False)
"""


def is_available() -> bool:
    """False, as ``torch.backends.mps.is_available`` where there is no MPS.

    >>> clgrad.backends.mps.is_available()
    False
    """
    return False


def is_built() -> bool:
    """False: clgrad is not built with MPS, as ``torch.backends.mps.is_built``.

    >>> clgrad.backends.mps.is_built()
    False
    """
    return False
