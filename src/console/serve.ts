/**
 * Serves the web console: the static files that `npm run build` bundles from
 * src/console/ui/ into dist/console/, under `/_console/`.
 *
 * `_console` can never be a bucket (bucket names are 3 to 63 of [a-z0-9-]),
 * and Fastify's router prefers this plugin's `/_console` and `/_console/*`
 * over the gateway's catch-all `/*`, so no request under it reaches the
 * bucket routes: GET and HEAD answer files, and everything that is no file
 * answers the gateway's 404 (code 40400) in its envelope: any name that is
 * not one of the files the build wrote (listed once, when the app is built:
 * so no `..`, `%00`, `//` or other spelling can name anything else; a
 * listed name that is no longer a file answers 404 too), and
 * every other method, refused before its body is read (so neither a body
 * parser's 400 or 415 nor a bucket error answers instead).
 *
 * A listed file is answered by `@fastify/send` (validators, conditional
 * requests, ranges, the type by its extension), loaded at the first such
 * request: a server that never shows its console never loads it. `send`
 * compares `If-Match` and `If-Range` weakly, where RFC 9110 compares them
 * strongly, and reads dates with `Date.parse` (`2099` is a date to it),
 * where RFC 9110 asks that a date that is no HTTP-date be ignored: so every
 * condition but `If-None-Match` is judged here (`conditionsForSend`),
 * against the file `send` found, with the engine's HTTP-date parser.
 * The console imports no other door: the composition root (app.ts) answers
 * its refusals (`ConsoleRefusal`) in the envelope.
 *
 * The page (`index.html`) runs under a Content-Security-Policy that allows
 * exactly its own script and stylesheet, by a nonce drawn for each answer,
 * and connections to this origin: no inline script or style, no remote
 * anything, no framing, and no other script of this origin. An object this
 * origin serves with a JavaScript or CSS type (a bucket read, path style)
 * is "self" too, so `script-src 'self'` would let one injected tag run it
 * as the console; a nonce admits only the tags the page itself carries.
 * The page is therefore made for each answer and never stored
 * (`no-store`); every other answer carries a policy that allows nothing.
 * The bundles have a content hash in their names and are cached for a year
 * as immutable.
 *
 * The console holds no data of its own: it talks to the gateway's public
 * routes and to the management API like any other client.
 */
import { randomBytes } from 'node:crypto'
import type { Stats } from 'node:fs'
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { readdir, readFile } from 'node:fs/promises'
import path from 'node:path'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { parseHttpDate } from '../bucket/index.js'
import { packagePath } from '../package-root.js'

export const consolePath = '/_console/'

/** dist/console, where the console's build writes it. */
export const consoleRoot = packagePath('dist', 'console')

/** The policy of every answer under `/_console/` but the page: nothing may run, load or frame it. */
export const consolePolicy = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The page's policy: its own script and stylesheet (the tags that carry `nonce`), connections and images of this origin. */
export function consolePagePolicy (nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "img-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join('; ')
}

/** The placeholder the build leaves in index.html for each answer's nonce. */
export const noncePlaceholder = '{{nonce}}'

const securityHeaders: Record<string, string> = {
  'content-security-policy': consolePolicy,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY'
}

/** Bundles are named `<name>-<hash>.<ext>` by the build. */
const hashedAsset = /-[A-Z0-9]{8,}\.(js|css)$/

/** The console's URL for a listening address (`0.0.0.0` and `::` are reached on loopback). */
export function consoleUrl (host: string, port: number, scheme: 'http' | 'https' = 'http'): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  const shown = reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable
  return `${scheme}://${shown}:${port}${consolePath}`
}

/**
 * What the console refuses: a name that is no console file, or a method
 * other than GET and HEAD; a failed `If-Match` or `If-Unmodified-Since`; an
 * unsatisfiable range.
 */
export type ConsoleRefusal = 'NoSuchFile' | 'PreconditionFailed' | 'RangeNotSatisfiable'

export interface WebConsoleOptions {
  /** The built console (default: dist/console). */
  root?: string
  /** Answers a refusal, or any other error (`{fault}`: a bug, logged), in the gateway's envelope: the composition root's job. */
  refuse: (reply: FastifyReply, refusal: ConsoleRefusal | { fault: unknown }) => Promise<void>
}

