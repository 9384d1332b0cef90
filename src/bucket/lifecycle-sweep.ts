/**
 * A bucket's lifecycle rules, carried out over its store: objects expired,
 * objects moved to InfrequentAccess, uploads under a rule's prefix aborted.
 * The store's sweep runs this while it holds its sweep lock, so one
 * process at a time does it for a bucket, across every process or gateway
 * sharing the store.
 *
 * Cost: each key range a rule covers is walked once, in key order, a page
 * at a time (`objectSweepPrefixes`: nested prefixes are not walked twice),
 * so a sweep reads each object under some rule once, whatever the number
 * of rules, and nothing outside every rule's prefix. Expired objects are
 * removed a batch at a time through the store's ordinary `delete`, with
 * the cause `lifecycle` (what a lock check or an event emitter in the
 * store's delete commit sees) and the version judged expired: an object
 * rewritten between the walk and the deletion is kept.
 *
 * A transition is a `copy` of the object onto itself with the cause
 * `transition`: bytes, etag, metadata and `uploaded` stay, the storage
 * class becomes InfrequentAccess and the record gets a new version (the
 * copy's atomic commit is what keeps a concurrent overwrite from being
 * undone). A lock does not hold it back (it refuses deletes and
 * overwrites, and goes on retaining the object by its upload time), and no
 * event reports it: the hosted service reports new objects and deletions.
 */
import { actionAt, objectSweepPrefixes, transitionAt, uploadAbortDue, uploadSweepPrefixes, type LifecycleRule } from './lifecycle.js'
import { withFields, type BucketStore, type StoredObject } from './port.js'
import { randomHex } from './random.js'
import type { SweepReport } from './types.js'
import { MAX_SWEEP_INTERVAL_MS } from './limits.js'

/** Calls `tick` every `ms` on a timer that keeps no process alive; a delay Node's timers cannot keep is a RangeError, not a sweep a millisecond. */
export function sweepTimer (ms: number, tick: () => void): NodeJS.Timeout {
  if (!(ms > 0 && ms <= MAX_SWEEP_INTERVAL_MS)) throw new RangeError(`sweepIntervalMs must be from 1 to ${MAX_SWEEP_INTERVAL_MS} ms (got ${ms})`)
  const timer = setInterval(tick, ms)
  timer.unref()
  return timer
}

/** A report of a sweep of many buckets, which `addSweepReport` adds each bucket's to. */
export function emptySweepReport (): Required<SweepReport> {
  return { abortedUploads: 0, removedLeftovers: 0, expiredObjects: 0, transitionedObjects: 0, skippedBuckets: 0 }
}

export function addSweepReport (total: Required<SweepReport>, report: SweepReport | undefined): void {
  total.abortedUploads += report?.abortedUploads ?? 0
  total.removedLeftovers += report?.removedLeftovers ?? 0
  total.expiredObjects += report?.expiredObjects ?? 0
  total.transitionedObjects += report?.transitionedObjects ?? 0
  total.skippedBuckets += report?.skippedBuckets ?? 0
}

/** Objects read per page of the walk, and ids removed per `delete` call. */
const PAGE = 1000

export interface LifecycleSweepReport {
  expiredObjects: number
  transitionedObjects: number
  abortedUploads: number
}

/**
 * Carries out `rules` as if the clock read `now`; bucket locks are judged at
 * `locksAt`, which the engine makes the earlier of `now` and its own clock:
 * a sweep asked to look ahead (`fsbucket sweep --now`) never releases a lock
 * before its time. `rulesNow`, when given, reads the rules as they stand:
 * each batch is judged again by them just before it is acted on, so what a
 * rule changed meanwhile no longer asks is left alone (the walk keeps the
 * key ranges of `rules`; a rule added meanwhile waits for the next sweep).
 */
