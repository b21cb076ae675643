"""Running under ``torchrun``: this process's rank, its device, and the few collective calls pmask needs.

Without ``torchrun`` (no ``WORLD_SIZE`` in the environment, no process group) everything here
is a no-op for one rank, so single-process runs behave exactly as before. Under
``torchrun --nproc-per-node K`` each rank computes its share of the sentences on
``cuda:LOCAL_RANK`` (NCCL) or on the CPU (gloo); see :func:`pmask.perturb.fill.compute.compute_store`.

Importing this module loads no torch: :func:`is_main_rank` (the one answer to "am I rank 0?")
and :func:`rank_info` read torchrun's environment or an existing process group; torch is
imported once a process group is joined.
"""
from __future__ import annotations

import atexit
import contextlib
import datetime
import logging
import os
import signal
import sys
import threading
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pmask.common.errors import PmaskError
from pmask.common.progress import progress_bar, watched

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

# A rank that finishes early waits for the others at the end; generous, because torchrun ends
# every rank anyway as soon as one fails.
TIMEOUT = datetime.timedelta(hours=12)
PROGRESS_POLL_S = 0.5


@dataclass(frozen=True)
class RankInfo:
    """Where this process stands in a distributed run (rank 0 of 1 without one)."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def __str__(self) -> str:
        return f"rank {self.rank}/{self.world_size}"


def _dist() -> Any:
    # lazy: torch.distributed imports torch (seconds), which planning and one-process runs never need
    import torch.distributed as dist

    return dist


def _initialised_group() -> Any:
    """torch.distributed when a process group exists (never imports torch: none can exist before it is imported)."""
    dist = sys.modules.get("torch.distributed")
    return dist if dist is not None and dist.is_available() and dist.is_initialized() else None


def is_main_rank() -> bool:
    """Whether this process is rank 0 of a ``torchrun`` job, or the only process (torch-free).

    Example:
        >>> is_main_rank()   # outside torchrun
        True
    """
    return rank_info().is_main


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    try:
        return default if value in (None, "") else int(value)
    except ValueError:
        raise PmaskError(f"environment variable {name}={value!r} is not an integer") from None


def rank_info(rank: int | None = None, world_size: int | None = None) -> RankInfo:
    """This process's rank: as given, else from the initialised process group, else from the
    ``RANK`` / ``WORLD_SIZE`` / ``LOCAL_RANK`` variables that ``torchrun`` sets, else 0 of 1.

    Example:
        >>> rank_info(rank=1, world_size=4)
        RankInfo(rank=1, world_size=4, local_rank=0)
    """
    local = _env_int("LOCAL_RANK", 0)
    if rank is not None or world_size is not None:
        if rank is None or world_size is None:
            raise PmaskError("give both rank and world_size (or neither, to read them from torchrun)")
        if not 0 <= rank < world_size:
            raise PmaskError(f"rank {rank} is outside 0..{world_size - 1}")
        return RankInfo(rank, world_size, local if world_size > 1 else 0)
    if (dist := _initialised_group()) is not None:
        return RankInfo(dist.get_rank(), dist.get_world_size(), local)
    return RankInfo(_env_int("RANK", 0), _env_int("WORLD_SIZE", 1), local)


class _RankPrefix(logging.Filter):
    def __init__(self, info: RankInfo):
        super().__init__()
        self.prefix = f"[{info}] "

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(self.prefix):
            record.msg = self.prefix + str(record.msg)
        return True


def _raise_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)   # unwinds like an error: the store writer flushes finished sentences


def init_distributed(device: str | None = "auto", *, rank: int | None = None,
                     world_size: int | None = None) -> RankInfo:
    """Join the process group of a ``torchrun`` job (no-op for a single process).

    Selects ``cuda:LOCAL_RANK`` as the current CUDA device (so a model loaded with device
    ``auto``/``cuda`` lands on this rank's GPU), initialises the process group (NCCL on CUDA,
    gloo on the CPU) unless it exists, names the rank in every log line, keeps ranks other
    than 0 to warnings, and turns SIGTERM (sent by torchrun when another rank fails) into an
    exception so that this rank's finished sentences are saved.

    Args:
        device: the requested device (``auto``, ``cpu``, ``cuda``, ``cuda:K``).
        rank, world_size: explicit values instead of the environment's.

    Returns:
        This process's :class:`RankInfo`.
    """
    info = rank_info(rank, world_size)
    if not info.distributed:
        return info
    join_group(info, device)
    for handler in {*logging.getLogger().handlers, *logging.getLogger("pmask").handlers}:
        if not any(isinstance(f, _RankPrefix) for f in handler.filters):
            handler.addFilter(_RankPrefix(info))
    if not info.is_main:
        logging.getLogger("pmask").setLevel(max(logging.WARNING, logging.getLogger("pmask").getEffectiveLevel()))
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _raise_on_sigterm)
    return info


def join_group(info: RankInfo, device: str | torch.device | None = "auto") -> None:
    """Select ``cuda:LOCAL_RANK`` (unless ``device`` is the CPU) and initialise the process group
    (NCCL on CUDA, gloo on the CPU) from torchrun's environment, unless one exists."""
    import torch  # lazy, as in _dist

    dist = _dist()
    use_cuda = str(device or "auto") != "cpu" and torch.cuda.is_available()
    if use_cuda:
        if info.local_rank >= torch.cuda.device_count():
            raise PmaskError(f"{info}: LOCAL_RANK {info.local_rank} but {torch.cuda.device_count()} CUDA device(s) "
                             f"visible; start at most one rank per GPU (or use --device cpu)")
        torch.cuda.set_device(info.local_rank)
    if dist.is_initialized():
        return
    for var in ("MASTER_ADDR", "MASTER_PORT"):
        if var not in os.environ:
            raise PmaskError(f"{info}: {var} is not set; start the ranks with torchrun (or set MASTER_ADDR "
                             f"and MASTER_PORT) or call torch.distributed.init_process_group first")
    kwargs: dict[str, Any] = {"device_id": torch.device("cuda", info.local_rank)} if use_cuda else {}
    dist.init_process_group("nccl" if use_cuda else "gloo", rank=info.rank, world_size=info.world_size,
                            timeout=TIMEOUT, **kwargs)
    atexit.register(_leave_group)