/** The refusal a status of `send` stands for; null for a fault. */
function refusalOf (status: number): ConsoleRefusal | null {
  switch (status) {
    case 400: case 403: case 404: return 'NoSuchFile'
    case 412: return 'PreconditionFailed'
    case 416: return 'RangeNotSatisfiable'
    default: return null
  }
}

/** The files the build wrote beside the page (the page itself is answered apart); none when the console is unbuilt. */
async function builtFiles (root: string): Promise<Set<string>> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => [])
  return new Set(entries.filter(entry => entry.isFile() && entry.name !== 'index.html' && !entry.name.startsWith('.')).map(entry => entry.name))
}

type Send = typeof import('@fastify/send').default
let loadedSend: Promise<Send> | null = null
/** `@fastify/send`, loaded once, at the first file asked for (a CommonJS module: its export is `default` under `import()`). */
async function sendModule (): Promise<Send> {
  loadedSend ??= import('@fastify/send').then(loaded => loaded.default)
  return await loadedSend
}

/**
 * The request's headers as `send` is to see them, once the file it found is
 * known (`mtime`), or the 412 the conditions answer. RFC 9110 (13.2.2)
 * judges, in order:
 *
 * - `If-Match`: `send`'s ETags are weak (`W/"<size>-<mtime>"`) and If-Match
 *   compares strongly (13.1.1), so only `*` holds, and then
 *   `If-Unmodified-Since` is not looked at; any other value fails (412).
 * - `If-Unmodified-Since` (without If-Match): fails when the file's
 *   Last-Modified is later than it.
 * - `If-None-Match` is `send`'s (a weak comparison, as 13.1.2 asks); with it,
 *   `If-Modified-Since` is not looked at.
 * - `If-Modified-Since`: holds (304) when the Last-Modified is not later
 *   than it; `send` then sees the Last-Modified itself, which it reads back
 *   exactly.
 * - `If-Range` (with a Range): a tag never holds (a weak tag never matches
 *   strongly, 13.1.5), and a date holds only when it is the Last-Modified
 *   exactly (a strong validator); otherwise the Range is ignored and the
 *   whole file sent. A value that is neither a tag nor an HTTP-date matches
 *   no validator: the whole file too.
 *
 * A date of If-Modified-Since or If-Unmodified-Since that is no HTTP-date
 * (`2099`, `Mon, 30 Feb 2026 ...`, a year of five digits) is ignored, as
 * 13.1.3 and 13.1.4 ask: the header is as if absent. `send` never sees
 * If-Match, If-Unmodified-Since or If-Range.
 */
export function conditionsForSend (headers: IncomingHttpHeaders, mtime: Date): IncomingHttpHeaders | 'PreconditionFailed' {
  const seen: IncomingHttpHeaders = Object.fromEntries(Object.entries(headers).filter(([name]) => !judgedHere.has(name)))
  // What `send` writes as Last-Modified, and the instant it stands for (whole seconds).
  const lastModified = mtime.toUTCString()
  const modified = parseHttpDate(lastModified)?.getTime()
  const ifMatch = headers['if-match']
  if (ifMatch !== undefined) {
    if (ifMatch.trim() !== '*') return 'PreconditionFailed'
  } else {
    const unmodifiedSince = instantOf(headers['if-unmodified-since'])
    if (unmodifiedSince !== undefined && (modified === undefined || modified > unmodifiedSince)) return 'PreconditionFailed'
  }
  if (headers['if-none-match'] === undefined) {
    const modifiedSince = instantOf(headers['if-modified-since'])
    if (modifiedSince !== undefined && modified !== undefined && modified <= modifiedSince) seen['if-modified-since'] = lastModified
  }
  const ifRange = headers['if-range'] as string | undefined // Node joins a repeated header other than Set-Cookie
  if (headers.range !== undefined && (ifRange === undefined || (modified !== undefined && instantOf(ifRange) === modified))) seen.range = headers.range
  return seen
}

