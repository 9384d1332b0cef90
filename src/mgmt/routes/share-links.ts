/**
 * Share links through the management API (fsbucket's own route; the hosted
 * API has none): `POST /accounts/{account_id}/r2/buckets/{bucket}/share-links`
 * with `{key, method?, expires_in?}` answers a presigned URL on the S3 port
 * that GETs (`method` "GET", the default) or PUTs ("PUT") that one object
 * until it expires, made as `fsbucket share` makes it (src/doors/share-links.ts):
 * signed with a token made for the link, whose secret nobody is given. The
 * web console calls it: a browser must not hold an S3 secret to sign with.
 *
 * Who may: whoever may do the same to the object. The plugin lets this one
 * route past its account check (object tokens have no account access), and
 * the route asks the engine's `authorize` for `object:read` (a download
 * link) or `object:write` (an upload link) on the bucket and key: what the
 * caller's token may not do, it may not hand out either (10950). The
 * access check comes before the bucket's existence, so a token cannot learn
 * which buckets outside its scope exist.
 *
 * `expires_in` is seconds, 1 to 604,800 (7 days, S3's longest presigned
 * life; default 3,600). A link made with a scoped token that expires sooner
 * ends with it: the link's life is cut to the caller's (`expires_on` in the
 * answer says when). Revoking the caller's token does not end the links it
 * made: each has its own token (`token_id`), revoked on its own.
 *
 * The URL names the S3 port's public origin (`--s3-endpoint`, else the
 * host the request came to with the S3 port); a server without an S3 port
 * answers 10952 (501).
 */
import type { FastifyInstance } from 'fastify'
import { MakerGoneError, requireAccess } from '../../bucket/index.js'
import { curlCommand, makeShareLink, MAX_SHARE_SECONDS } from '../../doors/share-links.js'
import { callerExpiry } from './tokens.js'
import type { ManagementContext } from '../context.js'
import { success } from '../envelope.js'
import { ManagementError } from '../errors.js'

/** The S3 port's public origin for a request that came to `requestHost` (its Host header); null: the server has no S3 port. */
export type ShareEndpoint = (requestHost: string | undefined) => URL | null

export interface ShareRequest {
  key: string
  method: 'GET' | 'PUT'
  /** Seconds, 1 to MAX_SHARE_SECONDS. */
  seconds: number
}

/** The key of a link: 1 to 1,024 bytes of well-formed text, the binding's rule (the bucket's own checks come with the request). */
const MAX_KEY_BYTES = 1024

/** What a creation's body asks for, or the ManagementError that refuses it. */
export function parseShareRequest (body: unknown): ShareRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ManagementError('InvalidRequestBody', 'The body must be a JSON object.')
  const fields = body as Record<string, unknown>
  if (typeof fields.key !== 'string') throw new ManagementError('InvalidRequestBody', 'key is required: the object the link is for.')
  if (fields.key === '' || Buffer.byteLength(fields.key, 'utf8') > MAX_KEY_BYTES || !fields.key.isWellFormed()) throw new ManagementError('InvalidObjectName')
  const method = fields.method ?? 'GET'
  if (method !== 'GET' && method !== 'PUT') throw new ManagementError('InvalidRequestBody', 'method must be GET (a download link) or PUT (an upload link).')
  const seconds = fields.expires_in ?? 3600
  if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_SHARE_SECONDS) {
    throw new ManagementError('InvalidRequestBody', `expires_in must be a whole number of seconds from 1 to ${MAX_SHARE_SECONDS} (7 days).`)
  }
  return { key: fields.key, method, seconds }
}


export function registerShareLinkRoutes (app: FastifyInstance, ctx: ManagementContext, endpointOf: ShareEndpoint): void {
  app.post<{ Params: { accountId: string, bucketName: string } }>('/accounts/:accountId/r2/buckets/:bucketName/share-links', async (request) => {
    const bucket = request.params.bucketName
    const asked = parseShareRequest(request.body)
    const principal = request.principal
    if (principal === null) throw new ManagementError('AuthenticationError')
    requireAccess(principal, asked.method === 'PUT' ? 'object:write' : 'object:read', bucket, asked.key, 'share')
    if (await ctx.registry.info(bucket) === null) throw new ManagementError('NoSuchBucket')
    const endpoint = endpointOf(request.headers.host)
    if (endpoint === null) throw new ManagementError('NoS3Port')
    const now = ctx.now()
    // What was asked, cut to the caller's own token's expiry.
    const notAfter = await callerExpiry(ctx, principal) ?? undefined
    // Made for the caller's token (a session's: its parent's), so revoking that token ends the link too.
    const madeBy = principal.id ?? undefined
    const link = await makeShareLink(ctx.registry.tokens, { endpoint, bucket, key: asked.key, method: asked.method, seconds: asked.seconds, now, notAfter, madeBy })
      .catch((err: unknown) => {
        // The caller's token was revoked since it was checked: as a request that came after the revocation.
        throw err instanceof MakerGoneError ? new ManagementError('AuthenticationError') : err
      })
    return success({
      url: link.url,
      method: asked.method,
      bucket,
      key: asked.key,
      expires_on: link.expiresOn,
      token_id: link.tokenId,
      curl: curlCommand(asked.method, asked.key, link.url)
    })
  })
}

