/**
 * The HTTP transport: a running gateway over its routes (docs/http.md),
 * with Node's fetch.
 *
 * - Keys travel percent-encoded whole (a `/` as `%2F`): the gateway decodes
 *   the path after the bucket once, and a key with `.` or `..` segments
 *   would otherwise be folded away by URL normalisation before it is sent.
 *   The request path is sent as written, never through a URL: a key that
 *   is `.` or `..` whole has no spelling a URL keeps (`/b/..` is `/`).
 * - `head` is a one-key list (`prefix=<key>&limit=1`): it gives the same
 *   fields, to the millisecond, as the local transport, and a missing bucket
 *   answers 404 with its own code where a HEAD would answer a bare 404.
 * - Buckets are created and deleted through the management API
 *   (`/client/v4/accounts/<id>/r2/buckets`; the account id is not checked).
 *   It always wants credentials: without `--token` a placeholder token is
 *   sent, which only a loopback server with no credentials configured
 *   accepts, the same server that takes object writes without a token.
 * - Bodies stream both ways with node:http's backpressure; an upload's body
 *   is sent chunked. (Node's fetch was the first choice, but a 40 MiB
 *   upload through it grew the process by ~100 MiB against ~30 MiB with
 *   node:http, measured here.)
 * - A server that stops answering (stopped, or its host gone) fails the
 *   request instead of hanging the command: connecting may take 10 s, and
 *   once connected nothing may stay still for `--timeout` seconds (60 by
 *   default), bytes sent and received alike. It is a limit on silence,
 *   never on a request's length: a transfer whose bytes keep moving is never
 *   cut, however long it takes, nor one whose reader holds it back (a
 *   pager, a slow disk).
 * - A connection cut while an answer is read (the server gone mid-body, a
 *   reset mid-envelope) fails the command with the endpoint's name and what
 *   happened, where Node says only "aborted".
 */
import http, { type IncomingMessage } from 'node:http'
import type { LookupFunction } from 'node:net'
import https from 'node:https'
import { urlToHttpOptions } from 'node:url'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { BucketErrors, isValidBucketName } from '../bucket/index.js'
import { CliError, cliError, fromCode } from './errors.js'
import type {
  BucketSummary, ListedPage, ObjectHttpMetadata, ObjectTransport, PartUpload, RemoteObject, UploadedPart, WriteMetadata
} from './transport.js'

const placeholderToken = 'fsbucket-cli'
const accountId = 'local'

/** How long a connection may take to open: a live server on a network accepts in far less. */
const connectTimeoutMs = 10_000

interface RequestOptions {
  headers?: Record<string, string>
  /** A stream (sent chunked) or a value sent as JSON. */
  body?: unknown
  /** A management API call: credentials are always sent. */
  management?: boolean
  /** The bucket the request is about, when its path does not name it (creating one). */
  bucket?: string
}

interface GatewayAnswer {
  success?: boolean
  errors?: Array<{ code?: number, message?: string }>
  result?: unknown
  result_info?: { cursor?: string | null, truncated?: boolean, delimitedPrefixes?: string[] }
}

/** A header value the gateway decodes back to the same string (UTF-8 bytes sent as Latin-1). */
function headerValue (value: string): string {
  return Buffer.from(value, 'utf8').toString('latin1')
}

function encodeKey (key: string): string {
  return encodeURIComponent(key)
}

function remoteObjectFrom (json: unknown): RemoteObject {
  const o = json as Record<string, any>
  const http = (o.httpMetadata ?? {}) as Record<string, unknown>
  const httpMetadata: ObjectHttpMetadata = {}
  for (const name of ['contentType', 'contentLanguage', 'contentDisposition', 'contentEncoding', 'cacheControl'] as const) {
    if (typeof http[name] === 'string') httpMetadata[name] = http[name] as string
  }
  const expires = typeof http.cacheExpiry === 'string' ? new Date(http.cacheExpiry) : undefined
  if (expires !== undefined && !Number.isNaN(expires.getTime())) httpMetadata.cacheExpiry = expires
  return {
    key: String(o.key),
    size: Number(o.size),
    etag: String(o.etag),
    uploaded: new Date(String(o.uploaded)),
    storageClass: String(o.storageClass ?? 'Standard'),
    httpMetadata,
    customMetadata: { ...(o.customMetadata ?? {}) }
  }
}

