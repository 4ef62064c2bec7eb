"""The browser's outcomes.js against the Python reference, in headless Chromium.

The page keeps every board it shows by applying each move's OUTCOME to the view
it holds and checking the digest (docs/protocol.md, "Applying an outcome", "The
digest"). Random deals of every variant, draw one and three, are played by the
engine; their outcomes (protocol/outcomes.py ``move_outcome``, as the server
sends them) go to client/web/outcomes.js as served by a real server, and the
view the JavaScript keeps must be, at every step, exactly the engine's
``player_view`` (with ``logged``), and its digest the Python one. The games reach
every kind of move, an undo of every kind an undo takes back, recycles, resigning
and auto-complete. An outcome that does not fit the view is refused as the Python
reference refuses it, and a view that does not check out is not kept.
"""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from playwright.sync_api import Browser

from protocol import Board, DealRules, Move, MoveKind, Status, Variant, player_view
from protocol.outcomes import OutcomeMismatch, apply_outcome, move_outcome, view_digest
from tests.support.web import Client, no_errors
from tests.test_engine_properties import pick

K = MoveKind

# In and out as JSON text, as the page gets outcomes off the wire (and one string
# crosses to the page far faster than many objects).
FOLLOW = """async (text) => {
  const m = await import('/outcomes.js');
  return JSON.stringify(JSON.parse(text).map(({start, outcomes}) => {
    let view = start;
    const steps = [];
    for (const o of outcomes) {
      view = m.applyOutcome(view, o);
      steps.push({view, digest: m.viewDigest(view)});
    }
    return {start: m.viewDigest(start), steps};
  }));
}"""


def game(
    seed: str, rules: DealRules, rng: random.Random, kinds: set[tuple[str, str]]
) -> dict[str, Any]:
    """A random game: its opening view, each move's outcome, and the engine's view
    and digest after each (``kinds`` gains each move's kind, and an undo's)."""
    board = Board.deal(seed, rules)
    start = {**player_view(board), "logged": 0}
    outcomes: list[dict[str, Any]] = []
    truths: list[dict[str, Any]] = []
    for _ in range(400):
        if board.status is not Status.PLAYING:
            break
        move = pick(board, rng.randrange(1_000_000))
        outcome = board.apply(move)
        outcomes.append(move_outcome(outcome, board))
        truths.append({**player_view(board), "logged": board.logged})
        undid = outcome.undid.kind.value if outcome.undid is not None else ""
        kinds.add((move.kind.value, undid))
    return {"seed": seed, "rules": rules, "start": start, "outcomes": outcomes, "truths": truths}


def test_outcomes_js_keeps_the_engine_view(server: str, browser: Browser) -> None:
    rng = random.Random(20261202)
    kinds: set[tuple[str, str]] = set()
    games = []
    for variant in Variant:
        for draw in (1, 3):
            for i in range(12):
                rules = DealRules(
                    variant=variant,
                    draw=draw,
                    pass_limit=(0, 1, 3)[i % 3],
                    undo=i % 4 != 3,
                    foundation_to_tableau=i % 2 == 0,
                )
                games.append(game(f"js-{variant.value}-{draw}-{i}", rules, rng, kinds))
    # Every kind of move, and an undo of each kind an undo may take back.
    assert {k for k, _ in kinds} == {k.value for k in MoveKind}
    undone = {u for k, u in kinds if k == K.UNDO.value}
    assert undone == {
        K.WASTE_TO_TABLEAU.value,
        K.WASTE_TO_FOUNDATION.value,
        K.TABLEAU_TO_FOUNDATION.value,
        K.TABLEAU_TO_TABLEAU.value,
        K.FOUNDATION_TO_TABLEAU.value,
    }
    assert sum(len(g["outcomes"]) for g in games) > 3_000

    client = Client(browser, server, "outcomes")
    try:
        client.open()
        sent = [{"start": g["start"], "outcomes": g["outcomes"]} for g in games]
        kept = json.loads(client.page.evaluate(FOLLOW, json.dumps(sent)))
        for g, js in zip(games, kept, strict=True):
            where = f"{g['seed']} {g['rules']}"
            assert js["start"] == view_digest(g["start"]), where
            assert len(js["steps"]) == len(g["truths"]), where
            for n, (step, truth, outcome) in enumerate(
                zip(js["steps"], g["truths"], g["outcomes"], strict=True)
            ):
                assert step["view"] == truth, (where, n, outcome)
                assert step["digest"] == view_digest(truth), (where, n, outcome)
        no_errors(client)
    finally:
        client.close()


REFUSALS = """async ({view, cases, draw}) => {
  const m = await import('/outcomes.js');
  const before = JSON.stringify(view);
  const refused = cases.map((o) => {
    try {
      m.applyOutcome(view, o);
      return null;
    } catch (err) {
      return err instanceof m.OutcomeMismatch ? 'mismatch' : String(err);
    }
  });
  const after = m.applyOutcome(view, draw.outcome);
  const wrong = draw.digest === '00000000' ? '00000001' : '00000000';
  return {
    refused,
    crc: m.crc32('123456789'),
    kept: m.followOutcome(view, draw.outcome, draw.digest),
    wrongDigest: m.followOutcome(view, draw.outcome, wrong),
    unfit: m.followOutcome(view, cases[0], draw.digest),
    // Applying leaves the view it was given as it was (a redraw glides from it).
    untouched: JSON.stringify(view) === before && after.logged === 1,
  };
}"""


def test_outcomes_js_refuses_what_does_not_fit(server: str, browser: Browser) -> None:
    """The cases protocol/outcomes.py refuses (tests/test_outcomes.py) are refused
    in the browser too, the CRC-32 is zlib's, applying leaves the view it was
    given as it was, and followOutcome keeps a view only when the outcome fits it
    and its digest is the server's."""
    board = Board.deal("mismatch", DealRules(variant=Variant.CLASSIC, draw=1))
    view = {**player_view(board), "logged": 0}
    wire = move_outcome(board.apply(Move(K.DRAW)), board)
    two = {"kind": "tableau_tableau", "from": 1, "to": 2, "count": 2}
    too_many = {**wire, "move": two, "cards": ["KS", "QH"]}
    nowhere = {**wire, "move": {"kind": "waste_tableau", "to": 7}, "cards": ["KS"]}
    no_turn = {**wire, "turned": "QH", "move": {**two, "count": 0}, "cards": []}
    undo_of_nothing = {**wire, "move": {"kind": "undo"}}
    cases = [too_many, nowhere, no_turn, undo_of_nothing]
    for bad in cases:
        with pytest.raises(OutcomeMismatch):
            apply_outcome(view, bad)
    after = apply_outcome(view, wire)
    client = Client(browser, server, "refusals")
    try:
        client.open()
        got = client.page.evaluate(
            REFUSALS,
            {"view": view, "cases": cases, "draw": {"outcome": wire, "digest": view_digest(after)}},
        )
        assert got["refused"] == ["mismatch"] * len(cases)
        assert got["crc"] == "cbf43926"
        assert got["kept"] == after
        assert got["wrongDigest"] is None
        assert got["unfit"] is None
        assert got["untouched"] is True
        no_errors(client)
    finally:
        client.close()
