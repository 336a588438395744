"""``torch.backends.mkl``: clgrad does not use Intel MKL (its host kernels run through NumPy and
PoCL), so ``is_available()`` is False; programs that ask take their portable path.

>>> clgrad.backends.mkl.is_available()
False
"""


def is_available() -> bool:
    """False: clgrad is not built with Intel MKL.

    >>> clgrad.backends.mkl.is_available()
    False
    """
    return False
