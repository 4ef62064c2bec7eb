"""The race server, laid out in layers; each imports only those above it here.

- ``core/`` — the rules of a room, pure (no asyncio, clock, randomness or I/O):
  its records, value types, lifecycle table, the fold (``room.py``), the
  deciders (``decide.py``), what each member may see (``views.py``) and its
  durable state (``durable.py``).
- ``peer.py`` — a client connection as the rest of the server sees it, and the
  server's side of a session.
- ``store/`` — where logs and sessions are kept: the interface (``base.py``),
  in memory, embedded SQLite on local disk (``sqlite.py``, the default), and Redis
  (``redis.py``; ``redis_conn.py``, the one way to Redis, which the account store,
  ``accounts/redis.py``, speaks through too).
- ``net/`` — where bytes meet the socket: the WebSocket connection, HTTP, rate
  limits, metrics, the clock.
- ``rooms/`` — the asyncio runner of one room (its pipeline to the store, its
  timer) and the room requests' handlers.
- ``daily/`` — the daily deal: published days (their own stores), the task that
  keeps the next week published, the ``daily`` request.
- ``matchmaking/`` — quick match: the matchmaker (``match.py``, pure) and the
  ladders' queues, which make and start the rooms they form.
- ``service/`` — sessions, and which room a request goes to: its pieces
  (sessions, room adoption, dispatch, seeds) each a module.
- ``cluster/`` — several nodes on one Redis: leases, the relay, tunnels.
- ``app.py``, ``cli.py`` — wiring and the command line.
"""
