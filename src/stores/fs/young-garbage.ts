/**
 * A minor garbage collection for every few MiB of body received, so a
 * server's memory stays flat while it streams large uploads whatever the
 * size of its young generation.
 *
 * Each chunk a socket reads is a Buffer whose bytes live outside the
 * JavaScript heap and are freed only when a minor collection finds the
 * Buffer dead. V8 runs one when the young generation fills, and a chunk
 * and what handling it allocates weigh a few hundred bytes there against
 * 64 KiB outside: with young generations of 4 to 16 MiB, a server
 * receiving a 1 GiB upload held 40–50 MiB of received chunks waiting for
 * their collection (peak RSS 125–135 MiB, against 95 with a 1 MiB young
 * generation). A young generation that small, though, made every small
 * request pay for collections that promote what 50 connections keep alive
 * (a small GET took 165 µs of CPU with 1 MiB, 90 µs with 8 MiB).
 * Collecting after every `EVERY` bytes received keeps both: the chunks
 * are freed after a few MiB (the server's peak during a 1 GiB upload
 * stays about 10 MiB above its idle size), for one collection of a
 * fraction of a millisecond per `EVERY` bytes.
 *
 * The collector is V8's own, reached without exposing `gc` to anyone else:
 * the flag is set only while a fresh context is made, which is the one
 * that keeps the function.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

/** Bytes received between two collections. */
const EVERY = 4 * 1024 * 1024

type Collect = (options: { type: 'minor' }) => void

function collector (): Collect {
  setFlagsFromString('--expose-gc')
  try {
    return runInNewContext('gc') as Collect
  } finally {
    setFlagsFromString('--no-expose-gc')
  }
}

let collect: Collect | null = null
let received = 0

/** Counts `bytes` of a body received; runs a minor collection each time `EVERY` more have come. */
export function bodyBytesReceived (bytes: number): void {
  received += bytes
  if (received < EVERY) return
  received = 0
  collect ??= collector()
  collect({ type: 'minor' })
}
