/**
 * Credentials of the management API and the check of each request.
 *
 * A request carries `Authorization: Bearer <token>` or the key pair
 * `X-Auth-Email` + `X-Auth-Key`. Configured credentials come from the
 * command line, the environment (FSBUCKET_API_TOKEN, FSBUCKET_API_EMAIL and
 * FSBUCKET_API_KEY) or `<dataDir>/.mgmt/credentials.json`
 * (`{"tokens": ["..."], "keys": [{"email": "...", "key": "..."}]}`).
 *
 * Secrets are compared in constant time (over SHA-256 digests, so lengths
 * leak nothing either) and never appear in an error message or a log line.
 *
 * A token that is well formed but unknown answers as the hosted API does:
 * 10000 "Authentication error" on the account's resources (`/accounts/...`,
 * which is what makes wrangler print its authentication error), 1000
 * "Invalid API Token" on `/user/tokens/verify`, 9109 "Invalid access token"
 * elsewhere.
 *
 * With no credentials configured, `open` decides: the composition root sets
 * it while the server listens on loopback only, and then any well-formed
 * credentials are accepted; otherwise every request is refused (10000).
 *
 * A bearer that is a scoped token (`fsbucket token create`, `POST
 * /user/tokens`) is that token's principal, whatever else is configured
 * (so is such a token sent as the open server's `X-Auth-Key`);
 * the configured credentials are the admin. An expired scoped token is a
 * wrong token. What the principal may do is the engine's `authorize`'s to
 * say (plugin.ts asks it).
 */
import { timingSafeEqual } from 'node:crypto'
import { ADMIN, sha256, type Principal, type StateDocuments, type TokenDirectory } from '../bucket/index.js'
import { ManagementError, ManagementErrors } from './errors.js'

export interface ApiKey {
  email: string
  key: string
}

export interface ManagementCredentials {
  tokens: string[]
  keys: ApiKey[]
  /** With no tokens and no keys: accept any well-formed credentials (loopback only). */
  open?: boolean
}

type Headers = Record<string, string | string[] | undefined>

