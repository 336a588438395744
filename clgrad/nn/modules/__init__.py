"""The layer classes of clgrad.nn."""

from .activation import (
    ELU,
    GELU,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Tanh,
)
from .container import ModuleDict, ModuleList, ParameterList, Sequential
from .conv import Conv1d, Conv2d
from .dropout import Dropout, Dropout2d
from .linear import Bilinear, Flatten, Identity, Linear, Unflatten
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .sparse import Embedding

__all__ = [
    "Module",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "Identity",
    "Linear",
    "Bilinear",
    "Flatten",
    "Unflatten",
    "Conv1d",
    "Conv2d",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "Dropout",
    "Dropout2d",
    "Embedding",
    "ReLU",
    "ReLU6",
    "LeakyReLU",
    "ELU",
    "Hardtanh",
    "GELU",
    "SiLU",
    "Tanh",
    "Sigmoid",
    "LogSigmoid",
    "Softplus",
    "Softmax",
    "Softmin",
    "LogSoftmax",
    "CrossEntropyLoss",
    "NLLLoss",
    "MSELoss",
    "L1Loss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
]
