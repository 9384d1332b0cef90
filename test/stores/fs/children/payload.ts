/**
 * Bodies the child processes write, each one recognisable afterwards: a
 * header names its writer and size, and the bytes after it follow from the
 * header alone, so a test can tell a whole body from a torn or mixed one.
 */
import { createHash } from 'node:crypto'

/** A body of `size` bytes (at least the header's length) identified by `label`, which holds no `#`. */
export function payload (label: string, size: number): Buffer {
  const header = Buffer.from(`${label}#${size}#`)
  const bytes = Buffer.alloc(Math.max(size, header.byteLength))
  header.copy(bytes)
  let x = 0
  for (const byte of createHash('md5').update(label).digest()) x = (x * 31 + byte) >>> 0
  for (let i = header.byteLength; i < bytes.byteLength; i++) {
    x = (x * 1103515245 + 12345) >>> 0
    bytes[i] = x >>> 24
  }
  return bytes
}

/** The label of a body written by `payload`, or undefined when the bytes are not such a whole body. */
export function labelOf (bytes: Uint8Array): string | undefined {
  const text = Buffer.from(bytes.subarray(0, 200)).toString('latin1')
  const match = /^([^#]*)#(\d+)#/.exec(text)
  if (match === null) return undefined
  const [, label, size] = match
  if (label === undefined || Number(size) !== bytes.byteLength) return undefined
  return payload(label, bytes.byteLength).equals(bytes) ? label : undefined
}

export function md5Hex (bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex')
}

/** The etag of a multipart object: MD5 of the binary part MD5s, then `-N`. */
export function multipartEtag (parts: Uint8Array[]): string {
  const digests = parts.map(part => createHash('md5').update(part).digest())
  return `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${parts.length}`
}

/** Cuts a body into parts of `partSize` bytes, the last one shorter. */
export function splitParts (bytes: Uint8Array, partSize: number): Uint8Array[] {
  const parts: Uint8Array[] = []
  for (let at = 0; at < bytes.byteLength; at += partSize) parts.push(bytes.subarray(at, at + partSize))
  return parts
}

/** A small seeded random number generator (mulberry32), so a failing run can be replayed. */
export function mulberry32 (state: number): () => number {
  return () => {
    state = (state + 0x6D2B79F5) | 0
    let x = Math.imul(state ^ (state >>> 15), 1 | state)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}
