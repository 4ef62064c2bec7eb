"""What a room's views built before, kept by its runner for the next time.

The core's views are pure (server/core/views.py): each call builds its map and
changes nothing. A few are asked for again and again with the same answer, and
building them is work in the length of a round or of a log:

- a past deal's **revealed map** (every board of it, its proof checked again by
  the engine), which every snapshot of the round carries: kept packed, since a
  round's deals over would otherwise hold a few hundred containers each (every
  card of every board) for the collector to walk on each full pass, for as long
  as the round lasts; each use unpacks a fresh map (a snapshot adds to it);
- a **retried move's reply**, rebuilt by replaying the player's log: the last
  one per player, so a client that sends one move again and again pays for one
  replay;
- a past deal's **logs, encoded** for ``deal_log`` once per subprotocol (True:
  msgpack), so that a request costs a copy of those bytes.

A deal over takes no more moves, and a log's first moves never change while the
room holds the deal, so none of these goes stale. Each is kept by the deal's
identity and only as long as the deal lives: a rollback (which builds the room
anew) or a rematch (which drops the round's deals) lets them go.
"""

from __future__ import annotations

import weakref
from typing import Any, Generic, TypeVar

import msgpack  # type: ignore[import-untyped]

from protocol.wire import encode_value

from ..core.values import Deal
from ..core.views import RoomLike, Told, deal_logs, replayed_move, revealed_deal

__all__ = ["ViewMemo"]

K = TypeVar("K")
V = TypeVar("V")

Replayed = tuple[int, Told, int]


class _PerDeal(Generic[K, V]):
    """Values kept by (deal, key), each for as long as its deal lives."""

    def __init__(self) -> None:
        self._kept: dict[tuple[int, K], tuple[weakref.ref[Deal], V]] = {}

    def get(self, deal: Deal, key: K) -> V | None:
        kept = self._kept.get((id(deal), key))
        if kept is None or kept[0]() is not deal:
            return None
        return kept[1]

    def put(self, deal: Deal, key: K, value: V) -> None:
        for gone in [k for k, (ref, _) in self._kept.items() if ref() is None]:
            del self._kept[gone]
        self._kept[(id(deal), key)] = (weakref.ref(deal), value)


class ViewMemo:
    """One room's kept views; see the module docstring."""

    def __init__(self) -> None:
        self._revealed: _PerDeal[None, bytes] = _PerDeal()
        self._replayed: _PerDeal[str, tuple[Any, Replayed]] = _PerDeal()
        self._logs: _PerDeal[bool, bytes | str] = _PerDeal()

    def revealed(self, deal: Deal) -> dict[str, Any]:
        """:func:`~server.core.views.revealed_deal`, built once per deal over."""
        if not deal.over:
            return revealed_deal(deal)
        packed = self._revealed.get(deal, None)
        if packed is not None:
            unpacked: dict[str, Any] = msgpack.unpackb(packed, raw=False)
            return unpacked
        revealed = revealed_deal(deal)
        self._revealed.put(deal, None, msgpack.packb(revealed, use_bin_type=True))
        return revealed

    def replayed_move(self, room: RoomLike, deal: Deal, player: str, n: int) -> Replayed:
        """:func:`~server.core.views.replayed_move`, the last one per player kept
        while the room's scoring (which the score depends on) stays the same."""
        settings = room.settings
        key = (n, settings.scoring, settings.race_bonus)
        kept = self._replayed.get(deal, player)
        if kept is not None and kept[0] == key:
            return kept[1]
        parts = replayed_move(room, deal, player, n)
        self._replayed.put(deal, player, (key, parts))
        return parts

    def deal_logs(self, deal: Deal, binary: bool) -> bytes | str:
        """A deal over's :func:`~server.core.views.deal_logs`, encoded for one
        subprotocol."""
        data = self._logs.get(deal, binary)
        if data is None:
            data = encode_value(deal_logs(deal), binary).data
            self._logs.put(deal, binary, data)
        return data
