"""Work the service starts and nobody awaits: a session saved, a closed room
forgotten by the store."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from protocol.messages import ErrorCode

from ..core.values import RoomError
from ..store.base import StoreUnavailable

__all__ = ["Tasks"]

log = logging.getLogger("klondike_race.service")


class Tasks:
    """The tasks under way, held so that none is collected before it is done."""

    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._running.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[Any]) -> None:
        """Nobody awaits a spawned task: its failure is logged here, once (a
        WARNING for the store being away, which is expected), instead of at
        garbage collection as 'Task exception was never retrieved'."""
        self._running.discard(task)
        if task.cancelled() or (exc := task.exception()) is None:
            return
        what = getattr(task.get_coro(), "__qualname__", task.get_name())
        if isinstance(exc, StoreUnavailable) or (
            isinstance(exc, RoomError) and exc.code == ErrorCode.STORAGE_UNAVAILABLE
        ):
            log.warning("%s: %s", what, exc)
        else:
            log.error("%s failed", what, exc_info=exc)