/** The headers `conditionsForSend` judges, which `send` sees only as it says. */
const judgedHere = new Set(['if-match', 'if-unmodified-since', 'if-modified-since', 'if-range', 'range'])

/** A header's HTTP-date in ms since the epoch; undefined when absent or no HTTP-date. */
function instantOf (value: string | undefined): number | undefined {
  return value === undefined ? undefined : parseHttpDate(value)?.getTime()
}

/** Thrown from `send`'s `onFile` when the conditions fail, so that it opens no stream. */
const preconditionFailed = new Error('console file: precondition failed')

export async function webConsole (app: FastifyInstance, options: WebConsoleOptions): Promise<void> {
  // Unbuilt (tsc without the console bundle), everything under /_console/ answers 404.
  const root = options.root ?? consoleRoot
  const page = await readFile(path.join(root, 'index.html'), 'utf8').catch(() => null)
  const files = await builtFiles(root)
  app.addHook('onRequest', async (_request, reply) => { reply.headers(securityHeaders) })
  const servePage = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (page === null) return await options.refuse(reply, 'NoSuchFile')
    // 128 bits from the CSPRNG, as CSP asks of a nonce: unguessable by a page that did not receive this answer.
    const nonce = randomBytes(16).toString('base64')
    await reply.headers({ 'content-security-policy': consolePagePolicy(nonce), 'cache-control': 'no-store' })
      .type('text/html; charset=utf-8').send(page.replaceAll(noncePlaceholder, nonce))
  }
  const serveFile = async (request: FastifyRequest<{ Params: { '*': string } }>, reply: FastifyReply): Promise<void> => {
    const name = request.params['*']
    if (!files.has(name)) return await options.refuse(reply, 'NoSuchFile')
    const send = await sendModule()
    // `send` reads the headers once it has found the file (and called onFile with it), before it answers.
    const seen = Object.create(request.raw, { headers: { value: {}, writable: true } }) as IncomingMessage
    const onFile = (_path: string, stat: Stats): void => {
      const headers = conditionsForSend(request.raw.headers, stat.mtime)
      if (headers === 'PreconditionFailed') throw preconditionFailed
      seen.headers = headers
    }
    // `send` decodes the path it is given: the name, encoded, under the root.
    const answer = await send(seen, `/${encodeURIComponent(name)}`, { root, dotfiles: 'ignore', cacheControl: false, onFile })
      .catch((err: unknown) => { if (err === preconditionFailed) return null; throw err })
    if (answer === null) return await options.refuse(reply, 'PreconditionFailed')
    if (answer.type === 'directory') {
      // A listed name that is a directory now: no file either (`send` would redirect to its `/`).
      answer.stream.destroy()
      return await options.refuse(reply, 'NoSuchFile')
    }
    if (answer.type === 'error') {
      answer.stream.destroy()
      const refusal = refusalOf(answer.statusCode)
      // `send` puts `Content-Range: bytes */<size>` on its 416.
      const range = answer.headers['Content-Range']
      if (refusal === 'RangeNotSatisfiable' && typeof range === 'string') reply.header('content-range', range)
      return await options.refuse(reply, refusal ?? { fault: answer.metadata.error })
    }
    reply.code(answer.statusCode).headers(answer.headers)
      .header('cache-control', hashedAsset.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache')
    await reply.send(answer.stream)
  }
  app.get(consolePath, servePage)
  app.get(`${consolePath}index.html`, servePage)
  app.get(`${consolePath}*`, serveFile)
  app.setErrorHandler(async (err, _request, reply) => { await options.refuse(reply, { fault: err }) })
  app.get(consolePath.slice(0, -1), async (_request, reply) => await reply.redirect(consolePath, 301))
  // Refused in onRequest, before Fastify reads (and would parse) a body.
  const refuseMethod = async (_request: FastifyRequest, reply: FastifyReply): Promise<void> => { await options.refuse(reply, 'NoSuchFile') }
  const otherMethods = app.supportedMethods.filter(method => method !== 'GET' && method !== 'HEAD')
  for (const url of [consolePath.slice(0, -1), `${consolePath}*`]) {
    app.route({ method: otherMethods, url, onRequest: refuseMethod, handler: refuseMethod })
  }
}
