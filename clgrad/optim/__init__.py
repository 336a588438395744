"""Optimizers and learning-rate schedules, as torch.optim."""

from . import lr_scheduler, swa_utils
from .adam import Adam, AdamW
from .adaptive import ASGD, Adadelta, Adafactor, Adagrad, Adamax, NAdam, RAdam, Rprop
from .lbfgs import LBFGS
from .muon import Muon
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = [
    "Optimizer",
    "SGD",
    "SparseAdam",
    "Adam",
    "AdamW",
    "RMSprop",
    "Adadelta",
    "Adagrad",
    "Adamax",
    "NAdam",
    "RAdam",
    "ASGD",
    "Rprop",
    "Adafactor",
    "LBFGS",
    "Muon",
    "lr_scheduler",
    "swa_utils",
]
