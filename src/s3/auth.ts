/**
 * Who may use the S3 API.
 *
 * - Key pairs come from `--s3-access-key-id`/`--s3-secret-access-key`
 *   (FSBUCKET_S3_ACCESS_KEY_ID / FSBUCKET_S3_SECRET_ACCESS_KEY); every
 *   signed request must verify against one of them.
 * - With none configured, a server with no gateway token listening on
 *   loopback only (a developer's machine) accepts the development pair
 *   below, printed at start, and also unsigned requests (as the HTTP routes
 *   accept requests without a token there).
 * - Otherwise only anonymous GET/HEAD of public buckets' objects and
 *   listings are answered; everything else is AccessDenied.
 * A bucket is public by its settings, or for the run (`serve --public`),
 * as on the HTTP routes; anonymous reads of it are answered whatever the
 * rest of the policy.
 */
import { ADMIN, sessionParent, type Principal, type TokenDirectory } from '../bucket/index.js'
import { S3Error } from './errors.js'
import type { S3Credential } from './sigv4.js'

/** The documented development pair (docs/s3.md). */
export const DEVELOPMENT_CREDENTIAL: Readonly<S3Credential> = Object.freeze({
  accessKeyId: 'fsbucket-dev',
  secretAccessKey: 'fsbucket-dev-secret'
})

export interface S3AccessPolicy {
  credentials: S3Credential[]
  /** Unsigned requests may do everything (development mode). */
  anonymousWrites: boolean
  /** Buckets served publicly for this run (`serve --public`), beside those public by their settings. */
  publicBuckets: ReadonlySet<string>
}

/** The policy from the configured pair (if any), the gateway token and the listening host. */
export function s3AccessPolicy (configured: S3Credential | null, gatewayToken: string | null, loopbackOnly: boolean, publicBuckets: Iterable<string> = []): S3AccessPolicy {
  const shared = { publicBuckets: new Set(publicBuckets) }
  if (configured !== null) return { credentials: [configured], anonymousWrites: false, ...shared }
  if (gatewayToken === null && loopbackOnly) return { credentials: [{ ...DEVELOPMENT_CREDENTIAL }], anonymousWrites: true, ...shared }
  return { credentials: [], anonymousWrites: false, ...shared }
}

/** A key pair the S3 port knows: its secret, and who signs with it. */
export interface KnownKey {
  secretAccessKey: string
  principal: Principal
}

/**
 * The key pairs this port verifies: the configured (or development) pair,
 * which is the admin, and the scoped tokens' derived pairs (access key id =
 * token id, secret = SHA-256 of the token value), each its token's
 * principal. An expired token's pair is unknown. A request carrying a
 * session token is temporary credentials: the token must be one made under
 * a live parent for this access key id (InvalidToken otherwise,
 * ExpiredToken past its time).
 */
export function keyLookup (policy: S3AccessPolicy, tokens: Pick<TokenDirectory, 'byAccessKey' | 'openSession'> | null): (accessKeyId: string, sessionToken?: string) => Promise<KnownKey | undefined> {
  const configuredKey = configuredKeys(policy)
  return async (accessKeyId, sessionToken) => {
    if (sessionToken !== undefined) {
      const parent = sessionParent(sessionToken)
      const opened = parent === null || tokens === null ? 'invalid' : await tokens.openSession(sessionToken, accessKeyId, parent)
      if (opened === 'expired') throw new S3Error('ExpiredToken')
      if (opened === 'invalid') throw new S3Error('InvalidToken')
      return opened
    }
    const configured = configuredKey(accessKeyId)
    if (configured !== undefined) return configured
    const found = tokens === null ? null : await tokens.byAccessKey(accessKeyId)
    if (found === null || 'expired' in found) return undefined
    return { secretAccessKey: found.record.secretAccessKey, principal: found.principal }
  }
}

/** `keyLookup` of the configured pairs alone, answered at once: undefined for any other key, and with a session token. */
export function configuredKeys (policy: S3AccessPolicy): (accessKeyId: string, sessionToken?: string) => KnownKey | undefined {
  const secrets = new Map(policy.credentials.map(c => [c.accessKeyId, c.secretAccessKey]))
  return (accessKeyId, sessionToken) => {
    const configured = sessionToken === undefined ? secrets.get(accessKeyId) : undefined
    return configured === undefined ? undefined : { secretAccessKey: configured, principal: ADMIN }
  }
}

/** The configured pair from the serve options; both halves or neither. */
export function s3CredentialFrom (options: { s3AccessKeyId?: string, s3SecretAccessKey?: string }): S3Credential | null {
  const { s3AccessKeyId, s3SecretAccessKey } = options
  if (s3AccessKeyId === undefined && s3SecretAccessKey === undefined) return null
  if (s3AccessKeyId === undefined || s3SecretAccessKey === undefined || s3AccessKeyId === '' || s3SecretAccessKey === '') {
    throw new TypeError('--s3-access-key-id and --s3-secret-access-key (FSBUCKET_S3_ACCESS_KEY_ID, FSBUCKET_S3_SECRET_ACCESS_KEY) go together')
  }
  return { accessKeyId: s3AccessKeyId, secretAccessKey: s3SecretAccessKey }
}

/**
 * The start-up log line of the S3 listener: where it listens and which
 * credentials work. The development pair is printed whole (it is public);
 * a configured secret never is.
 */
export function s3StartupNote (policy: S3AccessPolicy, host: string, port: number, scheme: 'http' | 'https' = 'http'): [Record<string, unknown>, string] {
  const endpoint = `${scheme}://${host.includes(':') ? `[${host}]` : host}:${port}`
  if (policy.anonymousWrites) {
    return [{ endpoint, accessKeyId: DEVELOPMENT_CREDENTIAL.accessKeyId, secretAccessKey: DEVELOPMENT_CREDENTIAL.secretAccessKey, region: 'auto' },
      'S3 API: development key pair (no token, loopback only)']
  }
  if (policy.credentials.length === 0) {
    return [{ endpoint }, 'S3 API: no key pair configured (set --s3-access-key-id and --s3-secret-access-key); only public buckets can be read']
  }
  return [{ endpoint, accessKeyId: policy.credentials[0].accessKeyId }, 'S3 API']
}
