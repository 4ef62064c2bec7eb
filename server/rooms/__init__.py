"""The asyncio side of a room: its runner, its timer, its request handlers."""
