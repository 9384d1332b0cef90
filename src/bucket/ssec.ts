/**
 * Server-side encryption with customer-provided keys (SSE-C): the one
 * module that encrypts and decrypts bodies, for every store (the engine
 * encrypts before a body reaches `stage` and decrypts what `open` streams,
 * so stores keep and share ciphertext like any other bytes).
 *
 * Construction: AES-256-CTR, one body key per stored body, derived with
 * HKDF-SHA256 from the customer's key and a random 16-byte salt of that
 * body (a put's body, or each uploaded part); the counter starts at zero
 * for each body. Why CTR and not chunked GCM: CTR keeps the ciphertext
 * exactly as long as the plaintext, so every store's size bookkeeping,
 * part layouts, byte sharing of copies and range reads stay what they are
 * for plain bodies (block `n` is deciphered alone by starting the counter
 * at `n`), and a multipart object is its parts' ciphertexts end to end,
 * each part under its own body key. Since every body has its own random
 * salt, hence its own key, a keystream is never used twice, not even by a
 * part uploaded again under the same number.
 *
 * What is stored beside the ciphertext (the record's `checksums.ssec`): the
 * key's MD5 (what the hosted service reports, `ssecKeyMd5`), the object's
 * salt and a check value, HMAC-SHA256 under an HKDF-derived check key of a
 * fixed label: it tells a wrong key before a byte is streamed (S3 and the
 * hosted service refuse it) and does not reveal the key; and for a
 * multipart object the salts of its parts, in order. The key itself is
 * never stored, logged or put in a message. The trade-off of CTR: it does
 * not authenticate the stored bytes; a body changed on disk behind the
 * store deciphers to garbage instead of failing, as a plain body changed
 * on disk would be served changed (reads never re-verify digests).
 *
 * The ETag of such an object is the MD5 of its ciphertext (per part, and
 * the usual MD5 of MD5s for a multipart object): as in S3, not the MD5 of
 * the data, which is neither kept nor reported.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { Transform, type Readable } from 'node:stream'
import { BucketError, SsecKeyError } from './errors.js'
import type { ObjectReader } from './port.js'
import type { SsecRecord, StoredObject } from './records.js'

export type { SsecRecord } from './records.js'

/** A customer key as an operation receives it, checked: its bytes and its MD5 (hex). */
export interface SsecKey {
  readonly bytes: Buffer
  readonly md5: string
}

const SALT_BYTES = 16
const BODY_LABEL = 'fsbucket sse-c body key'
const CHECK_LABEL = 'fsbucket sse-c check key'

/**
 * The `ssecKey` option of an operation: 32 bytes, as 64 lowercase hex digits
 * or an ArrayBuffer (or view); undefined when not given. The hosted binding
 * throws a plain Error for a malformed key; here it is an `SsecKeyError`
 * (an Error that doors answer 400).
 */
export function parseSsecKey (method: string, value: unknown): SsecKey | undefined {
  if (value === undefined || value === null) return undefined
  let bytes: Buffer
  if (typeof value === 'string') {
    if (!/^[0-9a-f]+$/.test(value)) throw new SsecKeyError(`${method}: SSE-C Key has invalid format`)
    if (value.length !== 64) throw new SsecKeyError(`${method}: SSE-C Key must be 32 bytes in length`)
    bytes = Buffer.from(value, 'hex')
  } else if (value instanceof ArrayBuffer) {
    bytes = Buffer.from(new Uint8Array(value))
  } else if (ArrayBuffer.isView(value)) {
    bytes = Buffer.from(new Uint8Array(value.buffer, value.byteOffset, value.byteLength))
  } else {
    throw new SsecKeyError(`${method}: SSE-C Key has invalid format`)
  }
  if (bytes.length !== 32) throw new SsecKeyError(`${method}: SSE-C Key must be 32 bytes in length`)
  return { bytes, md5: createHash('md5').update(bytes).digest('hex') }
}

function derived (key: SsecKey, salt: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key.bytes, salt, label, 32))
}

function checkValue (key: SsecKey, salt: Buffer): Buffer {
  return createHmac('sha256', derived(key, salt, CHECK_LABEL)).update('key check').digest()
}

/** A new salt, base64. */
export function newSalt (): string {
  return randomBytes(SALT_BYTES).toString('base64')
}

/** The record of a new object or upload encrypted under `key` (its salt doubles as a put's body salt). */
export function newSsecRecord (key: SsecKey): SsecRecord {
  const salt = randomBytes(SALT_BYTES)
  return { keyMd5: key.md5, salt: salt.toString('base64'), check: checkValue(key, salt).toString('base64') }
}

/**
 * Judges the key given for a stored object or upload (`stored`, undefined
 * for one stored plain): refuses a missing key, a wrong key, and a key for
 * something not encrypted, as S3 does (the catalogue's SsecKeyRequired,
 * SsecKeyMismatch, SsecNotApplicable).
 */
export function judgeSsecKey (method: string, stored: SsecRecord | undefined, key: SsecKey | undefined): void {
  if (stored === undefined) {
    if (key !== undefined) throw new BucketError('SsecNotApplicable', method)
    return
  }
  if (key === undefined) throw new BucketError('SsecKeyRequired', method)
  const expected = Buffer.from(stored.check, 'base64')
  const actual = checkValue(key, Buffer.from(stored.salt, 'base64'))
  if (key.md5 !== stored.keyMd5 || expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new BucketError('SsecKeyMismatch', method)
  }
}

function counterBlock (block: number): Buffer {
  const iv = Buffer.alloc(16)
  iv.writeUIntBE(block, 10, 6)
  return iv
}

