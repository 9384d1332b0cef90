/**
 * What every route module of the management API is given: the state store,
 * the bucket registry shared with the gateway, and the clock.
 */
import { randomBytes } from 'node:crypto'
import type { BucketRegistry, Queues } from '../bucket/index.js'
import type { ManagementStore } from './store.js'

export interface ManagementContext {
  store: ManagementStore
  registry: BucketRegistry
  /** The queues event notifications are delivered to. */
  queues: Queues
  now: () => Date
  /** Buckets public for this run (`serve --public`), whatever their settings say. */
  publicBuckets: ReadonlySet<string>
}

/** Identifiers in the service's form: 32 lowercase hex digits. */
export function newId (): string {
  return randomBytes(16).toString('hex')
}

export const idFormat = /^[0-9a-f]{32}$/
