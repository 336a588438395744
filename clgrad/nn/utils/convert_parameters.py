"""``torch.nn.utils.convert_parameters``' path to ``parameters_to_vector`` and
``vector_to_parameters``."""

from . import parameters_to_vector, vector_to_parameters

__all__ = ["parameters_to_vector", "vector_to_parameters"]
