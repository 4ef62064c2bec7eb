"""Prometheus metrics of one server, on its own registry.

A registry per server (not the process-global default) lets tests run several
servers in one process, and lets /metrics show exactly this server.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

__all__ = ["Metrics"]


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
        self.moves_accepted = Counter(
            "klondike_moves_accepted", "Moves accepted and acknowledged", registry=r
        )
        self.moves_retried = Counter(
            "klondike_moves_retried",
            "Moves sent again with a number already logged, answered with the original reply",
            registry=r,
        )
        self.moves_rejected = Counter(
            "klondike_moves_rejected", "Moves refused, by reason", ["reason"], registry=r
        )
        self.move_latency = Histogram(
            "klondike_move_latency_seconds",
            "From a move frame's arrival to its reply being queued (store append included)",
            buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
            registry=r,
        )
        self.frames_in = Counter("klondike_frames_in", "Frames received", registry=r)
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
        self.winnable_waits = Counter(
            "klondike_winnable_waits",
            "Deals that found their pool of proven seeds dry and waited for one",
            registry=r,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
