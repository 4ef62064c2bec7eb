"""Ratings of rated rounds: a skill estimate per ladder and player.

``model`` is pure (openskill's Plackett-Luce, the shown number, time away, the
ladder of a room's rules, replaying a ladder from its rated rounds); the
accounts store keeps the ratings and each ladder's log of rated rounds
(server/accounts/store.py), and ``keeping`` applies a round's result once.
"""
