"""The service: sessions, and which room a request goes to.

Its pieces, each a module, lowest first (each imports only those before it;
tests/test_layering.py holds them to it):

- ``tasks.py`` — work started and never awaited, whose failure is logged once.
- ``hooks.py`` — what the service asks of the cluster (server/cluster/), if any.
- ``presence.py`` — a member is online exactly when a session of theirs is
  connected to this node.
- ``sessions.py`` — who is who: sessions by player, and the one way a
  connection comes to speak for one (:meth:`Sessions.attach`).
- ``seeding.py`` — where seeds come from: drawn, or proven winnable.
- ``adoption.py`` — one runner per room: a room rebuilt from its log once,
  however many ask.
- ``dispatch.py`` — which handler a request goes to; ``hello`` and ``ping``.
- ``service.py`` — :class:`Service`, the pieces wired together: what the
  connections, the room runners and the handlers are handed.

The per-address allowances are server/net/allowances.py's, below the room
handlers that spend them.

This file imports none of them: the handlers below the service import its lower
pieces (sessions, presence, adoption), and Python runs a package's ``__init__``
before any of its modules, so a re-export of :class:`Service` here would import
the handlers back from under them (an import circle).
"""
