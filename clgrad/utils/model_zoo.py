"""``torch.utils.model_zoo``: ``load_url``, the older name of ``clgrad.hub``'s
``load_state_dict_from_url`` (and hub's ``tqdm``, which torchvision imports from here), as
PyTorch's. Like torch's, it is not imported with ``clgrad.utils``: import it by name.

>>> import clgrad.utils.model_zoo
>>> clgrad.utils.model_zoo.load_url is clgrad.hub.load_state_dict_from_url
True
"""

from ..hub import load_state_dict_from_url as load_url
from ..hub import tqdm

__all__ = ["load_url", "tqdm"]
