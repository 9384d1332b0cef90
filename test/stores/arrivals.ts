/**
 * Requests that arrive as a server's do, for the tests of looks shared
 * within a turn (src/stores/turn.ts): a byte written on a loopback
 * connection is read by the other end in the event loop's next poll for
 * I/O, and only then is the request served.
 *
 * `lookCommitArrive` stages the race a turn must not lose: a look taken in
 * a timer or an immediate, then (in the next callback of that phase, with
 * no poll between) another process commits and a client, told of the
 * commit, sends its request; the request is served in the poll that
 * follows. A look shared up to the next check phase was handed to that
 * request although it was taken before the request arrived. What the
 * request saw is then held against `unshared`, a look taken with sharing
 * off (as a library caller takes it), which sees the commit.
 */
import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import type { Test } from 'tap'
import { shareChecksWithinTurns } from '../../src/index.js'

export interface Arrivals {
  /** Sends a request now; `serve` runs once a poll has read it. */
  send: (serve: () => void) => void
}

export async function arrivals (t: Test): Promise<Arrivals> {
  const waiting: Array<() => void> = []
  const server = net.createServer(socket => {
    socket.on('data', (chunk: Buffer) => { for (let i = 0; i < chunk.length; i++) waiting.shift()?.() })
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const client = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
  await Promise.all([once(client, 'connect'), once(server, 'connection')])
  t.teardown(() => {
    client.destroy()
    server.close()
  })
  return {
    send: serve => {
      waiting.push(serve)
      client.write('.')
    }
  }
}

export type Phase = 'timer' | 'immediate'
export const phases: Phase[] = ['timer', 'immediate']

/**
 * In two callbacks of one `phase`: `look`, then `commit` (synchronous: the
 * other process has finished when it returns) and a request sent; resolves
 * with what `serve` answers when the request has arrived.
 */
export async function lookCommitArrive<T> (requests: Arrivals, phase: Phase, look: () => void, commit: () => void, serve: () => T | Promise<T>): Promise<T> {
  const schedule = phase === 'timer' ? (fn: () => void) => setTimeout(fn, 0) : (fn: () => void) => setImmediate(fn)
  return await new Promise<T>((resolve, reject) => {
    schedule(look)
    schedule(() => {
      try {
        commit()
      } catch (err) {
        reject(err)
        return
      }
      requests.send(() => { (async () => await serve())().then(resolve, reject) })
    })
  })
}

/** `look` with sharing off (every look fresh), then sharing on again, as the turn tests have it. */
export async function unshared<T> (look: () => T | Promise<T>): Promise<T> {
  shareChecksWithinTurns(() => false)
  try {
    return await look()
  } finally {
    shareChecksWithinTurns(() => true)
  }
}
