"""Quick match ("Race now"): players waiting on a ladder's queue are formed
into rooms of close rating.

``match`` is pure (queue entries with their rating and time waited -> groups);
the queue's keeping and the rooms it starts belong to the service's shell.
"""
