"""Several nodes on one Redis: leases, the relay of clients, tunnels."""