export async function sweepLifecycle (
  store: BucketStore, rules: LifecycleRule[], now: number, locksAt = now, rulesNow: () => Promise<LifecycleRule[]> = async () => rules
): Promise<LifecycleSweepReport> {
  const report: LifecycleSweepReport = { expiredObjects: 0, transitionedObjects: 0, abortedUploads: 0 }
  let doomed = new Map<string, StoredObject>()
  const removeDoomed = async (): Promise<void> => {
    if (doomed.size === 0) return
    const current = await rulesNow()
    const batch = new Map([...doomed].filter(([id, object]) => actionAt(current, id, object.uploaded, object.storageClass, now)?.action === 'expire'))
    doomed = new Map()
    if (batch.size === 0) return
    const versions = new Map<string, string>()
    for (const [id, object] of batch) versions.set(id, object.version)
    // A bucket lock wins over an expiry: the store keeps what a rule retains at `locksAt` and names it.
    // An object rewritten since it was judged stays too (`versions`): only what the store removed counts.
    const { removed, retained } = await store.delete([...batch.keys()], { cause: 'lifecycle', versions, now: locksAt })
    report.expiredObjects += removed
    // What a lock keeps still moves to InfrequentAccess when a transition is due (a lock holds back no transition).
    for (const id of retained) {
      const object = batch.get(id)
      if (object !== undefined && transitionAt(current, id, object.uploaded, object.storageClass, now) !== null && await transition(store, id, object)) {
        report.transitionedObjects++
      }
    }
  }
  for (const prefix of objectSweepPrefixes(rules)) {
    let after: Uint8Array | undefined
    for (;;) {
      const page = await store.list({ prefix, after, limit: PAGE, withMetadata: false })
      const moving: Array<{ id: string, object: StoredObject }> = []
      for (const entry of page.entries) {
        if (!('id' in entry)) continue
        const { id, object } = entry
        const action = actionAt(rules, id, object.uploaded, object.storageClass, now)
        if (action?.action === 'expire') {
          doomed.set(id, object)
          if (doomed.size >= PAGE) await removeDoomed()
        } else if (action?.action === 'transition') {
          moving.push({ id, object })
        }
      }
      // One at a time: under a catalog server's sweep lock every statement goes through the lock's one
      // connection, where two copies' transactions would interleave.
      const current = moving.length === 0 ? rules : await rulesNow()
      for (const { id, object } of moving) {
        if (transitionAt(current, id, object.uploaded, object.storageClass, now) !== null && await transition(store, id, object)) report.transitionedObjects++
      }
      const last = page.entries.at(-1)
      if (!page.truncated || last === undefined || !('id' in last)) break
      after = Buffer.from(last.id, 'utf8')
    }
  }
  await removeDoomed()
  for (const prefix of uploadSweepPrefixes(rules)) {
    let after: { id: string, uploadId: string } | undefined
    for (;;) {
      const uploads = await store.listUploads({ prefix, after, limit: PAGE })
      const current = uploads.length === 0 ? rules : await rulesNow()
      for (const upload of uploads) {
        const id = upload.key.normalize('NFC')
        if (!uploadAbortDue(current, id, upload.created, now)) continue
        // A completion (or another abort) may have removed it since the listing: only what this sweep removed counts.
        if (await store.abortUpload(upload.uploadId)) report.abortedUploads++
      }
      const last = uploads.at(-1)
      if (uploads.length < PAGE || last === undefined) break
      after = { id: last.key.normalize('NFC'), uploadId: last.uploadId }
    }
  }
  return report
}

/** Moves the version `seen` of `id` to InfrequentAccess; false when it changed meanwhile (or was already there). */
async function transition (store: BucketStore, id: string, seen: StoredObject): Promise<boolean> {
  const outcome = await store.copy(id, id,
    source => source.version === seen.version && source.storageClass !== 'InfrequentAccess'
      ? withFields(source, { storageClass: 'InfrequentAccess', version: randomHex(16) })
      : null,
    current => current?.version === seen.version, { cause: 'transition' })
  return outcome.status === 'copied'
}
