/**
 * The response envelope of every management API answer, and the
 * timestamps it carries (ISO 8601, UTC, with microseconds, as the service
 * writes them).
 */
import type { ManagementError } from './errors.js'
import type { ResultInfo } from './query.js'

export interface ManagementEnvelope<T> {
  success: boolean
  errors: Array<{ code: number, message: string, error_chain?: Array<{ code: number, message: string }> }>
  messages: Array<{ code: number, message: string }>
  result: T
  result_info?: ResultInfo | Record<string, unknown>
}

export function success<T> (result: T, resultInfo?: ResultInfo | Record<string, unknown>): ManagementEnvelope<T> {
  const envelope: ManagementEnvelope<T> = { success: true, errors: [], messages: [], result }
  if (resultInfo !== undefined) envelope.result_info = resultInfo
  return envelope
}

export function failure (err: ManagementError): ManagementEnvelope<null> {
  const entry: ManagementEnvelope<null>['errors'][number] = { code: err.code, message: err.message }
  if (err.chain !== undefined) entry.error_chain = err.chain
  return { success: false, errors: [entry], messages: [], result: null }
}

/** `2024-05-01T12:00:00.123000Z`: milliseconds are all a Date holds. */
export function timestamp (date: Date): string {
  return date.toISOString().replace(/Z$/, '000Z')
}
