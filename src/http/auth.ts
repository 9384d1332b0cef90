/**
 * Who may do what (contract, "Who may do what").
 *
 * - Reads of a public bucket (or through a public route) need nothing.
 * - Everything else needs `Authorization: Bearer <token>`: none answers 401
 *   with `WWW-Authenticate: Bearer`, a wrong one 403.
 * - With no token configured, a server listening on loopback only accepts
 *   everything (a developer's machine); one listening elsewhere refuses
 *   writes and private reads, since nobody could be told apart.
 *
 * Tokens are compared in constant time over their SHA-256 digests, so
 * neither the content nor the length of the configured token leaks through
 * timing.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import { DoorError } from './errors.js'
import { isLoopbackName } from './site-guard.js'

export interface AccessPolicy {
  /** The bearer token, or null when none is configured. */
  token: string | null
  /** True when the server listens on a loopback address only. */
  loopbackOnly: boolean
}

/** Whether a listen address (`--host`) is loopback only: `localhost`, 127.0.0.0/8, `::1`, `::ffff:127.x` (through node:net). */
export function isLoopbackHost (host: string): boolean {
  const lower = host.trim().toLowerCase()
  return lower === 'ip6-localhost' || isLoopbackName(lower)
}

function digest (value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

/** Whether a request may do what needs credentials (`requireCredentials` would let it through), without an answer. */
export function holdsCredentials (policy: AccessPolicy, authorization: string | undefined): boolean {
  try {
    requireCredentials(policy, authorization)
    return true
  } catch {
    return false
  }
}

/** Throws the door's 401/403 unless the request may do what needs credentials. */
export function requireCredentials (policy: AccessPolicy, authorization: string | undefined): void {
  if (policy.token === null) {
    if (policy.loopbackOnly) return
    throw new DoorError('WritesRefused')
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')
  if (match === null) throw new DoorError('MissingToken', undefined, { 'www-authenticate': 'Bearer' })
  if (!timingSafeEqual(digest(match[1]), digest(policy.token))) throw new DoorError('InvalidToken')
}
