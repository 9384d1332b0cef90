/**
 * The raw connections of a TLS server still in their handshake. Node hands
 * listeners the TLS socket, which neither writes in the clear nor lets its
 * raw connection go before the handshake ends; the raw one is known only
 * from 'connection'. They are kept by peer address, one tracker a server
 * whoever asks (the server's close ends them, a plain-HTTP client is
 * answered on them), and each leaves once its handshake succeeds or its
 * connection closes.
 */
import type { EventEmitter } from 'node:events'
import type { Socket } from 'node:net'

export interface Handshakes {
  /** The raw connection under `socket` (a TLS socket of this server), while its handshake lasts. */
  rawOf: (socket: Socket) => Socket | undefined
  /** Every raw connection still in its handshake. */
  all: () => Iterable<Socket>
}

const trackers = new WeakMap<EventEmitter, Handshakes>()

const peer = (socket: Socket): string => `${socket.remoteAddress ?? ''}:${socket.remotePort ?? ''}`

/** The handshakes of `server` (a TLS server yet to listen), tracked from the first call on. */
export function handshakesOf (server: EventEmitter): Handshakes {
  const known = trackers.get(server)
  if (known !== undefined) return known
  const handshaking = new Map<string, Socket>()
  server.on('connection', (raw: Socket) => {
    const key = peer(raw)
    handshaking.set(key, raw)
    raw.once('close', () => { if (handshaking.get(key) === raw) handshaking.delete(key) })
  })
  server.on('secureConnection', (socket: Socket) => { handshaking.delete(peer(socket)) })
  const tracker: Handshakes = { rawOf: socket => handshaking.get(peer(socket)), all: () => handshaking.values() }
  trackers.set(server, tracker)
  return tracker
}
