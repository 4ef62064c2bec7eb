"""``klondike-race daily --fetch`` and ``verify --daily``: keep the daily deals'
commitments, and check a revealed day against the copy kept.

A daily deal's commitment is published a week before its day (docs/protocol.md,
"Daily deal"). Its worth is that someone other than the server keeps it: the
file ``daily --fetch FILE`` writes holds every commitment fetched, keyed by
day and ladder, with the first copy kept when a later fetch shows the same
day again (a day that changed would be the server breaking its word, and is
reported). ``verify --daily DATE --saved FILE`` fetches the revealed day and
checks its seed against the commitment saved *before* it was revealed, then
replays its proof with the engine (client/verify.py, the same check as a
room's revealed deal).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protocol.settings import DealRules

from .session import connect
from .verify import verify_solution

__all__ = ["SavedDays", "fetch_days", "verify_day"]

FORMAT = "klondike-race/daily-commitments/v1"


async def fetch_days(url: str, name: str = "verifier") -> dict[str, Any]:
    """The server's ``daily`` reply, asked as a guest."""
    async with connect(url, name=name, reconnect=False) as session:
        return await session.request("daily")


@dataclass
class SavedDays:
    """The commitments kept in a file: ``{"DATE LADDER": {commitment, saved}}``."""

    path: Path
    days: dict[str, dict[str, Any]]

    @classmethod
    def load(cls, path: Path | str) -> SavedDays:
        """The file's days (none when there is no file yet); ValueError for a
        file that is not one of ours."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path, {})
        except OSError as exc:
            raise ValueError(f"cannot read {path}: {exc.strerror}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not JSON: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError(f"{path} is not a file of saved daily commitments")
        return cls(path, dict(data.get("days", {})))

    def add(self, listing: dict[str, Any], fetched: float) -> tuple[int, list[str]]:
        """Keep the commitments of a ``daily`` reply: how many were new, and
        the days whose commitment differs from the one kept (the kept one stays)."""
        new, changed = 0, []
        for day in listing.get("days", []):
            key = f"{day['date']} {day['ladder']}"
            kept = self.days.get(key)
            if kept is None:
                self.days[key] = {"commitment": day["commitment"], "saved": fetched}
                new += 1
            elif kept["commitment"] != day["commitment"]:
                changed.append(key)
        return new, changed

    def save(self) -> None:
        """Written whole to a new file, then moved over the old one."""
        data = {"format": FORMAT, "days": dict(sorted(self.days.items()))}
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(partial, self.path)


def verify_day(listing: dict[str, Any], date: str, saved: SavedDays | None) -> tuple[bool, str]:
    """Check every ladder of ``date`` in a ``daily`` reply: its seed against the
    saved commitment (or, with nothing saved, the one the server shows now,
    which proves much less, and says so) and its proof. The verdict and the
    report to print."""
    days = [d for d in listing.get("days", []) if d.get("date") == date]
    if not days:
        return False, f"NOT FOUND: the server lists no daily deal for {date}"
    ok, parts = True, []
    for day in days:
        key = f"{day['date']} {day['ladder']}"
        head = f"== {key} =="
        if "seed" not in day:
            ok = False
            today = listing.get("today")
            parts.append(
                f"{head}\nNOT REVEALED: {date} is not over yet (the server's day: {today})"
            )
            continue
        if saved is None:
            digest = day["commitment"]
            note = (
                "no saved commitments given (--saved): checked against the commitment the"
                " server shows now, which shows the seed and proof agree, not that the"
                " seed was fixed in advance\n"
            )
        elif key in saved.days:
            digest = str(saved.days[key]["commitment"])
            note = f"checked against the commitment saved in {saved.path}\n"
            if digest != day["commitment"]:
                note += (
                    f"WARNING: the server now shows another commitment for this day:"
                    f" {day['commitment']}\n"
                )
        else:
            ok = False
            parts.append(f"{head}\nNOT SAVED: {saved.path} holds no commitment for {key}")
            continue
        good, text = verify_solution(day["seed"], digest, DealRules.from_wire(day["rules"]), day)
        ok = ok and good
        parts.append(f"{head}\n{note}{text}")
    verdict = "VERIFIED" if ok else "FAILED"
    return ok, "\n\n".join(parts) + f"\n\n{verdict}: daily deal of {date}"
