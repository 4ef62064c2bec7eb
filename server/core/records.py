"""The room log's records: what each one holds, and their bytes.

A room is event-sourced: its state is a fold of its records (server/core/room.py), so a
record holds a *decision*, never something the fold would have to re-decide with
information it does not have. The seed of a deal is drawn by the shell and written
into ``deal_started``; the new host is chosen when the old one leaves and written
into ``left``; a deal's rules are resolved from the settings at deal time and
written into ``deal_started``. Replaying the log through the same fold therefore
rebuilds the room exactly, seq numbers included, on this node or another.

Every record is a small map with its kind under ``"k"`` (moves dominate the log, so
keys are short):

=============== ==============================================================
``created``     ``settings`` (full map), ``host``, ``at``
``joined``      ``p``, ``name``, ``role`` (``player`` / ``spectator``); a bot
                player has ``bot``, its pace (the server plays for it)
``presence``    ``p``, ``on`` (a member's connection dropped or came back)
``left``        ``p``, ``host`` (the host after it; may be the same)
``removed``     ``p``, ``host``
``settings``    ``changes`` (partial map, already validated), ``at``
``round``       ``at``, ``carry`` ({player: cumulative Vegas bank})
``deal``        ``n``, ``seed``, ``at``, ``rules`` (DealRules map); with ``deals:
                winnable``, ``proof`` (the solver's winning line, protocol/proof.py)
``move``        ``p``, ``d`` (deal number), ``t`` (ms into the deal), ``s``
                (acceptance order: the record's index in the log), ``m`` (move map)
``deal_ended``  ``n``, ``at``, ``reason`` (``all_ended`` / ``host`` / ``time``)
``break``       ``at`` (a deal over and not the round's last: the room pauses;
                the next deal starts ``break_seconds`` after the deal's end)
``ready``       ``p`` (a player of the round is ready for the next deal)
``round_over``  ``at`` (its fold adds the round's result to the series,
                server/core/series.py)
``closed``      ``reason`` (``host`` / ``empty`` / ``idle`` / ``expired``)
``snapshot``    ``r`` (the record's own index in the log), ``seq``, ``state``,
                ``settings``, ``host``, ``members`` ([id, name, role, connected,
                bot pace or nil] in order), ``round``, ``round_at``, ``round_players``, ``carry``,
                ``closed`` (reason or nil), ``created_at``, ``ready`` (the players
                ready in a break, in order), ``deals``: the current round's, each
                ``n``, ``seed``, ``at``, ``rules``, ``ended`` (at, or nil),
                ``ended_by`` (the ``deal_ended`` reason, or nil), ``end_t``,
                ``first``, ``logs`` ({player: [[t, kind, from, to, count], …]},
                every player dealt in, in order) and ``won``
                ({player: the ``s`` of their winning move}), ``proof`` (the winning line
                of a winnable deal, or nil); ``series`` (the finished rounds,
                server/core/series.py ``Series.to_wire``; missing in snapshots
                written before rooms kept one: an empty series)
=============== ==============================================================

A ``snapshot`` is the room's whole state as of that point, written by the shell
(server/rooms/runner.py) after the records that end a deal or start a round. It
decides nothing: folding it *replaces* the room's state with the one it holds
(replays are rebuilt from the logs by the engine), so folding a log from its last
snapshot gives exactly the room the whole log gives, and the store may drop every
record before a snapshot (:meth:`server.store.base.Store.compact`): a room that
played for hours is taken over from a snapshot and a short tail. Its ``r`` keeps
the log's numbering (moves' ``s``, the record count) unchanged across that.

Records are msgpack maps on the store. A log is only ever read by this code, but
it outlives processes, so the format only grows: new keys, never new meanings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgpack  # type: ignore[import-untyped]

__all__ = [
    "BREAK",
    "CLOSED",
    "CREATED",
    "DEAL",
    "DEAL_ENDED",
    "JOINED",
    "LEFT",
    "MOVE",
    "PRESENCE",
    "READY",
    "REMOVED",
    "ROUND",
    "ROUND_OVER",
    "SETTINGS",
    "SNAPSHOT",
    "Record",
    "decode_record",
    "encode_record",
    "encode_spliced",
]

Record = dict[str, Any]

CREATED = "created"
JOINED = "joined"
PRESENCE = "presence"
LEFT = "left"
REMOVED = "removed"
SETTINGS = "settings"
ROUND = "round"
DEAL = "deal"
MOVE = "move"
DEAL_ENDED = "deal_ended"
BREAK = "break"
READY = "ready"
ROUND_OVER = "round_over"
CLOSED = "closed"
SNAPSHOT = "snapshot"


def encode_record(record: Record) -> bytes:
    data: bytes = msgpack.packb(record, use_bin_type=True)
    return data


def encode_spliced(record: Record, key: str, items: Sequence[bytes]) -> bytes:
    """``record`` with ``key`` set to the list of ``items``, each already encoded
    (:func:`encode_record` of one value): the very bytes of the whole record,
    up to the order of its keys, without encoding the items again."""
    packer = msgpack.Packer(use_bin_type=True)
    parts = [packer.pack_map_header(len(record) + 1)]
    for k, v in record.items():
        parts.append(packer.pack(k))
        parts.append(packer.pack(v))
    parts.append(packer.pack(key))
    parts.append(packer.pack_array_header(len(items)))
    parts.extend(items)
    return b"".join(parts)


def decode_record(data: bytes) -> Record:
    record = msgpack.unpackb(data, raw=False, strict_map_key=False)
    if not isinstance(record, dict) or "k" not in record:
        raise ValueError("not a room record")
    return record
