"""Where rooms live between moves: the store interface and its implementations."""
