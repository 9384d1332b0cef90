/**
 * How the console talks to the server: the gateway's public HTTP routes
 * (buckets at `/`, objects at `/{bucket}/{key}`) and the management API
 * under `/client/v4`. Nothing private: any client could do the same.
 *
 * The token, when the server asks for one, lives in sessionStorage (gone
 * when the tab closes) and goes out as `Authorization: Bearer`. The
 * management API wants credentials even on a server without a token (it
 * then accepts any), so it gets a placeholder in that case. JSON bodies are
 * always sent as `application/json`.
 */

const tokenKey = 'fsbucket-console-token'
/** The hosted API's account id is not checked by fsbucket. */
const account = 'local'

export const tokens = {
  get (): string | null { return sessionStorage.getItem(tokenKey) },
  set (token: string): void { sessionStorage.setItem(tokenKey, token) },
  clear (): void { sessionStorage.removeItem(tokenKey) }
}

export class ApiError extends Error {
  /** `result` of a refused answer: what a request that failed part way did (a bulk delete's `{deleted, kept}`), else null. */
  constructor (readonly status: number, readonly code: number | null, message: string, readonly result: unknown = null) {
    super(message)
  }
}

/** Token errors of the gateway (40100 none, 40300 wrong, 40301 none configured: a scoped token only) and of the management API (9106, 9109, 10000). */
export function needsToken (err: unknown): boolean {
  return err instanceof ApiError && (err.status === 401 || [40300, 40301, 9109, 10000].includes(err.code ?? 0))
}

/** Whether the server was started without a token and listens beyond loopback: only a scoped token opens it (40301). */
export function scopedTokensOnly (err: unknown): boolean {
  return err instanceof ApiError && err.code === 40301
}

/**
 * What a view already drawn does with a refusal of a later request (a
 * change, a listing again): one for want of a token (`needsToken`) draws
 * the route again, through the event main.ts routes on (a view cannot
 * import its importer), and the route's first request then fails where
 * main.ts asks for the token; once it is given, the view is drawn afresh.
 * A view the user has left (`shown` no longer in the page) asks nothing.
 * Answers whether the refusal was of that kind, and so taken care of.
 */
export function askForTokenAgain (err: unknown, shown: Node): boolean {
  if (!needsToken(err)) return false
  if (shown.isConnected) window.dispatchEvent(new HashChangeEvent('hashchange'))
  return true
}

export interface ApiAnswer<T> {
  success: boolean
  errors: Array<{ code: number, message: string }>
  result: T
  result_info?: Record<string, unknown>
}

export function authHeaders (): Record<string, string> {
  const token = tokens.get()
  return token === null ? {} : { authorization: `Bearer ${token}` }
}

/** The error a refused answer carries: its envelope's first error (and its `result`), or else its status line. */
export async function failure (response: Response): Promise<ApiError> {
  let code: number | null = null
  let message = `${response.status} ${response.statusText}`
  let result: unknown = null
  try {
    const body = await response.json() as ApiAnswer<unknown>
    if (body.errors?.[0] !== undefined) {
      code = body.errors[0].code
      message = body.errors[0].message
    }
    result = body.result ?? null
  } catch {}
  return new ApiError(response.status, code, message, result)
}

async function call<T> (url: string, init: RequestInit, headers: Record<string, string>): Promise<ApiAnswer<T>> {
  const response = await fetch(url, { ...init, headers: { accept: 'application/json', ...headers, ...(init.headers as Record<string, string> | undefined) } })
  if (!response.ok) throw await failure(response)
  if (response.status === 204) return { success: true, errors: [], result: null as T }
  return await response.json() as ApiAnswer<T>
}

export function jsonBody (value: unknown): RequestInit {
  return { body: JSON.stringify(value), headers: { 'content-type': 'application/json' } }
}

/** What a gateway route answers a request without credentials: null when it takes it, else the refusal. */
export async function withoutToken (path: string): Promise<ApiError | null> {
  return await call(path, {}, {}).then(() => null, (err: unknown) => err instanceof ApiError ? err : null)
}

/** A gateway route (`/`, `/{bucket}...`). */
export async function gateway<T> (path: string, init: RequestInit = {}): Promise<ApiAnswer<T>> {
  return await call<T>(path, init, authHeaders())
}