/** AES-256-CTR positioned at byte `offset` of the body whose salt is `salt`. */
function cipherAt (key: SsecKey, salt: Buffer, offset: number): { update: (data: Uint8Array) => Buffer } {
  const cipher = createDecipheriv('aes-256-ctr', derived(key, salt, BODY_LABEL), counterBlock(Math.floor(offset / 16)))
  const skip = offset % 16
  if (skip > 0) cipher.update(Buffer.alloc(skip))
  return cipher
}

/** Encrypts a body's bytes as they flow (CTR: encryption and decryption are one operation). */
async function * encrypted (source: AsyncIterable<Uint8Array>, key: SsecKey, salt: string): AsyncGenerator<Uint8Array> {
  const cipher = createCipheriv('aes-256-ctr', derived(key, Buffer.from(salt, 'base64'), BODY_LABEL), counterBlock(0))
  for await (const chunk of source) {
    const out = cipher.update(chunk)
    if (out.length > 0) yield out
  }
}

/** The bodies an object's bytes are made of: one for a put, one per part for a multipart object. */
interface Piece { start: number, end: number, salt: Buffer }

function piecesOf (stored: SsecRecord, size: number, partSize: number | undefined): Piece[] {
  if (stored.partSalts === undefined || partSize === undefined) return [{ start: 0, end: size, salt: Buffer.from(stored.salt, 'base64') }]
  const salts = Buffer.from(stored.partSalts, 'base64')
  const pieces: Piece[] = []
  for (let i = 0; i * SALT_BYTES < salts.length; i++) {
    const start = i * partSize
    pieces.push({ start, end: i * SALT_BYTES + SALT_BYTES >= salts.length ? size : start + partSize, salt: salts.subarray(i * SALT_BYTES, (i + 1) * SALT_BYTES) })
  }
  return pieces
}

/** Deciphers bytes of an object from `offset` on, whatever bodies they cross. */
class Decipherer {
  readonly #pieces: Piece[]
  readonly #key: SsecKey
  #position: number
  #piece = -1
  #cipher: { update: (data: Uint8Array) => Buffer } | undefined

  constructor (pieces: Piece[], key: SsecKey, offset: number) {
    this.#pieces = pieces
    this.#key = key
    this.#position = offset
  }

  update (data: Uint8Array): Buffer {
    const out: Buffer[] = []
    let at = 0
    while (at < data.length) {
      const index = this.#pieces.findIndex(p => this.#position >= p.start && this.#position < p.end)
      if (index === -1) throw new Error('ssec: bytes past the end of the object')
      const piece = this.#pieces[index]
      if (index !== this.#piece || this.#cipher === undefined) {
        this.#cipher = cipherAt(this.#key, piece.salt, this.#position - piece.start)
        this.#piece = index
      }
      const take = Math.min(data.length - at, piece.end - this.#position)
      out.push(this.#cipher.update(data.subarray(at, at + take)))
      at += take
      this.#position += take
    }
    return out.length === 1 ? out[0] : Buffer.concat(out)
  }
}

function decipherer (record: StoredObject, key: SsecKey, offset: number): Decipherer {
  const stored = record.checksums.ssec as SsecRecord
  return new Decipherer(piecesOf(stored, record.size, record.checksums.multipart?.partSize), key, offset)
}

/** A stream of the object's plaintext from `ciphertext`, which streams its bytes from `offset`. */
function decryptedStream (record: StoredObject, key: SsecKey, offset: number, ciphertext: Readable): Readable {
  const plaintext = decipherer(record, key, offset)
  const plain = new Transform({
    transform (chunk: Buffer, _encoding, done) {
      try {
        done(null, plaintext.update(chunk))
      } catch (err) {
        done(err as Error)
      }
    }
  })
  ciphertext.on('error', err => plain.destroy(err))
  plain.on('close', () => { if (!ciphertext.destroyed) ciphertext.destroy() })
  return ciphertext.pipe(plain)
}

/**
 * `reader` of an SSE-C object, its key judged (`judgeSsecKey`): bytes and
 * streams come out deciphered. A reader of a plain object is returned as it
 * is once no key was given for it. Closes `reader` when it refuses.
 */
export async function readerWithKey (method: string, reader: ObjectReader, key: SsecKey | undefined): Promise<ObjectReader> {
  const record = reader.object
  try {
    judgeSsecKey(method, record.checksums.ssec, key)
  } catch (err) {
    await reader.close()
    throw err
  }
  if (key === undefined) return reader
  const held = reader.bytes
  return {
    object: record,
    ...(held === undefined ? {} : { bytes: decipherer(record, key, 0).update(held) }),
    stream: (offset, length) => decryptedStream(record, key, offset, reader.stream(offset, length)),
    close: async () => { await reader.close() }
  }
}

/** A body's bytes encrypted as they flow, and the MD5 of the ciphertext (the ETag of an SSE-C body) once they have. */
export class SealedBody implements AsyncIterable<Uint8Array> {
  readonly #source: AsyncIterable<Uint8Array>
  readonly #key: SsecKey
  readonly #salt: string
  readonly #md5 = createHash('md5')

  constructor (source: AsyncIterable<Uint8Array>, key: SsecKey, salt: string) {
    this.#source = source
    this.#key = key
    this.#salt = salt
  }

  async * [Symbol.asyncIterator] (): AsyncGenerator<Uint8Array> {
    for await (const chunk of encrypted(this.#source, this.#key, this.#salt)) {
      this.#md5.update(chunk)
      yield chunk
    }
  }

  /** Hex MD5 of the ciphertext; call once, after the last byte. */
  etag (): string {
    return this.#md5.digest('hex')
  }
}
