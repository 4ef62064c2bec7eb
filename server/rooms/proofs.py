"""Proven deals for ``deals: winnable`` rooms: the solver run and the seed pools.

The solver is ShootMe's Klondike-Solver through ``pyksolve``, a native search that
takes up to a second: it runs in worker processes (a ``ProcessPoolExecutor``),
never on the event loop. The workers are *spawned*, not forked: a forked worker
would inherit the server's descriptors, the data directory's lock among them, and
after a ``kill -9`` of the server it would hold that lock as an orphan, so the
server could not start again on its own data. A spawned worker starts from a fresh
interpreter holding nothing of the server's, and it asks the kernel to kill it
when the server dies, however the server dies (:func:`_bound_to_server`).

The solver's line is only a candidate: the engine replays it from the dealt board
under the deal's rules (protocol/proof.py ``check_proof``), here in the server
process, and only a line that ends ``won`` makes a seed proven.

:class:`ProvenPools` keeps a few proven seeds ready per rule set (``DealRules``),
refilled in the background, so that a winnable room deals as fast as a random one.
Seeds come fresh from the CSPRNG (server/ids.py ``new_seed``); a pooled seed is
known only to the server (this process, or the Redis the nodes share, as secret as
the room logs there) until a room deals it and commits to it, and each is dealt
once. A layout the solver proves impossible, leaves undecided within its
budget, or wins with a line the engine refuses under the deal's rules (more passes
than the limit, a card taken back when the house rule forbids it) is skipped and
counted (``klondike_winnable_layouts`` in /metrics).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from enum import StrEnum

from protocol.deal import deal_layout
from protocol.proof import Proof, ProofError, check_proof, layout_pysol, moves_from_solver
from protocol.settings import DealRules, Variant

from .. import ids
from ..store.base import SeedPool, StoreUnavailable, unavailable
from ..store.memory import LocalSeeds

__all__ = [
    "MAX_STATES",
    "POOL_SIZE",
    "ProvenPools",
    "Verdict",
    "pool_key",
    "prove_seed",
    "solve_pysol",
    "solver_workers",
]

log = logging.getLogger(__name__)

MAX_STATES = 200_000  # the solver's budget per layout: game states it may close
POOL_SIZE = 8  # proven seeds kept ready per rule set


class Verdict(StrEnum):
    PROVEN = "proven"  # the solver won and the engine replayed the line to a win
    IMPOSSIBLE = "impossible"  # the solver exhausted the layout
    UNDECIDED = "undecided"  # no win within the budget
    REFUSED = "refused"  # the solver's line is no win under the deal's rules


def solve_pysol(text: str, draw: int, max_states: int) -> tuple[str, str]:
    """Run the solver on a PySol layout: its result (``won``, ``impossible`` or
    ``undecided``) and its move list. Runs in a worker process."""
    from pyksolve.solver import (  # type: ignore[import-untyped]  # native, in the worker
        Solitaire,
        SolveResult,
    )

    solver = Solitaire()
    # Klondike-Solver's LoadPysol wants at least 211 characters though a full
    # layout is 204: trailing blanks, which it skips, make up the difference.
    if not solver.load_pysol(text + " " * 16):
        raise ValueError("the solver refused the layout")
    solver.reset_game(draw)
    result = solver.solve_fast(max_closed_count=max_states)
    if result in (SolveResult.SolvedMinimal, SolveResult.SolvedMayNotBeMinimal):
        return "won", str(solver.moves_made()).strip()
    if result is SolveResult.Impossible:
        return "impossible", ""
    return "undecided", ""


def prove_seed(
    seed: str, rules: DealRules, max_states: int = MAX_STATES
) -> tuple[Verdict, str, Proof | None]:
    """Solve and check in this process (the bench and the tests; the pools do the
    same with the solve in a worker): the verdict, the solver's line, the proof."""
    piles, stock = deal_layout(seed, Variant.CLASSIC)
    outcome, line = solve_pysol(layout_pysol(piles, stock), rules.draw, max_states)
    return judge(seed, rules, outcome, line)


