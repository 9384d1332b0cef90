/**
 * What the signed-in credentials may do, so that the console offers only
 * that instead of failing on a click. Asked once per sign-in from the
 * management API's `GET /user/tokens/verify`, which answers the
 * credentials' `permission` and `buckets` (the configured token: admin on
 * every bucket). The rule below restates the engine's `authorize`
 * (src/bucket/access.ts) for the actions the console offers; the server
 * still decides every request, so a wrong guess here shows a refusal, never
 * grants anything.
 *
 * When verifying fails (a server whose management API takes other
 * credentials than the gateway), nothing is known: the console offers
 * everything, as it did before it asked, and the server refuses what it
 * must.
 */
import { userApi } from './api.js'

export type Permission = 'admin-read-write' | 'admin-read-only' | 'object-read-write' | 'object-read-only'

/** What the console offers: bucket settings, their changes, objects, their changes, and the account (tokens). */
export type ConsoleAction = 'bucket:read' | 'bucket:write' | 'object:read' | 'object:write' | 'account:read' | 'account:write'

interface Scope {
  permission: Permission
  /** null: every bucket. */
  buckets: string[] | null
}

const everything: Scope = { permission: 'admin-read-write', buckets: null }
let current: Scope = everything

/** Asks the server who the signed-in credentials are (`everything` when it cannot say). */
export async function loadScope (): Promise<void> {
  try {
    const answer = await userApi<{ permission?: Permission, buckets?: string[] | null }>('/user/tokens/verify')
    current = answer.result.permission === undefined ? everything : { permission: answer.result.permission, buckets: answer.result.buckets ?? null }
  } catch {
    current = everything
  }
}

/** Whether the signed-in credentials may do `action` (on `bucket`): the engine's rule, for the console's actions. */
export function can (action: ConsoleAction, bucket?: string): boolean {
  const { permission, buckets } = current
  const admin = permission.startsWith('admin-')
  const write = permission.endsWith('-read-write')
  if (action.endsWith(':write') && !write) return false
  if (!action.startsWith('object:') && !admin) return false
  return bucket === undefined || buckets === null || buckets.includes(bucket)
}
