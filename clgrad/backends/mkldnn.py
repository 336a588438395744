"""``torch.backends.mkldnn``: clgrad does not use oneDNN (its host kernels run through NumPy
and PoCL), so ``is_available()`` is False; programs that ask take their portable path.

>>> clgrad.backends.mkldnn.is_available()
False
"""


def is_available() -> bool:
    """False: clgrad is not built with oneDNN (MKL-DNN).

    >>> clgrad.backends.mkldnn.is_available()
    False
    """
    return False


# torch.backends.mkldnn's switches: kept (a program may read back what it set), change nothing
enabled = False
deterministic = False
allow_tf32 = False
