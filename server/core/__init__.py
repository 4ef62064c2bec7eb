"""The room core: a room's rules as a pure fold of its records (see server/__init__.py)."""
