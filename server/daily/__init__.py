"""The daily deal: one deal a UTC day per daily ladder, committed to a week ahead.

A package of its own, beside ``rooms`` and ``accounts``, because a daily deal
belongs to neither: it is dealt before any room exists and outlives every room
that plays it, and it is no one's account data. What it holds is a public
promise — the commitment to a seed published days before the seed is used —
so it has a store of its own (memory, SQLite, Redis) whose one write is
create-if-absent: once a day is published nothing changes it, not a restart,
not a second node racing the first.

- ``schedule.py``: the daily ladders, :class:`~server.daily.schedule.DailyDeal`,
  the UTC calendar and the views (pure);
- ``store.py``: the :class:`~server.daily.store.DailyStore` interface and the
  in-memory store; ``sqlite.py`` and ``redis.py`` the durable ones;
- ``publisher.py``: the task that keeps the next days published, on the
  server's clock, with seeds proven in the solver's workers;
- ``handlers.py``: the ``daily`` request;
- ``runs.py``, ``results.py`` and its stores, ``run_handlers.py``: one run a
  player, its result and timed moves kept, the leaderboard, the comparison;
- ``ghosts.py`` (pure) and ``ghost_race.py``: earlier runs raced as ghosts
  at their recorded pace, one timer a run.
"""
