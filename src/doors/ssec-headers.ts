/**
 * S3's headers of a customer-provided key (SSE-C), read once for the doors
 * that take them (the S3 port, the HTTP routes):
 * `<prefix>algorithm` (AES256), `<prefix>key` (the 32-byte key, base64) and
 * `<prefix>key-MD5` (its MD5, base64), with `prefix`
 * `x-amz-server-side-encryption-customer-` or, for a copy's source,
 * `x-amz-copy-source-server-side-encryption-customer-`. The three come
 * together or not at all, as S3 requires. A pure function: each door turns
 * a problem into its own error.
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

export const SSEC_PREFIX = 'x-amz-server-side-encryption-customer-'
export const COPY_SOURCE_SSEC_PREFIX = 'x-amz-copy-source-server-side-encryption-customer-'

/** What is wrong with the headers; S3 answers `algorithm` with InvalidEncryptionAlgorithmError, the rest with InvalidArgument. */
export interface SsecHeaderProblem {
  problem: 'algorithm' | 'missing-key' | 'missing-md5' | 'invalid-key' | 'md5-mismatch'
  message: string
}

export type SsecHeaders = { key: Uint8Array } | SsecHeaderProblem | undefined

function one (headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value.join(',') : value
}

/** The three header names of each prefix, made once: every read looks for them, and a name built per call costs a lookup by a new string. */
const namesOf = new Map<string, { algorithm: string, key: string, md5: string }>()

function headerNames (prefix: string): { algorithm: string, key: string, md5: string } {
  let names = namesOf.get(prefix)
  if (names === undefined) namesOf.set(prefix, names = { algorithm: `${prefix}algorithm`, key: `${prefix}key`, md5: `${prefix}key-md5` })
  return names
}

/** The key the headers carry (undefined: none of them), or what is wrong with them. */
export function ssecKeyFromHeaders (headers: IncomingHttpHeaders, prefix = SSEC_PREFIX): SsecHeaders {
  const names = headerNames(prefix)
  const algorithm = one(headers, names.algorithm)?.trim()
  const key = one(headers, names.key)?.trim()
  const md5 = one(headers, names.md5)?.trim()
  if (algorithm === undefined && key === undefined && md5 === undefined) return undefined
  if (algorithm !== 'AES256') {
    return { problem: 'algorithm', message: 'Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm (AES256).' }
  }
  if (key === undefined || key === '') return { problem: 'missing-key', message: 'Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.' }
  if (md5 === undefined || md5 === '') return { problem: 'missing-md5', message: 'Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.' }
  const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(key) ? Buffer.from(key, 'base64') : Buffer.alloc(0)
  if (bytes.length !== 32) return { problem: 'invalid-key', message: 'The secret key was invalid for the specified algorithm.' }
  if (createHash('md5').update(bytes).digest('base64') !== md5) {
    return { problem: 'md5-mismatch', message: 'The calculated MD5 hash of the key did not match the hash that was provided.' }
  }
  return { key: new Uint8Array(bytes) }
}

/** The answer's SSE-C headers for an object encrypted under a key whose MD5 is `keyMd5` (hex, as the binding reports it). */
export function ssecAnswerHeaders (keyMd5: string | undefined): Record<string, string> {
  if (keyMd5 === undefined) return {}
  return { [`${SSEC_PREFIX}algorithm`]: 'AES256', [`${SSEC_PREFIX}key-md5`]: Buffer.from(keyMd5, 'hex').toString('base64') }
}
