"""Quick match ("Race now"): players waiting on a ladder's queue are formed
into rooms of close rating.

``match`` is pure (queue entries with their rating and time waited -> groups);
``book`` keeps the queues (in memory alone; the cluster's in Redis, shared by
every node); ``queues`` runs the passes and makes, seats and starts the rooms.
"""
