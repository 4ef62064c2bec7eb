"""Where bytes meet the socket: connections, HTTP, rate limits, metrics, the clock."""
