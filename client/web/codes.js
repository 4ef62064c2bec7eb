// WebSocket close codes (docs/protocol.md "Close codes"): the browser's copy of
// protocol/messages.py CloseCode, held equal to it by tests/test_protocol_docs.py.
export const CLOSE = Object.freeze({
  NORMAL: 1000,
  GOING_AWAY: 1001,
  PROTOCOL_ERROR: 1002,
  INVALID_DATA: 1007,
  TOO_BIG: 1009,
  SERVER_ERROR: 1011,
  RESUMED_ELSEWHERE: 4001,
  HELLO_FIRST: 4002,
  FLOODING: 4008,
  TOO_SLOW: 4009,
  SIGNED_OUT: 4011,
});
