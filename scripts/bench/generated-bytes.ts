/**
 * Bytes for the benchmarks, made on the fly: a stream of any length that
 * never exists whole in memory, and a sink that discards what it is given.
 *
 * Each chunk is a fresh buffer (as a socket would hand over), copied from a
 * small pool of random bytes at a moving offset, so no two chunks in a row
 * are alike and nothing compressible or cacheable flatters a result.
 */
import { randomFillSync } from 'node:crypto'
import { Readable, Writable } from 'node:stream'

export const KiB = 1024
export const MiB = 1024 * KiB
export const GiB = 1024 * MiB

const POOL_BYTES = 4 * MiB
const pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES * 2))

/** `total` random-looking bytes in chunks of `chunkBytes`, generated as they are read. */
export function generatedBytes (total: number, chunkBytes = MiB): Readable {
  let sent = 0
  let offset = 0
  return new Readable({
    read () {
      for (;;) {
        if (sent >= total) {
          this.push(null)
          return
        }
        const n = Math.min(chunkBytes, total - sent, POOL_BYTES)
        const chunk = Buffer.allocUnsafe(n)
        pool.copy(chunk, 0, offset, offset + n)
        offset = (offset + 4099) % POOL_BYTES
        sent += n
        if (!this.push(chunk)) return
      }
    }
  })
}

/** A writable that counts and drops its input, like /dev/null without the syscalls. */
export function discardingSink (): Writable & { bytes: number } {
  const sink = new Writable({
    write (chunk: Buffer, _encoding, callback) {
      sink.bytes += chunk.byteLength
      callback()
    }
  }) as Writable & { bytes: number }
  sink.bytes = 0
  return sink
}