/** A management API route under `/client/v4/accounts/{account}/r2/buckets`. */
export async function management<T> (path: string, init: RequestInit = {}): Promise<ApiAnswer<T>> {
  const token = tokens.get() ?? 'console'
  return await call<T>(`/client/v4/accounts/${account}/r2/buckets${path}`, init, { authorization: `Bearer ${token}` })
}

/** A management API route of the account (`/client/v4/accounts/{account}...`): queues, event notifications. */
export async function accountApi<T> (path: string, init: RequestInit = {}): Promise<ApiAnswer<T>> {
  const token = tokens.get() ?? 'console'
  return await call<T>(`/client/v4/accounts/${account}${path}`, init, { authorization: `Bearer ${token}` })
}

/** A management API route outside the account's buckets (`/client/v4/user/tokens...`). */
export async function userApi<T> (path: string, init: RequestInit = {}): Promise<ApiAnswer<T>> {
  const token = tokens.get() ?? 'console'
  return await call<T>(`/client/v4${path}`, init, { authorization: `Bearer ${token}` })
}

/**
 * Whether a browser can name the object in a URL path at all. A key that is
 * `.` or `..` whole has no spelling a URL keeps: `%2E` is collapsed too, and
 * `/bucket/..` becomes `/`. Such objects are read with the CLI, the S3 port
 * or `curl --path-as-is`, and deleted through `POST /{bucket}?delete`.
 */
export function hasObjectUrl (key: string): boolean {
  return key !== '.' && key !== '..'
}

/** Whether a key has a `.` or `..` segment, which URLs (and so browsers) collapse. */
export function hasDotSegment (key: string): boolean {
  return key.split('/').some(s => s === '.' || s === '..')
}

/**
 * The URL path of an object: each key segment percent-encoded, so `/` stays
 * a separator and `#`, `?`, `%`, spaces and non-ASCII are data. A key with a
 * `.` or `..` segment is encoded whole (`%2F` for `/`), since URLs collapse
 * dot segments; the gateway decodes the path once either way.
 */
export function objectPath (bucket: string, key: string): string {
  const encoded = hasDotSegment(key)
    ? encodeURIComponent(key)
    : key.split('/').map(encodeURIComponent).join('/')
  return `/${encodeURIComponent(bucket)}/${encoded}`
}

export interface ListedObject {
  key: string
  size: number
  etag: string
  uploaded: string
  httpMetadata: Record<string, string | undefined>
  customMetadata: Record<string, string>
  checksums: Record<string, string>
  storageClass: string
}

export interface Listing {
  objects: ListedObject[]
  cursor: string | null
  truncated: boolean
  folders: string[]
}

export async function listObjects (bucket: string, prefix: string, cursor: string | null, limit: number): Promise<Listing> {
  const query = new URLSearchParams({ prefix, delimiter: '/', limit: String(limit), include: 'httpMetadata,customMetadata' })
  if (cursor !== null) query.set('cursor', cursor)
  const answer = await gateway<ListedObject[]>(`/${encodeURIComponent(bucket)}?${query.toString()}`)
  const info = answer.result_info as { cursor: string | null, truncated: boolean, delimitedPrefixes: string[] }
  return { objects: answer.result, cursor: info.cursor, truncated: info.truncated, folders: info.delimitedPrefixes }
}

export interface BucketSummary { name: string, creation_date: string, storage_class: string }

export async function listBuckets (): Promise<BucketSummary[]> {
  const buckets: BucketSummary[] = []
  let cursor = ''
  do {
    const query = new URLSearchParams({ per_page: '1000' })
    if (cursor !== '') query.set('cursor', cursor)
    const answer = await management<{ buckets: BucketSummary[] }>(`?${query.toString()}`)
    buckets.push(...answer.result.buckets)
    cursor = String(answer.result_info?.cursor ?? '')
  } while (cursor !== '')
  return buckets
}

export async function isPublic (bucket: string): Promise<boolean> {
  return (await management<{ enabled: boolean }>(`/${encodeURIComponent(bucket)}/domains/managed`)).result.enabled
}
