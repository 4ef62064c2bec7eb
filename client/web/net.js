// The wire: one WebSocket speaking the `klondike-race.v2.json` subprotocol
// (docs/protocol.md). Requests carry an `id` and resolve with the reply that
// echoes it; room events carry a `seq` and go to `onEvent`, in order. A gap in
// the seqs makes the connection ask for a `snapshot` and hand it to `onSnapshot`
// instead of the events it missed.

export const SUBPROTOCOL = "klondike-race.v2.json";
export const VERSION = 2;

/** An error reply from the server: `code`, `message`, and `field` for settings. */
export class ServerError extends Error {
  constructor(frame) {
    super(frame.message || frame.code || "error");
    this.name = "ServerError";
    this.code = frame.code || "error";
    this.field = frame.field ?? null;
    this.frame = frame;
  }
}

export function wsUrl(loc = window.location) {
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${loc.host}/ws`;
}

export class Connection {
  /**
   * @param {object} handlers
   *   onEvent(frame)       a room event in seq order
   *   onSnapshot(room)     a room snapshot that replaces everything known
   *   onNotice(frame)      a frame for this session, not a room's (`friend_invite`)
   *   onClose(code, reason)
   *   onOpen()
   */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.ws = null;
    this.nextId = 1;
    this.pending = new Map();
    this.seq = null; // the last room seq applied; null outside a room
    this.resyncing = null; // the snapshot on its way, if any
    this.clockOffset = 0; // server ms - local ms
  }

  open() {
    return new Promise((resolve, reject) => {
      let ws;
      try {
        ws = new WebSocket(this.url, [SUBPROTOCOL]);
      } catch (err) {
        reject(err);
        return;
      }
      this.ws = ws;
      let opened = false;
      ws.addEventListener("open", () => {
        opened = true;
        this.handlers.onOpen?.();
        resolve();
      });
      ws.addEventListener("message", (ev) => this._receive(ev.data));
      ws.addEventListener("error", () => {
        if (!opened) reject(new Error("cannot reach the server"));
      });
      ws.addEventListener("close", (ev) => {
        if (this.ws !== ws) return;
        this.ws = null;
        for (const { reject: rej } of this.pending.values()) {
          rej(new ServerError({ code: "disconnected", message: "connection lost" }));
        }
        this.pending.clear();
        if (!opened) reject(new Error("cannot reach the server"));
        this.handlers.onClose?.(ev.code, ev.reason);
      });
    });
  }

  get isOpen() {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  close(code = 1000) {
    const ws = this.ws;
    this.ws = null;
    if (ws) {
      for (const { reject } of this.pending.values()) {
        reject(new ServerError({ code: "disconnected", message: "connection closed" }));
      }
      this.pending.clear();
      try {
        ws.close(code);
      } catch {
        /* already closing */
      }
    }
  }

  /** Send a request; resolves with the reply frame, rejects with a ServerError. */
  request(type, fields = {}) {
    if (!this.isOpen) {
      return Promise.reject(new ServerError({ code: "disconnected", message: "not connected" }));
    }
    const id = this.nextId++;
    const frame = { type, id, ...fields };
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, type });
      this.ws.send(JSON.stringify(frame));
    });
  }

  /** The server's clock now, in ms since the epoch (estimated from `ping`). */
  serverNow() {
    return Date.now() + this.clockOffset;
  }

  async syncClock() {
    const t0 = Date.now();
    const pong = await this.request("ping");
    const t1 = Date.now();
    if (typeof pong.now === "number") this.clockOffset = pong.now - (t0 + t1) / 2;
  }

  /** A snapshot or joined reply sets the seq base for the events that follow. */
  adoptRoom(room) {
    this.seq = room ? room.seq : null;
  }

  /** Take a snapshot of the room in place of what is known; resolves once it is
   *  taken (or failed). While one is on its way, another call waits for it. */
  resync() {
    if (!this.resyncing) this.resyncing = this._snapshot();
    return this.resyncing;
  }

  async _snapshot() {
    try {
      const reply = await this.request("snapshot");
      this.seq = reply.room.seq;
      this.handlers.onSnapshot?.(reply.room);
    } catch (err) {
      if (err.code !== "disconnected" && err.code !== "not_in_room") {
        console.warn("snapshot failed", err.code, err.message);
      }
    } finally {
      this.resyncing = null;
    }
  }

  _receive(data) {
    if (typeof data !== "string") return; // the JSON subprotocol sends text frames only
    let frame;
    try {
      frame = JSON.parse(data);
    } catch {
      return;
    }
    if (!frame || typeof frame !== "object") return;
    const id = frame.id;
    if (id !== undefined && id !== null && this.pending.has(id)) {
      const { resolve, reject } = this.pending.get(id);
      this.pending.delete(id);
      if (frame.type === "error") reject(new ServerError(frame));
      else resolve(frame);
      return;
    }
    if (frame.type === "error") {
      this.handlers.onError?.(new ServerError(frame));
      return;
    }
    if (frame.type === "events" && Array.isArray(frame.events)) {
      // Room events that waited to leave together: each applied in turn, exactly
      // as if it had come alone (docs/protocol.md, "Batched events").
      for (const event of frame.events) {
        if (event && typeof event === "object" && typeof event.seq === "number") this._event(event);
      }
    } else if (typeof frame.seq === "number") {
      this._event(frame);
    } else {
      this.handlers.onNotice?.(frame); // not a room's: a friend's invitation
    }
  }

  _event(frame) {
    if (this.seq === null) return; // not in a room (yet): the join reply carries the state
    if (this.resyncing) return; // the snapshot on its way covers it
    // An event aside from the room's history (a Timed tick, a reaction, a ghost,
    // ...) keeps the seq of the last event (docs/protocol.md "Events that keep the seq").
    if (frame.aside === true && frame.seq === this.seq) {
      this.handlers.onEvent?.(frame);
      return;
    }
    if (frame.seq <= this.seq) return; // already seen (or covered by a snapshot)
    if (frame.seq !== this.seq + 1) {
      this.resync();
      return;
    }
    this.seq = frame.seq;
    this.handlers.onEvent?.(frame);
  }
}
