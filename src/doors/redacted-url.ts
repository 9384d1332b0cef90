/**
 * URLs as logs show them, on every door: the values of the query
 * parameters that carry credentials hidden, their names kept. A module of
 * its own, free of Fastify, for the process's root logger
 * (server/logger.ts) as well as the request log (request-log.ts).
 */

/**
 * Query parameters whose values are credentials, by their decoded names in
 * lowercase: a presigned URL's signature, credential and session token
 * (SigV4); the SSE-C keys S3 accepts in the query as well as in headers (a
 * key's MD5 too: it names the key); and the names other clients put
 * bearer tokens and signatures under.
 */
const secretParameters = new Set([
  'x-amz-signature', 'x-amz-credential', 'x-amz-security-token',
  'x-amz-server-side-encryption-customer-key', 'x-amz-server-side-encryption-customer-key-md5',
  'x-amz-copy-source-server-side-encryption-customer-key', 'x-amz-copy-source-server-side-encryption-customer-key-md5',
  'token', 'access_token', 'sig', 'signature'
])

/** Whether a parameter's value is hidden: its decoded name is a secret's, or its name does not decode (it might spell one). */
function isSecret (name: string): boolean {
  try {
    return secretParameters.has(decodeURIComponent(name).toLowerCase())
  } catch {
    return true
  }
}

/**
 * A URL with the values of the parameters in `secretParameters` replaced by
 * `[redacted]` (their names kept), however their names are percent-encoded
 * (the query is read decoded, so `X-Amz-Signatur%65` is the signature too),
 * and of any parameter whose name does not decode (`X-Amz-Signature%`).
 */
export function redactedUrl (url: string): string {
  const question = url.indexOf('?')
  if (question === -1) return url
  const parameters = url.slice(question + 1).split('&').map(part => {
    const eq = part.indexOf('=')
    const name = eq === -1 ? part : part.slice(0, eq)
    return eq !== -1 && isSecret(name) ? `${name}=[redacted]` : part
  })
  return `${url.slice(0, question)}?${parameters.join('&')}`
}

/** A request as Fastify logs it where it does (a fault at its root, a failed write of its answer): method, host, and the URL without its credentials. */
export function requestForLog (req: { method: string, url: string, hostname?: string }): Record<string, unknown> {
  return { method: req.method, url: redactedUrl(req.url), host: req.hostname }
}
