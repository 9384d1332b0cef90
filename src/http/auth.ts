/**
 * Who may do what (contract, "Who may do what").
 *
 * - Reads of a public bucket (or through a public route) need nothing.
 * - Everything else needs `Authorization: Bearer <token>`: none answers 401
 *   with `WWW-Authenticate: Bearer`, a wrong one 403.
 * - With no token configured, a server listening on loopback only accepts
 *   everything (a developer's machine); one listening elsewhere refuses
 *   writes and private reads, since nobody could be told apart.
 * - A bearer that is a scoped token (`fsbucket token create`) is that
 *   token's principal, with its permission and buckets, whatever else is
 *   configured; the configured token (and the tokenless loopback mode) is
 *   the admin. What a principal may do is decided by the engine's
 *   `authorize`; this module only says who the request is.
 *
 * Tokens are compared in constant time over their SHA-256 digests, so
 * neither the content nor the length of the configured token leaks through
 * timing.
 */
import { timingSafeEqual } from 'node:crypto'
import { ADMIN, sha256, type Principal, type TokenDirectory } from '../bucket/index.js'
import { DoorError } from './errors.js'
import { isLoopbackName } from './site-guard.js'

export interface AccessPolicy {
  /** The bearer token, or null when none is configured. */
  token: string | null
  /** True when the server listens on a loopback address only. */
  loopbackOnly: boolean
  /** The scoped tokens (the registry's), or none. */
  tokens?: Pick<TokenDirectory, 'byValue'> | null
}

/** Whether a listen address (`--host`) is loopback only: `localhost`, 127.0.0.0/8, `::1`, `::ffff:127.x` (through node:net). */
export function isLoopbackHost (host: string): boolean {
  const lower = host.trim().toLowerCase()
  return lower === 'ip6-localhost' || isLoopbackName(lower)
}

/** Whether a request holds credentials (`principalOf` would let it through), without an answer. */
export async function holdsCredentials (policy: AccessPolicy, authorization: string | undefined): Promise<boolean> {
  try {
    await principalOf(policy, authorization)
    return true
  } catch {
    return false
  }
}

/** Who the request is, or the door's 401/403 when it may do nothing that needs credentials. */
export async function principalOf (policy: AccessPolicy, authorization: string | undefined): Promise<Principal> {
  const bearer = bearerOf(authorization)
  const known = knownPrincipal(policy, bearer)
  if (known !== undefined) return known
  const found = bearer === null ? null : await policy.tokens?.byValue(bearer) ?? null
  if (found !== null && 'expired' in found) throw new DoorError('InvalidToken', 'It expired.')
  if (found !== null && 'revoked' in found) throw new DoorError('InvalidToken', 'It was revoked.')
  return found !== null ? found.principal : withoutScopedToken(policy, bearer)
}

/** `principalOf` at once, when it needs no look in the scoped tokens (the configured token, or none given); undefined otherwise. */
export function principalNow (policy: AccessPolicy, authorization: string | undefined): Principal | undefined {
  return knownPrincipal(policy, bearerOf(authorization))
}

/** The configured token's digest, made once per policy (and again if its token were replaced). */
const configuredDigests = new WeakMap<AccessPolicy, { token: string, digest: Buffer }>()

function configuredDigest (policy: AccessPolicy, token: string): Buffer {
  const kept = configuredDigests.get(policy)
  if (kept?.token === token) return kept.digest
  const digest = sha256(token)
  configuredDigests.set(policy, { token, digest })
  return digest
}

function bearerOf (authorization: string | undefined): string | null {
  return authorization === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1] ?? null
}

/** The principal of `bearer` (null: none given) unless it may be a scoped token (undefined: the directory is asked). */
function knownPrincipal (policy: AccessPolicy, bearer: string | null): Principal | undefined {
  // The configured token first, compared in constant time: it is no scoped token, so the directory need not look for it.
  if (bearer !== null && policy.token !== null && timingSafeEqual(sha256(bearer), configuredDigest(policy, policy.token))) return ADMIN
  if (bearer !== null && policy.tokens != null) return undefined
  return withoutScopedToken(policy, bearer)
}

/** Who a request is that holds neither the configured token nor a scoped one. */
function withoutScopedToken (policy: AccessPolicy, bearer: string | null): Principal {
  if (policy.token === null) {
    if (policy.loopbackOnly) return ADMIN
    throw new DoorError('WritesRefused')
  }
  if (bearer === null) throw new DoorError('MissingToken', undefined, { 'www-authenticate': 'Bearer' })
  // Neither the configured token (compared above) nor a scoped one.
  throw new DoorError('InvalidToken')
}
