"""``torch.backends.cudnn``'s flags: clgrad has no cuDNN, so they are kept and change nothing
(its convolutions are its own OpenCL kernels, deterministic whatever ``deterministic`` says).

>>> import clgrad.backends.cudnn as cudnn
>>> cudnn.benchmark, cudnn.deterministic, cudnn.enabled, cudnn.allow_tf32
(False, False, True, True)
>>> cudnn.is_available()
False
"""

benchmark = False
deterministic = False
enabled = True
allow_tf32 = True


def is_available() -> bool:
    """False: clgrad has no cuDNN, as ``torch.backends.cudnn.is_available`` on a build without.

    >>> clgrad.backends.cudnn.is_available()
    False
    """
    return False


def version() -> None:
    """None: no cuDNN, as ``torch.backends.cudnn.version`` on a build without.

    >>> clgrad.backends.cudnn.version() is None
    True
    """
    return None