def judge(
    seed: str, rules: DealRules, outcome: str, line: str
) -> tuple[Verdict, str, Proof | None]:
    """The verdict on the solver's answer: proven only if the engine replays it."""
    if outcome == "impossible":
        return Verdict.IMPOSSIBLE, line, None
    if outcome != "won":
        return Verdict.UNDECIDED, line, None
    try:
        return Verdict.PROVEN, line, check_proof(seed, rules, moves_from_solver(line))
    except ProofError:
        return Verdict.REFUSED, line, None


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _bound_to_server(server: int) -> None:
    """Runs first in each worker: the worker ends when ``server`` (its parent)
    does. On Linux the kernel sends it SIGKILL at once (``PR_SET_PDEATHSIG``);
    elsewhere a thread looks for a new parent once a second. The parent's
    death may come before the request: the parent is checked after it.

    The worker also takes the lowest CPU priority: proofs are background work
    (a pool refilling, the week of daily deals published at start), and a
    move's reply on a busy machine must never wait behind them."""
    os.nice(19)
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    else:

        def watch() -> None:
            while os.getppid() == server:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if os.getppid() != server:
        os._exit(1)


def solver_workers(workers: int) -> ProcessPoolExecutor:
    """The solver's worker processes: spawned, bound to this process's life."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_bound_to_server,
        initargs=(os.getpid(),),
    )


def _solve_seed(seed: str, draw: int, max_states: int) -> tuple[str, str]:
    piles, stock = deal_layout(seed, Variant.CLASSIC)
    return solve_pysol(layout_pysol(piles, stock), draw, max_states)


RECHECK_S = 5.0  # a room waiting for a proven seed looks again this often


def pool_key(rules: DealRules) -> str:
    """The name of the pool for ``rules`` in the store: every rule a proof depends on."""
    return (
        f"{rules.variant.value}/draw{rules.draw}/passes{rules.pass_limit}"
        f"/undo{int(rules.undo)}/f2t{int(rules.foundation_to_tableau)}"
    )


class ProvenPools:
    """Proven seeds per rule set, ready to deal, refilled in the background.

    The seeds themselves are kept by the store (:class:`SeedPool`,
    server/store/base.py): in this process with the in-memory and SQLite stores,
    in Redis with the Redis store, where every node takes from and refills the
    same pool, and each seed is handed out once whichever node takes it. This
    class proves and judges; ``use(store)`` says where the seeds go.

    ``take`` waits while a pool is dry; ``want`` starts filling one (a room that
    turns ``deals: winnable`` on asks for its rules before it deals). A node
    refills while the shared pool holds fewer than ``size`` seeds, checked before
    each batch of ``workers`` layouts: with several nodes filling at once a pool
    may end up to (nodes × workers − 1) over ``size``, never short of proven.
    ``counted(verdict)`` is told of every layout judged, ``sized(rules, n)`` of
    every size of a pool seen (server/net/metrics.py shows both).
    """

    def __init__(
        self,
        *,
        size: int = POOL_SIZE,
        workers: int = 1,
        max_states: int = MAX_STATES,
        new_seed: Callable[[], str] = ids.new_seed,
        executor: Executor | None = None,
        counted: Callable[[Verdict], None] | None = None,
        sized: Callable[[DealRules, int], None] | None = None,
    ) -> None:
        self.size = size
        self.workers = max(1, workers)
        self.max_states = max_states
        self._new_seed = new_seed
        self._executor = executor
        self._own_executor = executor is None
        self._counted = counted
        self._sized = sized
        self._seeds: SeedPool | None = None
        self._known: dict[DealRules, int] = {}  # each pool's size as last seen
        self._fillers: dict[DealRules, asyncio.Task[None]] = {}
        self._ready: dict[DealRules, asyncio.Event] = {}
        self._closed = False
        self.judged: dict[Verdict, int] = dict.fromkeys(Verdict, 0)

    def use(self, seeds: SeedPool) -> None:
        """Keep the proven seeds in ``seeds`` (the server's store)."""
        self._seeds = seeds

    def report_to(
        self,
        counted: Callable[[Verdict], None],
        sized: Callable[[DealRules, int], None],
    ) -> None:
        """Where to tell of every verdict and every change in a pool's size."""
        self._counted = counted
        self._sized = sized

    def ready(self, rules: DealRules) -> int:
        """Proven seeds ready for ``rules``, as this process last saw the pool."""
        return self._known.get(rules, 0)

    def want(self, rules: DealRules) -> None:
        """Make sure the pool for ``rules`` is (being) filled."""
        if rules.variant is Variant.DOUBLE:
            raise ValueError("double klondike deals cannot be proven")
        if self._closed:
            return
        if rules not in self._ready:
            self._ready[rules] = asyncio.Event()
            self._report(rules, 0)  # the pool shows in /metrics from the start
        task = self._fillers.get(rules)
        if task is None or task.done():
            self._fillers[rules] = asyncio.get_running_loop().create_task(self._fill(rules))

    async def take(
        self, rules: DealRules, dry: Callable[[], None] | None = None
    ) -> tuple[str, str]:
        """A proven seed and its solver line; waits while the pool is dry, and
        calls ``dry()`` once when it starts waiting (the room says so).

        The wait is re-armed every :data:`RECHECK_S` (another node may have
        refilled the shared pool; ``want`` restarts a refill that died), and ends
        in ``storage_unavailable`` once the pools are closing (a shutdown must not
        wait for a solver) or when the store cannot be asked: nothing was dealt."""
        told = False
        while True:
            if self._closed:
                raise unavailable("the server is shutting down")
            self.want(rules)
            ready = self._ready[rules]
            ready.clear()
            try:
                got = await self._store().take_seed(pool_key(rules))
            except StoreUnavailable as exc:
                raise unavailable(f"no proven seed: {exc}") from None
            if got is not None:
                self._report(rules, max(0, self._known.get(rules, 1) - 1))
                self.want(rules)  # refill behind it
                return got
            self._report(rules, 0)
            if not told:
                told = True
                if dry is not None:
                    dry()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ready.wait(), RECHECK_S)

    async def prove(self, rules: DealRules) -> tuple[str, str]:
        """A fresh seed proven under ``rules`` and its line, for a deal that is
        not a room's (the daily deal, server/daily/): proven in the same
        workers, one layout at a time, so that a room's refill waits behind at
        most one of these, and taken from no pool the rooms deal from.
        ``storage_unavailable`` once the pools are closing."""
        loop = asyncio.get_running_loop()
        while True:
            if self._closed:
                raise unavailable("the server is shutting down")
            if self._executor is None:
                self._executor = solver_workers(self.workers)
            seed = self._new_seed()
            answer = await loop.run_in_executor(
                self._executor, _solve_seed, seed, rules.draw, self.max_states
            )
            verdict, line, _ = judge(seed, rules, *answer)
            self.judged[verdict] += 1
            if self._counted is not None:
                self._counted(verdict)
            if verdict is Verdict.PROVEN:
                return seed, line

    def _store(self) -> SeedPool:
        if self._seeds is None:  # no server around it (the bench): seeds in this process
            self._seeds = LocalSeeds()
        return self._seeds

    async def _fill(self, rules: DealRules) -> None:
        loop = asyncio.get_running_loop()
        if self._executor is None:
            self._executor = solver_workers(self.workers)
        try:
            await self._fill_until_full(rules, loop)
        except StoreUnavailable as exc:  # tried again at the next want or take
            log.warning("proving %s deals paused: %s", rules.to_wire(), exc)
        except Exception:
            log.exception("proving %s deals failed", rules.to_wire())
            raise

    async def _fill_until_full(self, rules: DealRules, loop: asyncio.AbstractEventLoop) -> None:
        assert self._executor is not None
        seeds, key = self._store(), pool_key(rules)
        while (have := await seeds.seeds_ready(key)) < self.size:
            self._report(rules, have)
            batch = [self._new_seed() for _ in range(self.workers)]
            jobs = [
                loop.run_in_executor(self._executor, _solve_seed, s, rules.draw, self.max_states)
                for s in batch
            ]
            for seed, answer in zip(batch, await asyncio.gather(*jobs), strict=True):
                verdict, line, _ = judge(seed, rules, *answer)
                self.judged[verdict] += 1
                if self._counted is not None:
                    self._counted(verdict)
                if verdict is Verdict.PROVEN:
                    self._report(rules, await seeds.put_seed(key, seed, line))
                    self._ready[rules].set()
        self._report(rules, have)

    def _report(self, rules: DealRules, n: int) -> None:
        self._known[rules] = n
        if self._sized is not None:
            self._sized(rules, n)

    async def close(self) -> None:
        """Stop refilling, and wake every room waiting for a seed (it is refused)."""
        self._closed = True
        for ready in self._ready.values():
            ready.set()
        tasks = list(self._fillers.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):  # cancelled, or a worker failed
                await task
        if self._own_executor and self._executor is not None:
            executor, self._executor = self._executor, None
            # A proof under way is thrown away: its worker is stopped, not waited
            # for. Waiting blocked the event loop for the rest of its budget (and
            # a spawned worker's start), seconds on a busy machine, while every
            # client still waited for its 1001.
            pool = executor if isinstance(executor, ProcessPoolExecutor) else None
            workers = list(((pool and pool._processes) or {}).values())
            executor.shutdown(wait=False, cancel_futures=True)
            for worker in workers:
                worker.terminate()
