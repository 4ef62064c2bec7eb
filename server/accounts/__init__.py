"""Players who are remembered: accounts, their credentials, history and friends.

A player may stay a guest (a session token in one browser, server/service/
sessions.py) or take a **handle** and so hold an account. An account keeps the
public player id of the session that took it, so a room, a sheet and a history
entry name the same player before and after; every signed-in device holds a
device token of its own, which is a session token of that player as well (the
cluster resumes it on another node as it resumes any session), and which the
account page lists and can sign out.

Layers, as in the rest of the server: ``model`` (values, and the rules of
handles and secrets), ``store`` (where accounts live: the interface; one
implementation per store), the service that decides (``service``) and the
request handlers around it.
"""
