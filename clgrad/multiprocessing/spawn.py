"""``torch.multiprocessing.spawn``'s ``spawn`` and ``start_processes``: ``fn(i, *args)`` run in
``nprocs`` processes; a child that raises has its traceback raised in the parent
(``ProcessRaisedException``), one that exits otherwise with a nonzero code or a signal
``ProcessExitedException``, and the other children are then terminated, as in PyTorch."""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import sys
import tempfile
import warnings

__all__ = [
    "ProcessContext",
    "ProcessException",
    "ProcessExitedException",
    "ProcessRaisedException",
    "SpawnContext",
    "spawn",
    "start_processes",
]


class ProcessException(Exception):
    """A process of ``spawn`` failed: its index and pid are ``error_index`` and ``error_pid``."""

    def __init__(self, msg: str, error_index: int, error_pid: int):
        super().__init__(msg)
        self.msg = msg
        self.error_index = error_index
        self.error_pid = error_pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.error_pid)


class ProcessRaisedException(ProcessException):
    """A process failed by raising: the message holds the child's traceback."""


class ProcessExitedException(ProcessException):
    """A process exited with a nonzero code, or was ended by a signal (``signal_name``)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code = exit_code
        self.signal_name = signal_name

    def __reduce__(self):
        args = (self.msg, self.error_index, self.error_pid, self.exit_code, self.signal_name)
        return type(self), args


def _wrap(fn, i, args, error_file):
    """A child's entry point: ``fn(i, *args)``; an exception's traceback goes to
    ``error_file`` (a one-shot message that cannot deadlock, as a queue can) and exit code 1."""
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass  # the parent terminated this process
    except Exception:
        import traceback

        with open(error_file, "wb") as fh:
            pickle.dump(traceback.format_exc(), fh)
        sys.exit(1)


class ProcessContext:
    """The processes ``start_processes(..., join=False)`` started; ``join`` waits for them."""

    def __init__(self, processes, error_files):
        self.error_files = error_files
        self.processes = processes
        self.sentinels = {process.sentinel: index for index, process in enumerate(processes)}

    def pids(self) -> list[int]:
        """The children's process ids, by index."""
        return [int(process.pid) for process in self.processes]

    def _join_all(self, timeout: float) -> None:
        for process in self.processes:
            process.join(timeout)

    def join(self, timeout: float | None = None, grace_period: float | None = None) -> bool:
        """Waits (up to ``timeout`` seconds) for a child to end: True once all have ended
        cleanly, False while some still run; a failed child terminates the others and raises
        ``ProcessRaisedException`` or ``ProcessExitedException``."""
        if not self.sentinels:
            return True
        ready = multiprocessing.connection.wait(self.sentinels.keys(), timeout=timeout)
        error_index = None
        for sentinel in ready:
            index = self.sentinels.pop(sentinel)
            process = self.processes[index]
            process.join()
            if process.exitcode != 0:
                error_index = index
                break
        if error_index is None:
            return not self.sentinels
        if grace_period is not None:
            self._join_all(grace_period)
        for process in self.processes:
            if process.is_alive():
                process.terminate()
        self._join_all(30 if grace_period is None else grace_period)
        for process in self.processes:
            if process.is_alive():
                process.kill()
            process.join()
        failed = self.processes[error_index]
        error_file = self.error_files[error_index]
        if not os.access(error_file, os.R_OK):
            exitcode = failed.exitcode
            if exitcode < 0:
                try:
                    name = signal.Signals(-exitcode).name
                except ValueError:
                    name = f"<Unknown signal {-exitcode}>"
                raise ProcessExitedException(
                    f"process {error_index:d} terminated with signal {name}",
                    error_index, failed.pid, exitcode, name,
                )  # fmt: skip
            raise ProcessExitedException(
                f"process {error_index:d} terminated with exit code {exitcode:d}",
                error_index, failed.pid, exitcode,
            )  # fmt: skip
        with open(error_file, "rb") as fh:
            original_trace = pickle.load(fh)
        os.unlink(error_file)
        msg = f"\n\n-- Process {error_index:d} terminated with the following error:\n"
        raise ProcessRaisedException(msg + original_trace, error_index, failed.pid)


class SpawnContext(ProcessContext):
    """``ProcessContext``'s name before PyTorch 1.4."""

    def __init__(self, processes, error_files):
        warnings.warn("SpawnContext is renamed to ProcessContext since 1.4 release.", stacklevel=2)
        super().__init__(processes, error_files)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts ``nprocs`` processes of ``start_method`` running ``fn(i, *args)``; with ``join``,
    waits for them all (None), else returns their ``ProcessContext``."""
    mp = multiprocessing.get_context(start_method)
    error_files, processes = [], []
    for i in range(nprocs):
        # a name for the child's traceback, created only if it raises
        tf = tempfile.NamedTemporaryFile(prefix="clgrad-errorfile-", suffix=".pickle", delete=False)
        tf.close()
        os.unlink(tf.name)
        process = mp.Process(target=_wrap, args=(fn, i, args, tf.name), daemon=daemon)
        process.start()
        error_files.append(tf.name)
        processes.append(process)
    context = ProcessContext(processes, error_files)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """``start_processes`` with the ``spawn`` start method (another one warns and is not used,
    as PyTorch's).

    >>> clgrad.multiprocessing.spawn(print, args=("child",), nprocs=0)
    """
    if start_method != "spawn":
        warnings.warn(
            f"This method only supports start_method=spawn (got: {start_method}).\n"
            "To use a different start_method use:\n\t\t"
            " torch.multiprocessing.start_processes(...)",
            FutureWarning,
            stacklevel=2,
        )
    return start_processes(fn, args, nprocs, join, daemon, start_method="spawn")
