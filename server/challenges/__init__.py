"""Challenges: a player's past deal (a room's, or a daily run's) sent as a link,
played once by whoever opens it with the challenger's run as a ghost.

- model.py: a challenge and a take, what a link holds (a random code, kept
  only hashed), the challenger's run read off a past deal (pure);
- store.py: the interface every challenge store implements; memory.py;
- handlers.py: ``challenge`` and ``challenges``.
"""
