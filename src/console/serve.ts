/**
 * Serves the web console: the static files that `npm run build` bundles from
 * src/console/ui/ into dist/console/, under `/_console/`.
 *
 * `_console` can never be a bucket (bucket names are 3 to 63 of [a-z0-9-]),
 * and Fastify's router prefers this plugin's `/_console/*` over the
 * gateway's catch-all `/*`, so no request under it reaches the bucket
 * routes: GET and HEAD answer files, other methods the gateway's 404.
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
import type { FastifyInstance, FastifyReply } from 'fastify'
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

export async function webConsole (app: FastifyInstance, options: { root?: string } = {}): Promise<void> {
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
  app.get(consolePath.slice(0, -1), async (_request, reply) => await reply.redirect(consolePath, 301))
  app.route({
    method: ['PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS'],
    url: `${consolePath}*`,
    handler: async (_request, reply) => { reply.callNotFound() }
  })
}
