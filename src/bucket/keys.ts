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
 *
 * One divergence: a key that names an object to be written (put, a copy's
 * destination, a multipart upload) may not hold U+0000. The hosted service
 * documents only "valid UTF-8, at most 1,024 bytes", but a NUL cannot be
 * kept by every store (PostgreSQL's text refuses it), written in an S3
 * listing (XML 1.0 has no NUL, even escaped) or named in the readable view,
 * so every store refuses it alike with 10020. Lookups (head, get, delete,
 * a copy's source, an upload's later calls) take such keys, so an object
 * stored under one before the rule (the SQLite store held them) can still be
 * read and removed; a store that cannot hold them simply has none.
 * Strings that are not well-formed UTF-16 (a lone surrogate) have no UTF-8
 * spelling and are refused everywhere.
 *
 * A key given to the binding as another value than a string is converted
 * first, as workerd converts it: every key parameter of its R2Bucket
 * (head, get, put, delete, createMultipartUpload, resumeMultipartUpload,
 * and resumeMultipartUpload's upload id) is a `kj::String`, which JSG fills
 * with JavaScript's ToString (`123` is "123", `null` is "null"), not a
 * `jsg::NonCoercible<kj::String>`, which would refuse it. The rules above
 * then judge the string. The checks doors call (`keyId`, `lookupId`) still
 * take only strings: a door's keys come from a request, always text.
 */
import { ArgumentTypeError as TypeError } from './errors.js' // argument errors, marked for doors (errors.ts)
import { BucketError } from './errors.js'
import { MAX_KEY_BYTES } from './limits.js'

/** Whether `text` holds a C0 control or DEL: rule ids and prefixes, printed by wrangler and carried by S3's XML, hold none. */
export function hasControlCharacter (text: string): boolean {
  return /[\u0000-\u001f\u007f]/.test(text)
}

/** S3's longest rule ID. */
export const MAX_RULE_ID_LENGTH = 255

/** A rule id (lifecycle, CORS, lock) as S3 has them, so every rule reads back through either door: XML carries no control character, and UTF-8 no lone surrogate. */
export function isRuleId (id: string): boolean {
  return id.length <= MAX_RULE_ID_LENGTH && id.isWellFormed() && !hasControlCharacter(id)
}

/** What `isRuleId` asks, as refusals say it. */
export const RULE_ID_REQUIREMENT = `at most ${MAX_RULE_ID_LENGTH} characters of well-formed Unicode, none of them a control character`

/**
 * A rule's key prefix (lifecycle, lock, event notification): text a key can
 * start with, which S3's XML and wrangler carry as it is: well-formed
 * Unicode (a lone surrogate has no UTF-8, and would come back from an S3
 * round trip as U+FFFD, matching other keys), no control character, and
 * no longer than a key.
 */
export function isRulePrefix (value: unknown): value is string {
  return typeof value === 'string' && value.isWellFormed() && !hasControlCharacter(value) && Buffer.byteLength(value) <= MAX_KEY_BYTES
}

/** What `isRulePrefix` asks, as refusals say it. */
export const RULE_PREFIX_REQUIREMENT = `a string of well-formed Unicode without control characters, of at most ${MAX_KEY_BYTES} bytes`

/** The form keys and prefixes are kept and compared in: NFC (ASCII is its own; a lone surrogate stays as it is). */
export function keptForm (text: string): string {
  return /^[\u0000-\u007f]*$/.test(text) ? text : text.normalize('NFC')
}

/** A list's prefix, delimiter, start or marker, in the form keys are compared in; one that is not well-formed Unicode matches nothing and is refused. */
export function listText (method: string, name: string, value: unknown): string {
  const text = String(value)
  if (!text.isWellFormed()) throw new TypeError(`${method}: ${name} must be well-formed Unicode (it holds a lone surrogate).`)
  return keptForm(text)
}

/**
 * A string parameter of the binding as workerd's JSG takes one: a string as
 * it is, any other value through ToString (a Symbol, which has none, is a
 * TypeError, as in V8; what an object's toString throws is thrown).
 */
export function stringArgument (method: string, value: unknown): string {
  if (typeof value === 'string') return value
  if (typeof value === 'symbol') throw new TypeError(`${method}: Cannot convert a Symbol value to a string.`)
  return String(value)
}

/** `delete`'s keys as workerd takes its `kj::OneOf<kj::String, kj::Array<kj::String>>`: an array's elements, or the one value, each converted. */
export function keyArguments (method: string, keys: unknown): string[] {
  return Array.isArray(keys) ? keys.map((key: unknown) => stringArgument(method, key)) : [stringArgument(method, keys)]
}

/** Validates a key that names an object `method` writes (no U+0000); returns its id (NFC form). */
export function keyId (method: string, key: unknown): string {
  const id = lookupId(method, key)
  if (id.includes('\u0000')) throw new BucketError('InvalidObjectName', method)
  return id
}

/** Validates a key `method` looks up (U+0000 allowed: see above); returns its id (NFC form). */
export function lookupId (method: string, key: unknown): string {
  if (typeof key !== 'string') {
    throw new TypeError(`${method}: the key must be a string, got ${typeof key}.`)
  }
  // ASCII is its own NFC form, one byte per character.
  if (key.length > 0 && key.length <= MAX_KEY_BYTES && /^[\u0000-\u007f]*$/.test(key)) return key
  if (key.length === 0 || Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES || !key.isWellFormed()) {
    throw new BucketError('InvalidObjectName', method)
  }
  const id = keptForm(key)
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

/** A method's options argument: none (undefined or null) is `{}`; anything but an object is a TypeError. */
export function optionsObject<T> (method: string, options: unknown): Partial<T> {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw new TypeError(`${method}: options must be an object.`)
  return options as Partial<T>
}
