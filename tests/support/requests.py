"""A sample of every request a client may send, by its ``type``."""

from __future__ import annotations

from typing import Any

# Every field set, none left to its default: each is a map a client may send, as
# ``request_message`` makes it (so a test of that direction compares them as they
# are). tests/test_requests.py sends them all through the relay, ``leave_room``
# last: it is the client's way out.
SAMPLES: dict[str, dict[str, Any]] = {
    # One way in each (docs/protocol.md, "Accounts"); the label names a new device.
    "hello": {"version": 2, "link": "not-a-code", "label": "cli"},
    "ping": {},
    "daily": {},
    "daily_start": {"ladder": "classic-draw1"},
    "daily_board": {"ladder": "classic-draw3", "date": "2026-12-02", "friends": True, "before": 50},
    "daily_compare": {"ladder": "classic-draw1", "date": "2026-12-02"},
    "daily_line": {"ladder": "classic-draw1", "date": "2026-12-01"},
    "create_room": {"settings": {"draw": 3, "deals_per_round": 2}},
    "update_settings": {"settings": {"scoring": "vegas"}},
    "start": {},
    "next_deal": {},
    "remove_player": {"player": "pNOBODY"},
    "add_bot": {"pace": "fast"},
    "rematch": {},
    "close_room": {},
    "ready": {},
    "room_info": {"code": "ZZZZZZ"},
    "move": {
        "deal": 1,
        "move": {"kind": "tableau_tableau", "from": 2, "to": 5, "count": 3},
        "n": 7,
    },
    "snapshot": {},
    "react": {"reaction": "wow"},
    "deal_log": {"deal": 1},
    "profile": {"handle": "Bea"},
    "history": {"handle": "Bea", "before": 1764430123.5, "limit": 5},
    "past_deal": {"key": "ZZZZZZ/1/1"},
    "challenge": {"key": "ZZZZZZ/1/1"},
    "challenge_info": {"code": "X5DAM2BVDEMWWSF5QGQZRGSHZN"},
    "challenge_start": {"code": "X5DAM2BVDEMWWSF5QGQZRGSHZN"},
    "challenges": {},
    "take_handle": {"handle": "Bobby", "label": "cli"},
    "link_code": {},
    "devices": {},
    "sign_out": {"device": "dNOBODY", "all": False},
    "recovery_codes": {},
    "passkey_options": {"purpose": "register"},
    "add_passkey": {"credential": {"id": "AAAA", "type": "public-key"}, "label": "cli"},
    "passkeys": {},
    "remove_passkey": {"passkey": "AAAA"},
    "change_handle": {"handle": "Robert"},
    "account_settings": {"shows_record": False, "shows_online": False},
    "export_account": {},
    "delete_account": {"handle": "Nobody"},
    "friends": {},
    "befriend": {"handle": "Bea"},
    "ladder": {"ladder": "classic-draw1", "friends": True},
    "forecast": {},
    "queue": {"ladder": "classic-draw1"},
    "unqueue": {},
    "accept_bots": {},
    "answer_friend": {"handle": "Bea", "accept": True},
    "unfriend": {"handle": "Bea"},
    "friend_link": {},
    "invite_friend": {"handle": "Bea"},
    "join_room": {"code": "ZZZZZZ", "role": "spectator"},
    "leave_room": {},
}

# The other form of a request whose fields are alternatives (exactly one given).
ALTERNATIVES: dict[str, dict[str, Any]] = {
    "befriend": {"link": "f.not-a-link"},
}
