// The Colyseus baseline of bench/capacity.py: one room type, "relay", in which every
// message a client sends is broadcast to every client of the room, itself included
// (its own copy is its acknowledgement), as bench/relay.py does on websockets.
//
// The cheapest relaying Colyseus offers, so that the comparison flatters the baseline,
// not the race server: no state (Colyseus' "none" serializer: no patches, no state
// sync), no game logic, and the bytes path (client `sendBytes`, ROOM_DATA_BYTES): the
// payload is forwarded as received, never decoded or re-encoded. Otherwise Colyseus as
// it ships (its matchmaker over HTTP, @colyseus/ws-transport on `ws`), except that
// the transport pings every 20 s, as the race server and bench/relay.py do (Colyseus'
// default, 3 s, would cost it a ping and a pong per connection every 3 s).
//
// Usage: node server.js [--host 127.0.0.1] [--port 0]   (0: a free port)
// It prints "colyseus listening on ws://HOST:PORT/" once it accepts; SIGTERM stops it.

"use strict";

const { Room, Server } = require("@colyseus/core");
const { WebSocketTransport } = require("@colyseus/ws-transport");

const PING_MS = 20000;

class RelayRoom extends Room {
  onCreate() {
    this.onMessageBytes("move", (client, bytes) => this.broadcastBytes("move", bytes));
  }
}

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

async function main() {
  const host = option("host", "127.0.0.1");
  const port = Number(option("port", "0"));
  const transport = new WebSocketTransport({ pingInterval: PING_MS });
  const server = new Server({ transport, greet: false });
  server.define("relay", RelayRoom);
  await server.listen(port, host);
  const real = transport.server.address().port;
  console.error(`colyseus listening on ws://${host}:${real}/`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