function metadataHeaders (metadata: WriteMetadata): Record<string, string> {
  const headers: Record<string, string> = {}
  const { contentType, contentLanguage, contentDisposition, contentEncoding, cacheControl, cacheExpiry } = metadata.httpMetadata
  if (contentType !== undefined) headers['content-type'] = headerValue(contentType)
  if (contentLanguage !== undefined) headers['content-language'] = headerValue(contentLanguage)
  if (contentDisposition !== undefined) headers['content-disposition'] = headerValue(contentDisposition)
  if (contentEncoding !== undefined) headers['content-encoding'] = headerValue(contentEncoding)
  if (cacheControl !== undefined) headers['cache-control'] = headerValue(cacheControl)
  // An HTTP date has four digits of year: an expiry the library stored outside them cannot be sent, and is left out.
  if (cacheExpiry !== undefined && cacheExpiry.getUTCFullYear() >= 1 && cacheExpiry.getUTCFullYear() <= 9999) headers.expires = cacheExpiry.toUTCString()
  for (const [name, value] of Object.entries(metadata.customMetadata)) headers[`x-meta-${name}`] = headerValue(value)
  return headers
}

/** The bucket a request path is about: `/<bucket>/...` on the routes, `.../r2/buckets/<bucket>` on the management API. */
function bucketOfPath (path: string): string | undefined {
  const segments = path.split('?')[0].split('/').slice(1)
  const managed = segments.indexOf('buckets')
  const segment = segments[0] === 'client' ? (managed === -1 ? undefined : segments[managed + 1]) : segments[0]
  if (segment === undefined || segment === '') return undefined
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

export class HttpTransport implements ObjectTransport {
  readonly #base: URL
  readonly #token: string | undefined
  readonly #agent: http.Agent
  readonly #idleMs: number
  readonly #connectMs: number
  readonly #lookup: LookupFunction | undefined

  /**
   * `idleSeconds`: how long a request's connection may stay silent before the request fails (`--timeout`).
   * `connecting`: how long a connection may take to open, and how its host name is resolved (Node's
   * `dns.lookup` by default); no flag sets them, a test does.
   */
  constructor (endpoint: string, token: string | undefined, idleSeconds = 60, connecting: { timeoutMs?: number, lookup?: LookupFunction } = {}) {
    let url: URL
    try {
      url = new URL(endpoint)
    } catch {
      // Never the value: it may carry a password or a token (user:password@, ?token=), as --s3-endpoint's refusals never do.
      throw new CliError('--endpoint (or FSBUCKET_ENDPOINT) is not a URL (e.g. http://127.0.0.1:8787)')
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new CliError('--endpoint (or FSBUCKET_ENDPOINT) is not an http(s) URL (e.g. http://127.0.0.1:8787)')
    // A path would be put before every route's, so `http://host:8787/photos` would write into the bucket photos, under keys
    // beginning with the bucket meant: the gateway's origin alone names it.
    if ((url.pathname !== '/' && url.pathname !== '') || url.search !== '' || url.hash !== '') {
      throw new CliError('--endpoint (or FSBUCKET_ENDPOINT) must be a gateway\'s origin, with no path, query or fragment (e.g. http://127.0.0.1:8787); name the bucket in fsb://<bucket>/<key>')
    }
    this.#base = url
    this.#token = token === '' ? undefined : token
    this.#idleMs = idleSeconds * 1000
    this.#connectMs = connecting.timeoutMs ?? connectTimeoutMs
    this.#lookup = connecting.lookup
    this.#agent = url.protocol === 'https:' ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true })
  }

  /** The endpoint as shown in messages: never with the user name or password a URL may carry. */
  get #origin (): string {
    return `${this.#base.protocol}//${this.#base.host}`
  }

  /** One request; resolves with the response once its status is a success, else throws the envelope's error. */
  async #request (method: string, path: string, init: RequestOptions = {}): Promise<IncomingMessage> {
    const headers: Record<string, string> = { ...init.headers }
    const token = this.#token ?? (init.management === true ? placeholderToken : undefined)
    if (token !== undefined) headers.authorization = `Bearer ${token}`
    let json: string | undefined
    if (init.body !== undefined && !(init.body instanceof Readable)) {
      json = JSON.stringify(init.body)
      headers['content-type'] = 'application/json'
      headers['content-length'] = String(Buffer.byteLength(json))
    }
    const target = {
      ...urlToHttpOptions(this.#base),
      path,
      method,
      headers,
      agent: this.#agent,
      ...(this.#lookup === undefined ? {} : { lookup: this.#lookup })
    }
    const send = this.#base.protocol === 'https:' ? https.request : http.request
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const request = send(target, resolve)
      request.on('error', err => {
        if (err instanceof CliError) { // a timeout (#limitSilence)
          reject(err)
          return
        }
        const code = (err as NodeJS.ErrnoException).code
        reject(new CliError(`cannot reach ${this.#origin}: ${code ?? err.message}`, undefined, { cause: err }))
      })
      this.#limitSilence(request)
      this.#nameCutAnswer(request)
      if (init.body instanceof Readable) {
        // A failing body (an unreadable file) is the error to report, not the aborted request it causes.
        pipeline(init.body, request).catch(err => { reject(err) })
      } else {
        request.end(json)
      }
    })
    const status = response.statusCode ?? 0
    if (status >= 200 && status < 300) return response
    throw await this.#failure(response, init.bucket ?? bucketOfPath(path))
  }

  /**
   * Fails `request` when its connection does not open within
   * `#connectMs`, or when nothing moves on it, either way, for
   * `#idleMs`, while the request is sent or while its answer is read: the
   * answer's reader (a download, an envelope read whole) gets the error.
   */
  #limitSilence (request: http.ClientRequest): void {
    request.once('socket', socket => {
      if (!socket.connecting) return // a kept-alive connection, open already
      const timer = setTimeout(() => {
        request.destroy(new CliError(`cannot reach ${this.#origin}: no connection after ${this.#connectMs / 1000} s`))
      }, this.#connectMs)
      socket.once('connect', () => { clearTimeout(timer) })
      socket.once('close', () => { clearTimeout(timer) })
    })
    let answer: IncomingMessage | undefined
    request.once('response', response => { answer = response })
    // Counted once connected: from the last byte sent or received, so a transfer that moves is never cut.
    const silent = (): void => {
      // An answer its reader holds back (`cat | less`, a slow disk) is still: the reader's doing, not the server's. Counted again.
      if (answer !== undefined && (answer.isPaused() || answer.readableLength >= answer.readableHighWaterMark)) {
        request.setTimeout(this.#idleMs, silent)
        return
      }
      const err = new CliError(`${this.#origin} stopped answering: nothing moved for ${this.#idleMs / 1000} s (--timeout)`)
      // The answer first: destroyed by the request's end, it would fail with Node's own "aborted".
      answer?.destroy(err)
      request.destroy(err)
    }
    request.setTimeout(this.#idleMs, silent)
  }

  /**
   * Fails `request`'s answer with the CLI's words when its connection closes
   * before the answer is complete. Node's own listener, which fails it with a
   * bare "aborted", runs after this one; an answer failed already (a
   * timeout, a reader that went away) keeps its error.
   */
  #nameCutAnswer (request: http.ClientRequest): void {
    let answer: IncomingMessage | undefined
    request.once('response', response => { answer = response })
    request.once('socket', socket => {
      const cut = (): void => {
        if (answer === undefined || answer.complete || answer.destroyed) return
        answer.destroy(new CliError(`${this.#origin}: the connection was cut before the answer was complete`))
      }
      socket.prependOnceListener('close', cut)
      // A kept-alive connection goes on to serve other requests, each with its own listener.
      request.once('close', () => { socket.removeListener('close', cut) })
    })
  }

  /** `bucket`: the one the request was about, named by the line when the error is about it. */
  async #failure (response: IncomingMessage, bucket: string | undefined): Promise<CliError> {
    let envelope: GatewayAnswer | null = null
    try {
      envelope = JSON.parse((await readAll(response)).toString('utf8')) as GatewayAnswer
    } catch {}
    const first = envelope?.errors?.[0]
    if (typeof first?.code === 'number') {
      // The routes answer a name no bucket can have as a bucket they do not have; the local transport says what the engine says of the name.
      if (first.code === BucketErrors.NoSuchBucket.code && bucket !== undefined && !isValidBucketName(bucket)) return cliError('InvalidBucketName', bucket)
      return fromCode(first.code, first.message ?? `HTTP ${response.statusCode ?? 0}`, undefined, bucket)
    }
    return new CliError(`the server answered ${response.statusCode ?? 0} ${response.statusMessage ?? ''}`.trim())
  }

  async #json (method: string, path: string, init: RequestOptions = {}): Promise<GatewayAnswer> {
    const response = await this.#request(method, path, init)
    const text = (await readAll(response)).toString('utf8')
    if (text === '') return {}
    try {
      return JSON.parse(text) as GatewayAnswer
    } catch {
      throw this.#notGateway('JSON')
    }
  }

  /** The envelope's `result` when it is a list (`shape`) or an object, as an fsbucket gateway's is; else the endpoint is some other server. */
  #result<T> (envelope: GatewayAnswer, shape: 'list' | 'object'): T {
    const { result } = envelope
    const fits = shape === 'list' ? Array.isArray(result) : typeof result === 'object' && result !== null && !Array.isArray(result)
    if (!fits) throw this.#notGateway(`a ${shape} in its result`)
    return result as T
  }

  #notGateway (what: string): CliError {
    return new CliError(`${this.#origin} answered without ${what}, as an fsbucket gateway answers: is --endpoint one?`)
  }

  async listBuckets (): Promise<BucketSummary[]> {
    const envelope = await this.#json('GET', '/')
    return this.#result<Array<{ name: string, creationDate: string }>>(envelope, 'list')
      .map(b => ({ name: b.name, creationDate: new Date(b.creationDate) }))
  }

  async createBucket (name: string): Promise<void> {
    await this.#json('POST', `/client/v4/accounts/${accountId}/r2/buckets`, { body: { name }, management: true, bucket: name })
  }

  async deleteBucket (name: string): Promise<void> {
    await this.#json('DELETE', `/client/v4/accounts/${accountId}/r2/buckets/${encodeURIComponent(name)}`, { management: true })
  }

  async list (bucket: string, options: { prefix?: string, delimiter?: string, cursor?: string, limit?: number }): Promise<ListedPage> {
    const query = new URLSearchParams({ include: 'httpMetadata,customMetadata' })
    if (options.prefix !== undefined && options.prefix !== '') query.set('prefix', options.prefix)
    if (options.delimiter !== undefined) query.set('delimiter', options.delimiter)
    if (options.cursor !== undefined) query.set('cursor', options.cursor)
    if (options.limit !== undefined) query.set('limit', String(options.limit))
    const envelope = await this.#json('GET', `/${encodeURIComponent(bucket)}?${query.toString()}`)
    const info = envelope.result_info ?? {}
    return {
      objects: this.#result<unknown[]>(envelope, 'list').map(remoteObjectFrom),
      prefixes: info.delimitedPrefixes ?? [],
      cursor: info.truncated === true && typeof info.cursor === 'string' ? info.cursor : undefined
    }
  }

  async head (bucket: string, key: string): Promise<RemoteObject | null> {
    const page = await this.list(bucket, { prefix: key, limit: 1 })
    const first = page.objects[0]
    return first !== undefined && first.key.normalize('NFC') === key.normalize('NFC') ? first : null
  }

  async get (bucket: string, key: string, range?: { offset: number, length: number }): Promise<{ size: number, body: Readable }> {
    const headers: Record<string, string> = {}
    if (range !== undefined) headers.range = `bytes=${range.offset}-${range.offset + range.length - 1}`
    const response = await this.#request('GET', `/${encodeURIComponent(bucket)}/${encodeKey(key)}`, { headers })
    return { size: Number(response.headers['content-length'] ?? NaN), body: response }
  }

  async put (bucket: string, key: string, body: Readable, _size: number | undefined, metadata: WriteMetadata): Promise<RemoteObject> {
    const envelope = await this.#json('PUT', `/${encodeURIComponent(bucket)}/${encodeKey(key)}`, { headers: metadataHeaders(metadata), body })
    return remoteObjectFrom(this.#result(envelope, 'object'))
  }

  async createUpload (bucket: string, key: string, metadata: WriteMetadata): Promise<PartUpload> {
    const target = `/${encodeURIComponent(bucket)}/${encodeKey(key)}`
    const created = await this.#json('POST', `${target}?action=mpu-create`, { headers: metadataHeaders(metadata) })
    const uploadId = encodeURIComponent(String(this.#result<{ uploadId: string }>(created, 'object').uploadId))
    return {
      uploadPart: async (partNumber: number, body: Readable): Promise<UploadedPart> => {
        const envelope = await this.#json('PUT', `${target}?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=${partNumber}`, { body })
        return this.#result<UploadedPart>(envelope, 'object')
      },
      complete: async (parts: UploadedPart[]): Promise<RemoteObject> => {
        const envelope = await this.#json('POST', `${target}?action=mpu-complete&uploadId=${uploadId}`, { body: { parts } })
        return remoteObjectFrom(this.#result(envelope, 'object'))
      },
      abort: async (): Promise<void> => {
        (await this.#request('DELETE', `${target}?action=mpu-abort&uploadId=${uploadId}`)).resume()
      }
    }
  }

  async delete (bucket: string, keys: string[]): Promise<void> {
    if (keys.length === 0) return
    await this.#json('POST', `/${encodeURIComponent(bucket)}?delete`, { body: { keys } })
  }

  async close (): Promise<void> {
    this.#agent.destroy()
  }
}

/** A small answer (a JSON envelope) read whole. */
async function readAll (response: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of response) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}
