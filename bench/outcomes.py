"""What telling one accepted move costs, with the whole board view (protocol v1)
and with its outcome and digest (v2), both in the same run.

Per move, on a room's hot path and a client's:

- **server**: the frames that tell the move's board built and encoded (msgpack):
  the mover's ``moved`` reply and a spectator's ``progress`` event. v1: each
  carries the board view (built for each, as v1 did); v2: each carries the OUTCOME
  map (``protocol.outcomes.move_outcome``) and the board's digest
  (``board_digest``), built once for both.
- **client**: the reply decoded (as the Python client decodes: client/codec.py)
  and the board view made current: v1 by taking the view from the frame; v2 by
  applying the outcome to the view it holds (``apply_outcome``) and checking the
  digest (``view_digest``).
- **bytes**: the reply's size in msgpack and in JSON (a watcher's event carries
  the same board or outcome and digest).

The moves are real: random mostly-greedy play (undos now and then) over deals of
every variant and draw, the moves replayed on boards so each step is timed at
the position it was played. Times are this process's CPU time, each the median
of several rounds.

Usage: .venv/bin/python -m bench.outcomes [--moves N] [--rounds R]
Prints a table, then one line of JSON (the last line) for scripts.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from client.codec import MSGPACK, decode
from protocol import Board, DealRules, Move, MoveKind, Status, Variant, player_view
from protocol import messages as M
from protocol.moves import Outcome
from protocol.outcomes import apply_outcome, board_digest, move_outcome, view_digest
from protocol.views import outcome_view, progress
from protocol.wire import encode

CLOCK = time.process_time
Step = tuple[Board, Outcome, dict[str, Any]]  # the board after, the outcome, the view before


def steps(count: int, seed: int = 1) -> list[Step]:
    """``count`` accepted moves: each with a copy of the board after it and the
    board view before it (what a client holds when the reply comes)."""
    rng = random.Random(seed)
    out: list[Step] = []
    kinds = [(v, d) for v in Variant for d in (1, 3)]
    game = 0
    while len(out) < count:
        variant, draw = kinds[game % len(kinds)]
        rules = DealRules(variant=variant, draw=draw, undo=True)
        board = Board.deal(f"bench-{game}", rules)
        game += 1
        while board.status is Status.PLAYING and len(out) < count:
            before = {**player_view(board), "logged": board.logged}
            if board.can_undo() and rng.random() < 0.1:
                move = Move(MoveKind.UNDO)
            else:
                moves = board.legal_moves()
                home = [m for m in moves if m.kind.value.endswith("foundation")]
                move = rng.choice(home or moves)
            outcome = board.apply(move)
            out.append((board.copy(), outcome, before))
    return out


def v1_frames(board: Board, outcome: Outcome, binary: bool) -> list[bytes | str]:
    """v1: the ``moved`` reply (``result``, ``board``, ``score``) and a spectator's
    ``progress`` event (``progress``, ``board``), a board view built for each."""
    reply = {
        "type": "moved",
        "id": 1,
        "deal": 1,
        "t": 1000,
        "result": outcome_view(outcome),
        "board": {**player_view(board), "logged": board.logged},
        "score": 5,
    }
    event = {
        "type": "progress",
        "seq": 9,
        "player": "p3K9QX2",
        "deal": 1,
        "progress": progress(board, 5),
        "board": {**player_view(board), "logged": board.logged},
    }
    return [encode(reply, binary), encode(event, binary)]


def v2_frames(board: Board, outcome: Outcome, binary: bool) -> list[bytes | str]:
    """v2: the ``moved`` reply (``outcome``, ``digest``, ``score``) and a
    spectator's ``progress`` event (``progress``, ``outcome``, ``digest``), the
    outcome and digest built once for both."""
    told = move_outcome(outcome, board), board_digest(board)
    reply = M.moved(1, deal=1, t=1000, outcome=told[0], digest=told[1], score=5)
    seen = progress(board, 5)
    event = M.progress(9, player="p3K9QX2", deal=1, progress=seen, told=told)
    return [encode(reply, binary), encode(event, binary)]


def per_move(work: Callable[[], None], n: int, rounds: int) -> float:
    """Median over ``rounds`` of the CPU µs per move ``work`` (all ``n`` moves) takes."""
    times = []
    for _ in range(rounds):
        began = CLOCK()
        work()
        times.append((CLOCK() - began) / n * 1e6)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=20_000, help="moves timed (20000)")
    parser.add_argument("--rounds", type=int, default=5, help="rounds, median taken (5)")
    args = parser.parse_args(argv)
    data = steps(args.moves)
    n = len(data)
    v1 = [v1_frames(b, o, True)[0] for b, o, _ in data]
    v2 = [v2_frames(b, o, True)[0] for b, o, _ in data]

    def server_v1() -> None:
        for board, outcome, _ in data:
            v1_frames(board, outcome, True)

    def server_v2() -> None:
        for board, outcome, _ in data:
            v2_frames(board, outcome, True)

    def client_v1() -> None:
        for frame in v1:
            view = decode(frame, MSGPACK)["board"]
            del view

    def client_v2() -> None:
        for frame, (_, _, before) in zip(v2, data, strict=True):
            reply = decode(frame, MSGPACK)
            after = apply_outcome(before, reply["outcome"])
            if view_digest(after) != reply["digest"]:
                raise AssertionError("a digest that does not match")

    figures: dict[str, Any] = {
        "moves": n,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    rows = []
    for name, one, two in (
        ("server: reply + watcher's event", server_v1, server_v2),
        ("client: decode + current view", client_v1, client_v2),
    ):
        a, b = per_move(one, n, args.rounds), per_move(two, n, args.rounds)
        key = name.split(":")[0]
        figures[key] = {"v1_us": round(a, 2), "v2_us": round(b, 2), "ratio": round(b / a, 3)}
        rows.append((name, f"{a:.2f} µs", f"{b:.2f} µs", f"{b / a:.2f}×"))
    for binary, kind in ((True, "msgpack"), (False, "json")):
        one_bytes = statistics.mean(len(v1_frames(b, o, binary)[0]) for b, o, _ in data)
        two_bytes = statistics.mean(len(v2_frames(b, o, binary)[0]) for b, o, _ in data)
        figures[f"bytes_{kind}"] = {"v1": round(one_bytes, 1), "v2": round(two_bytes, 1)}
        rows.append(
            (f"bytes of the reply, {kind}", f"{one_bytes:.0f}", f"{two_bytes:.0f}",
             f"{two_bytes / one_bytes:.2f}×")
        )  # fmt: skip

    print(f"A move's reply, per move over {n:,} moves (every variant, draw 1 and 3, undos)")
    print(f"{'':<34} {'v1 (whole view)':>16} {'v2 (outcome)':>14} {'v2/v1':>7}")
    for name, a_text, b_text, ratio in rows:
        print(f"{name:<34} {a_text:>16} {b_text:>14} {ratio:>7}")
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
