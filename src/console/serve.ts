/**
 * Serves the web console: the static files that `npm run build` bundles from
 * src/console/ui/ into dist/console/, under `/_console/`.
 *
 * `_console` can never be a bucket (bucket names are 3 to 63 of [a-z0-9-]),
 * and Fastify's router prefers this plugin's `/_console` and `/_console/*`
 * over the gateway's catch-all `/*`, so no request under it reaches the
 * bucket routes: GET and HEAD answer files, and everything that is no file
 * answers the gateway's 404 (code 40400) in its envelope: a missing file
 * (the gateway's not-found handler), a path @fastify/static refuses (`..`,
 * `%00`, `//`), and every other method, refused before its body is read (so
 * neither a body parser's 400 or 415 nor a bucket error answers instead).
 * The console imports no other door: the composition root (app.ts) answers
 * its refusals (`ConsoleRefusal`) in the envelope.
 *
 * Every answer carries a Content-Security-Policy that allows scripts,
 * styles and connections from this origin only: no inline script, no
 * inline style, no remote anything, no framing. `index.html` is revalidated
 * on every load (`no-cache`, with its ETag); the bundles have a content hash
 * in their names and are cached for a year as immutable.
 *
 * The console holds no data of its own: it talks to the gateway's public
 * routes and to the management API like any other client.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fastifyStatic from '@fastify/static'

export const consolePath = '/_console/'

/** dist/console, beside dist/src where this module runs from. */
export const consoleRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'console')

export const consolePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

const securityHeaders: Record<string, string> = {
  'content-security-policy': consolePolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY'
}

/** Bundles are named `<name>-<hash>.<ext>` by the build. */
const hashedAsset = /-[A-Z0-9]{8,}\.(js|css)$/

/** The console's URL for a listening address (`0.0.0.0` and `::` are reached on loopback). */
export function consoleUrl (host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const shown = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable
  return `http://${shown}:${port}${consolePath}`
}

/**
 * What the console refuses: a path that is no console file (@fastify/static
 * refuses `..`, `%00`, `//` with 403 or 400), or a method other than GET and
 * HEAD; a failed `If-Match` or `If-Unmodified-Since`; an unsatisfiable range.
 */
export type ConsoleRefusal = 'NoSuchFile' | 'PreconditionFailed' | 'RangeNotSatisfiable'

export interface WebConsoleOptions {
  /** The built console (default: dist/console). */
  root?: string
  /** Answers a refusal, or any other error (`{fault}`: a bug, logged), in the gateway's envelope: the composition root's job. */
  refuse: (reply: FastifyReply, refusal: ConsoleRefusal | { fault: unknown }) => Promise<void>
}

/** The refusal an error of @fastify/static or `send` stands for, by its status; null for a fault. */
function refusalOf (err: unknown): ConsoleRefusal | null {
  switch ((err as { statusCode?: unknown } | null)?.statusCode) {
    case 400: case 403: case 404: return 'NoSuchFile'
    case 412: return 'PreconditionFailed'
    case 416: return 'RangeNotSatisfiable'
    default: return null
  }
}

export async function webConsole (app: FastifyInstance, options: WebConsoleOptions): Promise<void> {
  // Unbuilt (tsc without the console bundle), /_console/ answers 404; @fastify/static warns of the missing directory.
  const root = options.root ?? consoleRoot
  app.addHook('onRequest', async (_request, reply) => { reply.headers(securityHeaders) })
  await app.register(fastifyStatic, {
    root,
    prefix: consolePath,
    decorateReply: false,
    redirect: false,
    index: 'index.html',
    dotfiles: 'ignore',
    cacheControl: false,
    setHeaders: (reply: FastifyReply, file: string) => {
      reply.header('cache-control', hashedAsset.test(file) ? 'public, max-age=31536000, immutable' : 'no-cache')
    }
  })
  app.setErrorHandler(async (err, _request, reply) => {
    const refusal = refusalOf(err)
    // `send` puts `Content-Range: bytes */<size>` on its 416.
    const range = (err as { headers?: Record<string, unknown> }).headers?.['Content-Range']
    if (refusal === 'RangeNotSatisfiable' && typeof range === 'string') reply.header('content-range', range)
    await options.refuse(reply, refusal ?? { fault: err })
  })
  app.get(consolePath.slice(0, -1), async (_request, reply) => await reply.redirect(consolePath, 301))
  // Refused in onRequest, before Fastify reads (and would parse) a body.
  const refuseMethod = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => { await options.refuse(reply, 'NoSuchFile') }
  const otherMethods = app.supportedMethods.filter(method => method !== 'GET' && method !== 'HEAD')
  for (const url of [consolePath.slice(0, -1), `${consolePath}*`]) {
    app.route({ method: otherMethods, url, onRequest: refuseMethod, handler: refuseMethod })
  }
}
