/**
 * The server's defaults that `fsbucket serve` (its flags, cli.ts) and
 * `startServer` (embed.ts) share, so the two agree. Nothing is imported
 * here: the command line reads it without loading the server.
 */
export const serveDefaults = {
  host: '127.0.0.1',
  /** The S3-compatible API's port (`fsbucket share` signs links for it). */
  s3Port: 8788,
  catalogConnections: 10,
  fsync: true,
  /** Seconds between sweeps of expired uploads and leftovers. */
  sweepInterval: 3600,
  defaultBucket: 'default',
  /** Seconds a connection may stay silent (src/app.ts). */
  idleTimeout: 60
} as const

/**
 * Why a bearer token could never be presented, or undefined when it can:
 * a client's `Authorization: Bearer <token>` carries one word, so a token
 * with whitespace (a line break left at its end, most often) would leave
 * the server refusing every request. `serve --token` and `startServer`'s
 * `token` both refuse it.
 */
export function unpresentableToken (token: string): string | undefined {
  return /\s/.test(token) ? 'the token must not contain whitespace (a space or a line break, often one left at its end): no request could present it' : undefined
}
