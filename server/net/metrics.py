"""Prometheus metrics of one server, on its own registry.

A registry per server (not the process-global default) lets tests run several
servers in one process, and lets /metrics show exactly this server.

The counters every frame and every move bump (frames in, moves accepted and
retried, the move latency) are plain numbers, read only when /metrics is
scraped (:class:`Tally`, :class:`Latency`): prometheus_client's own take a lock
and several calls per update, ~1.5 µs of each move's CPU. They are shown exactly
as its Counter and Histogram would show them.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric

__all__ = ["Latency", "Metrics", "Tally"]


class Tally:
    """A counter of the hot path, shown on /metrics as a prometheus Counter."""

    __slots__ = ("created", "doc", "name", "value")

    def __init__(self, name: str, doc: str, registry: CollectorRegistry) -> None:
        self.name = name
        self.doc = doc
        self.value = 0
        self.created = time.time()
        registry.register(self)

    def inc(self) -> None:
        self.value += 1

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.doc)
        family.add_metric([], float(self.value), created=self.created)
        yield family


class Latency:
    """A histogram of the hot path (seconds), shown as a prometheus Histogram: a
    value counts in the first bucket whose bound is not below it (``le``)."""

    __slots__ = ("bounds", "counts", "created", "doc", "name", "total")

    def __init__(
        self, name: str, doc: str, bounds: tuple[float, ...], registry: CollectorRegistry
    ) -> None:
        self.name = name
        self.doc = doc
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound (+Inf)
        self.total = 0.0
        self.created = time.time()
        registry.register(self)

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1
        self.total += seconds

    def collect(self) -> Iterator[Metric]:
        buckets: list[tuple[str, float]] = []
        seen = 0
        labels = [repr(float(b)) for b in self.bounds] + ["+Inf"]  # as prometheus_client's
        for label, count in zip(labels, self.counts, strict=True):
            seen += count
            buckets.append((label, float(seen)))
        family = HistogramMetricFamily(self.name, self.doc)
        family.add_metric([], buckets, self.total)
        family.add_sample(self.name + "_created", {}, self.created)
        yield family


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.rooms = Gauge("klondike_rooms", "Open rooms", registry=r)
        self.connections = Gauge(
            "klondike_connections", "Open WebSocket connections by role", ["role"], registry=r
        )
        for role in ("none", "player", "spectator"):
            self.connections.labels(role)
        self.moves_accepted = Tally("klondike_moves_accepted", "Moves accepted and acknowledged", r)
        self.moves_retried = Tally(
            "klondike_moves_retried",
            "Moves sent again with a number already logged, answered with the original reply",
            r,
        )
        self.moves_rejected = Counter(
            "klondike_moves_rejected", "Moves refused, by reason", ["reason"], registry=r
        )
        self.move_latency = Latency(
            "klondike_move_latency_seconds",
            "From a move frame's arrival to its reply being queued (store append included)",
            (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
            r,
        )
        self.frames_in = Tally("klondike_frames_in", "Frames received", r)
        self.room_adoptions = Counter(
            "klondike_room_adoptions",
            "Rooms rebuilt from their log to run here (a restart, a takeover): one per"
            " runner started, so a room rebuilt twice at once shows as two",
            registry=r,
        )
        self.closed_slow = Counter(
            "klondike_slow_consumers_closed", "Connections closed for falling behind", registry=r
        )

        self.winnable_layouts = Counter(
            "klondike_winnable_layouts",
            "Random layouts judged for deals: winnable, by verdict: proven (dealt later),"
            " impossible, undecided within the budget, refused (the solver's line is no"
            " win under the deal's rules); all but proven are skipped",
            ["verdict"],
            registry=r,
        )
        for verdict in ("proven", "impossible", "undecided", "refused"):
            self.winnable_layouts.labels(verdict)
        self.winnable_pool = Gauge(
            "klondike_winnable_pool",
            "Proven seeds ready to deal, by rule set (variant/draw/pass limit/f2t), as this"
            " node last saw the pool (shared by every node with the Redis store)",
            ["rules"],
            registry=r,
        )
        self.rated_same_address = Counter(
            "klondike_rated_same_address",
            "Pairs of players who raced each other in a rated round from one client"
            " address, once per round: two accounts farming each other show as a steady"
            " rise (a counter, not an accusation: a household shares an address too)",
            registry=r,
        )
        self.rated_same_address_repeats = Counter(
            "klondike_rated_same_address_repeats",
            "Of those, a pair this node has seen race rated from one address three times or more",
            registry=r,
        )
        self.winnable_waits = Counter(
            "klondike_winnable_waits",
            "Deals that found their pool of proven seeds dry and waited for one",
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
