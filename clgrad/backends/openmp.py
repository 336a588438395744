"""``torch.backends.openmp``: clgrad does not use OpenMP (its host kernels run through NumPy and
PoCL), so ``is_available()`` is False; programs that ask take their portable path.

>>> clgrad.backends.openmp.is_available()
False
"""


def is_available() -> bool:
    """False: clgrad is not built with OpenMP.

    >>> clgrad.backends.openmp.is_available()
    False
    """
    return False