def _leave_group() -> None:
    """Destroy the process group this module created, at exit: left to the interpreter's teardown,
    gloo's threads can outlive the module and abort the rank ("terminate called without an active
    exception", exit code -6) after its work is done."""
    dist = _dist()
    if dist.is_initialized():
        with contextlib.suppress(Exception):   # the process is ending; nothing is left to save
            dist.destroy_process_group()


class Group:
    """The collective calls of one run: trivial for one rank, torch.distributed for several."""

    def __init__(self, info: RankInfo, device: str | torch.device | None = "auto"):
        self.info = info
        if info.distributed:
            join_group(info, device)

    def broadcast(self, obj: Any) -> Any:
        """Rank 0's ``obj`` on every rank."""
        if not self.info.distributed:
            return obj
        box = [obj]
        _dist().broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, obj: Any) -> list[Any]:
        """Every rank's ``obj``, by rank, on every rank (also a barrier)."""
        if not self.info.distributed:
            return [obj]
        out: list[Any] = [None] * self.info.world_size
        _dist().all_gather_object(out, obj)
        return out


class GlobalProgress:
    """One progress bar for the whole job, on rank 0: each rank adds its finished sentences to a
    counter in the job's key-value store (torchrun's, at MASTER_ADDR:MASTER_PORT) and rank 0
    shows the total. Without that store rank 0 counts only its own sentences until the end."""

    def __init__(self, group: Group, total: int, *, enabled: bool = True, desc: str = "impact"):
        self.info = group.info
        self._key = "pmask/progress/" + group.broadcast(uuid.uuid4().hex)
        self._counter = self._client()
        self._own = 0
        self._bar = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if enabled and self.info.is_main and watched():
            self._bar = progress_bar(total=total, unit="sent", desc=f"{desc} ({self.info.world_size} ranks)")
            if self._counter is not None:
                self._thread = threading.Thread(target=self._poll, args=(self._client(),), daemon=True)
                self._thread.start()

    def _client(self) -> Any:
        host, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
        if not (host and port):
            return None
        try:
            return _dist().TCPStore(host, int(port), is_master=False, timeout=datetime.timedelta(seconds=30),
                                 wait_for_workers=False)
        except (RuntimeError, ValueError) as err:
            logger.debug("%s: no key-value store for progress counts (%s)", self.info, err)
            return None

    def _poll(self, client: Any) -> None:
        while not self._stop.wait(PROGRESS_POLL_S):
            self._show(int(client.add(self._key, 0)))

    def _show(self, count: int) -> None:
        if self._bar is not None and count > self._bar.n:
            self._bar.update(count - self._bar.n)

    def update(self, k: int = 1) -> None:
        """Count ``k`` sentences finished by this rank."""
        self._own += k
        if self._counter is not None:
            self._counter.add(self._key, k)
        elif self._thread is None:
            self._show(self._own)

    def close(self, total_done: int | None = None) -> None:
        """Stop the bar, showing ``total_done`` (the gathered final count) when given; idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if total_done is not None:
            self._show(total_done)
        if self._bar is not None:
            self._bar.close()
            self._bar = None
