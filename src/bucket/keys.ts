/**
 * Object keys. A key is any string of 1 to 1,024 bytes of UTF-8. Keys that
 * differ only in Unicode normalization name the same object: the engine
 * stores objects under the NFC form (the key's *id*) and remembers the
 * spelling of the last write for display.
 *
 * Ordering is by the UTF-8 bytes of the id, as the hosted service lists;
 * JavaScript's string order (UTF-16 code units) differs for characters
 * outside the Basic Multilingual Plane, so every comparison goes through
 * `compareIds`.
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'

/** Largest key, in bytes of UTF-8 (the hosted service's limit). */
export const MAX_KEY_BYTES = 1024

/** Validates a key given to `method`; returns its id (NFC form). */
export function keyId (method: string, key: unknown): string {
  if (typeof key !== 'string') {
    throw new TypeError(`${method}: the key must be a string, got ${typeof key}.`)
  }
  // ASCII is its own NFC form, one byte per character.
  if (key.length > 0 && key.length <= MAX_KEY_BYTES && /^[\u0000-\u007f]*$/.test(key)) return key
  if (key.length === 0 || Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES || !key.isWellFormed()) {
    throw new BucketError('InvalidObjectName', method)
  }
  const id = key.normalize('NFC')
  if (Buffer.byteLength(id, 'utf8') > MAX_KEY_BYTES) throw new BucketError('InvalidObjectName', method)
  return id
}

/** Orders two ids by their UTF-8 bytes. */
export function compareIds (a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

/**
 * The smallest byte string greater than every id that starts with `prefix`:
 * UTF-8 never contains the byte 0xFF, so `prefix + 0xFF` is above them all.
 */
export function pastPrefix (prefix: string): Buffer {
  return Buffer.concat([Buffer.from(prefix, 'utf8'), Buffer.from([0xff])])
}
