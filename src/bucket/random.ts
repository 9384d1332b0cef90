/**
 * Random identifiers (object versions, upload ids) drawn from a pool of
 * random bytes refilled 4 KiB at a time. Asking the system for 16 bytes
 * costs several microseconds on a virtual machine, as much as the rest of
 * a small put's bookkeeping; one refill serves 256 versions. The bytes come
 * from the same generator (`randomFillSync`) and are never handed out twice.
 */
import { randomFillSync } from 'node:crypto'

const pool = Buffer.allocUnsafe(4096)
let used = pool.length

function take (bytes: number): number {
  if (used + bytes > pool.length) {
    randomFillSync(pool)
    used = 0
  }
  const at = used
  used += bytes
  return at
}

/** `bytes` random bytes as lowercase hex. */
export function randomHex (bytes: number): string {
  const at = take(bytes)
  return pool.toString('hex', at, at + bytes)
}

/** `bytes` random bytes as base64url. */
export function randomBase64url (bytes: number): string {
  const at = take(bytes)
  return pool.toString('base64url', at, at + bytes)
}
