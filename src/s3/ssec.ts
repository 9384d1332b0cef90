/**
 * SSE-C at the S3 port: the key headers of a request, as the binding's
 * `ssecKey`, with S3's errors for malformed ones (InvalidEncryptionAlgorithmError
 * for an algorithm other than AES256, InvalidArgument for a missing, invalid or
 * mismatched key or MD5). Missing and wrong keys for a stored object are the
 * binding's (InvalidRequest 400, AccessDenied 403: errors.ts). Keys are
 * accepted over plain HTTP: this port is a local server, and S3's rule that
 * SSE-C needs TLS would refuse every development setup.
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { COPY_SOURCE_SSEC_PREFIX, SSEC_PREFIX, ssecAnswerHeaders, ssecKeyFromHeaders } from '../doors/ssec-headers.js'
import { S3Error } from './errors.js'

export { ssecAnswerHeaders }

/** The answer's SSE-C headers for a request that gave `option`'s key (uploads and parts, which report none of their own). */
export function ssecEchoHeaders (option: { ssecKey?: Uint8Array }): Record<string, string> {
  return ssecAnswerHeaders(option.ssecKey === undefined ? undefined : createHash('md5').update(option.ssecKey).digest('hex'))
}

function keyFrom (headers: IncomingHttpHeaders, prefix: string): Uint8Array | undefined {
  const found = ssecKeyFromHeaders(headers, prefix)
  if (found === undefined || 'key' in found) return found?.key
  throw new S3Error(found.problem === 'algorithm' ? 'InvalidEncryptionAlgorithmError' : 'InvalidArgument', found.message)
}

/** The `ssecKey` option the request's x-amz-server-side-encryption-customer-* headers give, if any. */
export function ssecOption (headers: IncomingHttpHeaders): { ssecKey?: Uint8Array } {
  const key = keyFrom(headers, SSEC_PREFIX)
  return key === undefined ? {} : { ssecKey: key }
}

/** The copy source's key (x-amz-copy-source-server-side-encryption-customer-*), if any. */
export function copySourceSsecKey (headers: IncomingHttpHeaders): Uint8Array | undefined {
  return keyFrom(headers, COPY_SOURCE_SSEC_PREFIX)
}
