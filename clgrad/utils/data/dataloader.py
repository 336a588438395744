"""``torch.utils.data.dataloader``'s path to the DataLoader and its collate functions (``from
torch.utils.data.dataloader import default_collate``, as older programs import it)."""

from . import DataLoader, WorkerInfo, default_collate, default_convert, get_worker_info

__all__ = ["DataLoader", "WorkerInfo", "default_collate", "default_convert", "get_worker_info"]