function header (headers: Headers, name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

function sameSecret (given: string, configured: string): boolean {
  return timingSafeEqual(sha256(given), sha256(configured))
}

/** Every configured secret is compared, so timing does not tell which one nearly matched. */
function anyMatches<T> (configured: T[], matches: (candidate: T) => boolean): boolean {
  let found = false
  for (const candidate of configured) found = matches(candidate) || found
  return found
}

// Tokens of the hosted API are URL-safe base64 (40 characters); locally any printable token is allowed.
const tokenFormat = /^[\x21-\x7e]{1,1024}$/
const emailFormat = /^[^\s@]+@[^\s@]+$/

/** How the hosted API names a wrong token, by the path it was sent to. */
function wrongTokenError (url: string, why?: string): ManagementError {
  const path = url.split('?')[0]
  const name = /\/user\/tokens\/verify\/?$/.test(path) ? 'InvalidApiToken' : /\/accounts(\/|$)/.test(path) ? 'AuthenticationError' : 'InvalidAccessToken'
  // An expired or revoked token is refused as a wrong one, its message saying which, as the HTTP routes say it.
  return new ManagementError(name, why === undefined ? undefined : `${ManagementErrors[name].message.replace(/\.?$/, '.')} ${why}`)
}

/** The principal of the scoped token `value` is, null when it is none; an expired or revoked one is refused as a wrong token. */
async function scopedPrincipal (tokens: Pick<TokenDirectory, 'byValue'> | null, value: string, url: string): Promise<Principal | null> {
  const scoped = tokens === null ? null : await tokens.byValue(value)
  if (scoped === null) return null
  if ('expired' in scoped) throw wrongTokenError(url, 'It expired.')
  if ('revoked' in scoped) throw wrongTokenError(url, 'It was revoked.')
  return scoped.principal
}

/** Throws the ManagementError the request deserves, or returns who the request is when its credentials are good. */
export async function authenticate (headers: Headers, credentials: ManagementCredentials, url = '', tokens: Pick<TokenDirectory, 'byValue'> | null = null): Promise<Principal> {
  const authorization = header(headers, 'authorization')
  const email = header(headers, 'x-auth-email')
  const key = header(headers, 'x-auth-key')
  const configured = credentials.tokens.length + credentials.keys.length > 0

  if (authorization !== undefined) {
    const match = /^Bearer (.+)$/.exec(authorization)
    if (match === null || !tokenFormat.test(match[1])) {
      throw new ManagementError('InvalidRequestHeaders', undefined, [{ code: 6111, message: 'Invalid format for Authorization header' }])
    }
    // The configured tokens first (constant-time comparisons): they are no scoped tokens, so the directory need not look for them.
    if (configured && anyMatches(credentials.tokens, t => sameSecret(match[1], t))) return ADMIN
    const scoped = await scopedPrincipal(tokens, match[1], url)
    if (scoped !== null) return scoped
    if (!configured) {
      if (credentials.open === true) return ADMIN
      throw new ManagementError('AuthenticationError')
    }
    // Neither a configured token (compared above) nor a scoped one.
    throw wrongTokenError(url)
  }

  if (email === undefined && key === undefined) throw new ManagementError('MissingAuthHeaders')
  if (email === undefined || !emailFormat.test(email)) {
    throw new ManagementError('InvalidRequestHeaders', undefined, [{ code: 6102, message: 'Invalid format for X-Auth-Email header' }])
  }
  if (key === undefined || !tokenFormat.test(key)) {
    throw new ManagementError('InvalidRequestHeaders', undefined, [{ code: 6103, message: 'Invalid format for X-Auth-Key header' }])
  }
  if (!configured) {
    // A scoped token sent as the key is still that token, as it is as a bearer: an open server takes any other key.
    const scoped = await scopedPrincipal(tokens, key, url)
    if (scoped !== null) return scoped
    if (credentials.open === true) return ADMIN
    throw new ManagementError('AuthenticationError')
  }
  const ok = anyMatches(credentials.keys, k => sameSecret(email.toLowerCase(), k.email.toLowerCase()) && sameSecret(key, k.key))
  if (!ok) throw new ManagementError('AuthenticationError')
  return ADMIN
}

export interface CredentialSources {
  token?: string
  email?: string
  key?: string
  env?: NodeJS.ProcessEnv
  /** The management API's state, holding `credentials.json` (on the filesystem `<dataDir>/.mgmt/credentials.json`). */
  state?: StateDocuments
}

/**
 * The key pair of `--api-email` and `--api-key`, or null for neither (empty
 * is none). One without the other is refused, as half an S3 key pair is
 * (s3/auth.ts): ignored, it would leave the API without the credentials its
 * operator meant to set.
 */
export function managementKeyPair (email: string | undefined, key: string | undefined): ApiKey | null {
  const hasEmail = email !== undefined && email !== ''
  const hasKey = key !== undefined && key !== ''
  if (hasEmail !== hasKey) throw new TypeError('--api-email and --api-key (FSBUCKET_API_EMAIL, FSBUCKET_API_KEY) go together')
  return hasEmail && hasKey ? { email, key } : null
}

/** Merges credentials from flags, the environment and the state's `credentials.json`. */
export async function loadCredentials (sources: CredentialSources): Promise<ManagementCredentials> {
  const env = sources.env ?? {}
  const tokens: string[] = []
  const keys: ApiKey[] = []
  const token = sources.token ?? env.FSBUCKET_API_TOKEN
  if (token !== undefined && token !== '') tokens.push(token)
  const pair = managementKeyPair(sources.email ?? env.FSBUCKET_API_EMAIL, sources.key ?? env.FSBUCKET_API_KEY)
  if (pair !== null) keys.push(pair)
  if (sources.state !== undefined) {
    const file = await sources.state.read<Partial<ManagementCredentials>>('credentials.json', {})
    for (const t of file.tokens ?? []) if (typeof t === 'string' && t !== '') tokens.push(t)
    for (const k of file.keys ?? []) if (typeof k?.email === 'string' && typeof k?.key === 'string') keys.push({ email: k.email, key: k.key })
  }
  return { tokens, keys }
}

/** The `serve` flags of the management API (cli.ts defines them; here so a server process loads no command line). */
export interface ManagementServeOptions {
  data: string
  token?: string
  apiToken?: string
  apiEmail?: string
  apiKey?: string
}

/** The credentials the management API checks, for a server started with these options. */
export async function managementCredentials (options: ManagementServeOptions, loopbackOnly: boolean, state: StateDocuments): Promise<ManagementCredentials> {
  const loaded = await loadCredentials({ token: options.apiToken, email: options.apiEmail, key: options.apiKey, state })
  if (options.token !== undefined && options.token !== '') loaded.tokens.push(options.token)
  return { ...loaded, open: loopbackOnly }
}
