/**
 * The filesystem store: one bucket in one directory. On-disk format 3
 * (formats 1 and 2, with no small bodies in the catalog or with them in the
 * object rows, are upgraded on open).
 * This module composes the rooms: catalog.ts (SQLite), blobs.ts (body
 * files), view.ts and view-intents.ts (the readable view), uploads.ts, sweeper.ts, commit.ts
 * (group commit and WAL flush), readers.ts and read-cache.ts.
 *
 *   <bucket>/.fsbucket/format.json         {"format": "fsbucket-bucket", "version": 3}
 *   <bucket>/.fsbucket/catalog.db          SQLite (WAL): the object index, small bodies, the commit point
 *   <bucket>/.fsbucket/tmp/                parts being received; never referenced
 *   <bucket>/.fsbucket/blobs/<vv>/<version>        body of a single put (vv = first two hex digits)
 *   <bucket>/.fsbucket/blobs/<vv>/<version>.<n>    part n of a completed multipart object
 *   <bucket>/.fsbucket/uploads/<uploadId>/<n>.<r>  parts of an upload in progress
 *
 * Why this shape:
 *   - Bodies are immutable files named by version; the catalog row of a key
 *     names the body files of its current version, or a small body kept in
 *     the catalog (inline.ts: one WAL append instead of a file). Replacing an object is
 *     "stream into blobs/ under the new version, fsync it and its directory,
 *     then commit one row": a crash at any instant leaves the old row (and its
 *     bytes) or the new row (and its bytes), never a mix. Files that no row
 *     names are leftovers; the sweeper removes them.
 *   - The row is the object's JSON metadata record (HTTP metadata, custom
 *     metadata, checksums are JSON columns). It lives in an index rather than
 *     in a sidecar file per object because a list page must read a thousand
 *     of them in key order: one range scan of a B-tree takes about a
 *     millisecond, a thousand sidecar opens take hundreds, and finding the
 *     next thousand keys of a million by directory walking reads the million.
 *     SQLite also gives the commit point several processes need: a write
 *     transaction (BEGIN IMMEDIATE) is the short critical section in which a
 *     conditional put judges the current row and replaces it, so exactly one
 *     of several racing conditional writers wins. No lock is held while a
 *     body streams: bodies are received before the transaction starts.
 *   - Ids are the UTF-8 bytes of the NFC key, stored as BLOBs so SQLite
 *     orders them by memcmp, which is the order the service lists in. No key
 *     ever becomes a path: file names are versions and upload ids (validated
 *     hex / base64url), so no key can reach outside the bucket.
 *   - Completing a multipart upload hard-links each part into blobs/ and
 *     commits a row naming them: no byte is copied, so completing 1 GiB takes
 *     milliseconds.
 *   - Keys that read like paths also appear as ordinary files under
 *     <bucket>/ (hard links to their bodies): see view.ts.
 *   - proper-lockfile guards what SQLite cannot: creating the store (the
 *     switch to WAL mode) and one sweeper at a time per bucket.
 */
import { existsSync, promises as fsp } from 'node:fs'
import path from 'node:path'
import {
  assembleListPage, BucketError, putChange, bucketLocked, bucketRetired, isBucketError, objectLocked, type LockRule, partLayoutOfSizes, type BucketStore, type MultipartLayout, type CommitOptions, type CompleteBuilder, type CompleteOptions, type CopyBuilder, type CopyOptions, type CopyOutcome, type DeleteOptions, type DeleteOutcome, type EventSink, type Outbox, type ListPage, type ListQuery, type ObjectReader, type PageSource,
  type Precondition, type StagedBody, type StoredChecksums, type StoredObject, type StoredPart, type StoredUpload, type SweepReport, type UploadListQuery
} from '../../bucket/port.js'
import { fsyncDirectory, readJson, storageError, writeJsonAtomic } from './atomic.js'
import { makeDirectory, makeOne } from './make-directory.js'
import { BlobFiles, isSinglePutBody, notOurDirectory } from './blobs.js'
import type { DeletedBuckets } from './deleted-buckets.js'
import { Catalog, fromListRow, toRecord, type Segment } from './catalog.js'
import { Commits, GroupCommit, wasRolledBack } from './commit.js'
import { INLINE_MAX_BYTES, InlineBody, stageInlineOrFile } from './inline.js'
import { catalogRead, openReader } from './readers.js'
import { CatalogOutbox } from './outbox.js'
import { releaseSpare, reserveSpare } from './spare.js'
import { sweepStore } from './sweeper.js'
import { Uploads } from './uploads.js'
import { KeyView, type ViewWarn } from './view.js'
import { ViewIntents } from './view-intents.js'
import { lockFile } from './file-lock.js'

export const FORMAT = 'fsbucket-bucket'
export const FORMAT_VERSION = 3
/**
 * Format 1 is format 3 without small bodies in the catalog, format 2 keeps
 * them in the object rows rather than in `bodies`: the catalog adds what
 * they lack when opened, and reads the bodies of format 2 where they are.
 */
const UPGRADABLE_VERSIONS = [1, 2]
const INTERNAL = '.fsbucket'
/** Attempts of a copy whose source keeps being replaced under it, before 10909 (CopySourceContended). */
const MAX_COPY_ATTEMPTS = 20

export interface FsStoreOptions {
  /** fsync data, directories and the catalog before a write resolves (default true). */
  fsync?: boolean
  /**
   * Create the bucket directory when it is missing (default true). The
   * registry opens existing buckets only: a bucket deleted meanwhile is
   * then NoSuchBucket rather than brought back.
   */
  create?: boolean
}

/** What a registry adds (not the library's: FsStoreOptions is public): the data directory's deleted buckets, which each sweep removes (blobs.ts), and where the readable view's refusals are warned of (view.ts; default a process warning). */
type RegistryStoreOptions = FsStoreOptions & { deletedBuckets?: DeletedBuckets, warn?: ViewWarn }

interface PutJob {
  id: string
  object: StoredObject
  /** The body file, or null when the body goes in the row (`inline`). */
  segment: Segment | null
  inline: Buffer | null
  precondition: Precondition
  copiedFrom: CommitOptions['copiedFrom']
  now: CommitOptions['now']
}

/** `locked`: refused because the current row is retained (nothing written). */
interface PutOutcome { committed: boolean, replaced: Segment[], locked?: true }

/** What the readable view is made from: a row's version, body files and the body it holds. */
/** `sealed`: an SSE-C object, whose ciphertext the view never shows. */
interface PublishedRow { version: string, segments: Segment[], body: Buffer | null, sealed: boolean }

export class FsStore implements BucketStore {
  readonly #root: string
  readonly #catalog: Catalog
  readonly #commits: Commits
  readonly #blobs: BlobFiles
  readonly #view: KeyView
  readonly #intents: ViewIntents
  readonly #uploads: Uploads
  readonly #puts: GroupCommit<PutJob, PutOutcome>
  /** A body file's name → its path. */
  readonly #abs = (file: string): string => this.#blobs.abs(file)
  readonly outbox: Outbox
  readonly #deletedBuckets: DeletedBuckets | undefined

  private constructor (root: string, catalog: Catalog, fsync: boolean, deletedBuckets: DeletedBuckets | undefined, warn: ViewWarn | undefined) {
    this.#root = root
    this.#deletedBuckets = deletedBuckets
    this.#catalog = catalog
    this.#commits = new Commits(catalog, path.join(root, 'catalog.db'), fsync)
    this.#blobs = new BlobFiles(root, fsync)
    this.#view = new KeyView(path.dirname(root), root, { warn })
    this.#intents = new ViewIntents(catalog, id => { this.#publish(id) })
    this.#uploads = new Uploads(catalog, this.#commits, this.#blobs)
    this.outbox = new CatalogOutbox(catalog, this.#commits)
    this.#puts = new GroupCommit(catalog, this.#commits, 'committing a write', batch => batch.map(job => this.#applyPut(job)),
      (batch, outcomes) => {
        batch.forEach((job, i) => {
          if (outcomes[i].committed) this.#publish(job.id, { version: job.object.version, segments: job.segment === null ? [] : [job.segment], body: job.inline, sealed: job.object.checksums.ssec !== undefined })
        })
      })
  }

  /** Opens (and creates when missing) the store of the bucket directory `dir`. */
  static async open (dir: string, options: RegistryStoreOptions = {}): Promise<FsStore> {
    try {
      return await FsStore.#open(dir, options)
    } catch (err) {
      // The bucket was deleted while it was being opened: that is NoSuchBucket, not a storage failure.
      if (!existsSync(path.join(path.resolve(dir), INTERNAL))) throw bucketRetired('open')
      throw err
    }
  }

  static async #open (dir: string, options: RegistryStoreOptions): Promise<FsStore> {
    const root = path.join(path.resolve(dir), INTERNAL)
    const fsync = options.fsync ?? true
    try {
      const inside = ['tmp', 'blobs', 'uploads'].map(sub => path.join(root, sub))
      // Each directory made is synced into its parent, or a power cut could lose it with the files made durable inside.
      if (options.create ?? true) await makeDirectory(root, { fsync })
      else if (await makeOne(root) && fsync) await fsyncDirectory(path.dirname(root))
      if ((await Promise.all(inside.map(async dir => await makeOne(dir)))).includes(true) && fsync) await fsyncDirectory(root)
      // The store's own directories must be directories, not links leading outside the data directory.
      for (const own of [root, ...inside]) if (!(await fsp.lstat(own)).isDirectory()) throw notOurDirectory(own)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw bucketRetired('open')
      throw storageError(err, 'creating the bucket directory', root)
    }
    let release: () => Promise<void>
    try {
      release = await lockFile(root, {
        lockfilePath: path.join(root, 'init.lock'),
        realpath: false,
        stale: 10_000,
        retries: { retries: 100, minTimeout: 10, maxTimeout: 200 }
      })
    } catch (err) {
      throw storageError(err, 'opening the bucket', root)
    }
    try {
      const formatFile = path.join(root, 'format.json')
      const format = await readJson<{ format?: string, version?: number } | null>(formatFile, null)
      if (format === null) {
        await writeJsonAtomic(formatFile, { format: FORMAT, version: FORMAT_VERSION }, { fsync })
      } else if (format.format !== FORMAT || (format.version !== FORMAT_VERSION && !UPGRADABLE_VERSIONS.includes(format.version as number))) {
        throw new Error(`${dir}: unsupported bucket format ${String(format.format)} version ${String(format.version)} (this fsbucket reads version ${FORMAT_VERSION}).`)
      }
      let catalog: Catalog
      try {
        catalog = Catalog.open(path.join(root, 'catalog.db'), fsync)
      } catch (err) {
        throw storageError(err, 'opening the catalog', path.join(root, 'catalog.db'))
      }
      // The catalog is upgraded (see Catalog.open) before the format says so: a crash between the two upgrades it again, harmlessly.
      if (format !== null && format.version !== FORMAT_VERSION) {
        try {
          await writeJsonAtomic(formatFile, { format: FORMAT, version: FORMAT_VERSION }, { fsync })
        } catch (err) {
          catalog.close()
          throw err
        }
      }
      const store = new FsStore(root, catalog, fsync, options.deletedBuckets, options.warn)
      // View entries a crashed process owed after a commit of several keys (view-intents.ts): fixed now, not at the next sweep.
      await store.#intents.replay()
      await reserveSpare(store.#root)
      return store
    } finally {
      await release()
    }
  }

  setEventSink (sink: EventSink | null): void {
    this.#catalog.sink = sink
  }

  async retire (): Promise<boolean> {
    const sql = this.#catalog.sql
    return await this.#commits.commit(() => {
      if (this.#catalog.lockRules().length > 0) throw bucketLocked()
      if (sql.anyObject.get() !== undefined) return false
      sql.retire.run()
      return true
    })
  }

  async stage (source: AsyncIterable<Uint8Array>, version?: string): Promise<StagedBody> {
    // A put's small body goes in its row; parts are always files (they are linked into the object when it completes).
    if (version === undefined) return await this.#blobs.stage(source)
    return await stageInlineOrFile(source, INLINE_MAX_BYTES, async rest => await this.#blobs.stage(rest, version))
  }

  async head (id: string): Promise<StoredObject | null> {
    return catalogRead(this.#root, () => this.#catalog.lookup(id)?.object ?? null)
  }

  async open (id: string): Promise<ObjectReader | null> {
    return catalogRead(this.#root, () => openReader(this.#catalog, this.#abs, id))
  }

  /** A small body (one file, or in its row) is read in the same step as its row; larger ones are `open`'s. */
  openNow (id: string): ObjectReader | null | undefined {
    return catalogRead(this.#root, () => openReader(this.#catalog, this.#abs, id, true))
  }

  /** A completed upload's row names one body file per part, with its size: the layout follows from them. */
  async derivePartLayout (id: string, version: string): Promise<MultipartLayout | null> {
    const row = catalogRead(this.#root, () => this.#catalog.sql.head.get(Buffer.from(id, 'utf8')))
    if (row === undefined || row.version !== version) return null
    return partLayoutOfSizes(row.etag, (JSON.parse(row.segments) as Segment[]).map(([, size]) => size))
  }

  async commit (id: string, object: StoredObject, body: StagedBody, precondition: Precondition, options: CommitOptions = {}): Promise<boolean> {
    const inline = body instanceof InlineBody ? body.bytes : null
    const segment = inline === null ? await this.#blobs.place(body, object.version) : null
    const own = segment === null ? [] : [segment]
    let outcome: PutOutcome
    try {
      outcome = await this.#puts.submit({ id, object, segment, inline, precondition, copiedFrom: options.copiedFrom, now: options.now })
    } catch (err) {
      // Nothing half-stored stays: a body no row names goes at once (not only at the next sweep).
      if (wasRolledBack(err)) await this.#blobs.removeSegments(own)
      throw err
    }
    const { committed, replaced, locked } = outcome
    await this.#blobs.removeSegments(committed ? replaced : own)
    if (locked === true) throw objectLocked('put', object.key)
    return committed
  }

  async lockRules (): Promise<LockRule[]> {
    return catalogRead(this.#root, () => this.#catalog.read(() => this.#catalog.lockRules()))
  }

  async setLockRules (rules: LockRule[]): Promise<void> {
    await this.#commits.commit(() => { this.#catalog.setLockRules(rules) })
  }

  /** One put of a group commit, inside the write transaction. */
  #applyPut ({ id, object, segment, inline, precondition, copiedFrom, now }: PutJob): PutOutcome {
    const sql = this.#catalog.sql
    const idBytes = Buffer.from(id, 'utf8')
    const current = sql.head.get(idBytes)
    if (!precondition(current === undefined ? null : toRecord(current))) return { committed: false, replaced: [] }
    if (this.#catalog.retained(id, current, now)) return { committed: false, replaced: [], locked: true }
    this.#catalog.putRow(idBytes, object, segment === null ? [] : [segment], inline)
    this.#catalog.emit(putChange(object, copiedFrom))
    return { committed: true, replaced: current === undefined ? [] : JSON.parse(current.segments) }
  }

  /**
   * Makes the view entry of `id` follow its catalog row: the body of a
   * single put (linked, or written out from the row for a body kept in it),
   * or nothing. Runs after a commit, never inside one, while the commit's
   * flush is under way on the thread pool; `committed` is the row the
   * commit wrote, when the caller has it. The row is read again after the change: when
   * another process committed meanwhile, the entry is redone for the newer
   * row, so whichever process publishes last leaves the view matching the
   * catalog.
   */
  #publish (id: string, committed?: PublishedRow): void {
    if (!this.#view.shows(id)) return
    const idBytes = Buffer.from(id, 'utf8')
    const sql = this.#catalog.sql
    const current = (): PublishedRow | undefined => {
      const found = sql.viewOf.get(idBytes)
      return found === undefined ? undefined : { version: found.version, segments: JSON.parse(found.segments), body: found.body, sealed: (JSON.parse(found.checksums) as StoredChecksums).ssec !== undefined }
    }
    let row = committed ?? current()
    for (let attempt = 0; attempt < 8; attempt++) {
      const segments = row?.segments ?? []
      // An SSE-C object is not shown: its bytes are ciphertext, and the view exists to show plain files.
      const shown = row === undefined || row.sealed
        ? false
        : row.body != null
          ? this.#view.write(id, row.body)
          : isSinglePutBody(segments) && this.#view.show(id, this.#blobs.abs(segments[0][0]))
      if (!shown) this.#view.hide(id)
      const now = sql.versionOf.get(idBytes)
      if (now === row?.version) return
      row = current()
    }
  }

  async delete (ids: string[], options: DeleteOptions = {}): Promise<DeleteOutcome> {
    try {
      return await this.#deleteRows(ids, options)
    } catch (err) {
      if (!isBucketError(err) || (err.errorName !== 'NoSpaceLeft' && err.errorName !== 'QuotaExceeded')) throw err
      // The disk is full: free the spare so that SQLite can write the deletion, which then frees the bodies.
      await releaseSpare(this.#root)
      const outcome = await this.#deleteRows(ids, options)
      void reserveSpare(this.#root)
      return outcome
    }
  }

  async #deleteRows (ids: string[], { cause, versions, now }: DeleteOptions): Promise<DeleteOutcome> {
    const action = cause === 'lifecycle' ? 'LifecycleDeletion' : 'DeleteObject'
    // Several keys' view entries, published after the commit, are recorded in it for a crash in between (view-intents.ts).
    const [{ deleted, removed, refused }, intents] = await this.#commits.commit(() => {
      const done = this.#catalog.deleteRows(ids, versions, action, now)
      return [done, this.#intents.record(done.deleted)] as const
    })
    for (const id of deleted) this.#publish(id)
    await this.#intents.settle(intents)
    await this.#blobs.removeSegments(removed)
    return { retained: refused, removed: deleted.length }
  }

  /**
   * A copy hard-links the source's body files under the copy's version
   * (outside any transaction; no byte is copied; a body kept in the row is
   * copied with the row inside the transaction), then one write
   * transaction checks that the source row is still the one linked from and
   * judges the destination. A source replaced or deleted in between (its
   * files are unlinked at once, so the link may fail) is read again, up to
   * MAX_COPY_ATTEMPTS times; then the copy fails with 10909
   * (CopySourceContended, 503: try again), never a raw file-system error.
   */
  async copy (fromId: string, toId: string, build: CopyBuilder, precondition: Precondition, options: CopyOptions = {}): Promise<CopyOutcome> {
    const transition = options.cause === 'transition'
    const sql = this.#catalog.sql
    const fromBytes = Buffer.from(fromId, 'utf8')
    const toBytes = Buffer.from(toId, 'utf8')
    for (let attempt = 0; ; attempt++) {
      const row = sql.head.get(fromBytes)
      if (row === undefined) {
        if (sql.retired.get() !== undefined) throw bucketRetired()
        return { status: 'no-source' }
      }
      const source = toRecord(row)
      const object = build(source)
      if (object === null) return { status: 'source-refused', source }
      // A body kept in the row is copied with the row; body files are linked.
      const inline = row.inline === 1
      let segments: Segment[]
      try {
        segments = inline ? [] : await this.#blobs.linkSegments(object.version, JSON.parse(row.segments))
      } catch (err) {
        // The source's files were unlinked under the link: it was replaced or deleted; look again.
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
        if (attempt + 1 >= MAX_COPY_ATTEMPTS) throw new BucketError('CopySourceContended', 'copy', undefined, { cause: err })
        continue
      }
      let replaced: Segment[] = []
      let outcome: CopyOutcome | 'source changed'
      try {
        outcome = await this.#commits.commit((): CopyOutcome | 'source changed' => {
          if (sql.head.get(fromBytes)?.version !== source.version) return 'source changed'
          const body = inline ? sql.inlineBody.get(fromBytes, source.version)?.body ?? null : null
          if (inline && body === null) return 'source changed'
          const current = sql.head.get(toBytes)
          if (!precondition(current === undefined ? null : toRecord(current))) return { status: 'refused' }
          // Thrown inside the transaction: rolled back, so the links go below.
          if (!transition && this.#catalog.retained(toId, current, options.now)) throw objectLocked('copy', object.key)
          this.#catalog.putRow(toBytes, object, segments, body)
          if (!transition) this.#catalog.emit(putChange(object, { key: source.key }))
          replaced = current === undefined ? [] : JSON.parse(current.segments)
          return { status: 'copied', object }
        })
      } catch (err) {
        if (wasRolledBack(err)) await this.#blobs.removeSegments(segments)
        throw err
      }
      if (outcome !== 'source changed' && outcome.status === 'copied') {
        this.#publish(toId)
        await this.#blobs.removeSegments(replaced)
        return outcome
      }
      await this.#blobs.removeSegments(segments)
      if (outcome !== 'source changed') return outcome
      if (attempt + 1 >= MAX_COPY_ATTEMPTS) throw new BucketError('CopySourceContended', 'copy')
    }
  }

  async list (query: ListQuery): Promise<ListPage> {
    const prefix = Buffer.from(query.prefix, 'utf8')
    const end = Buffer.concat([prefix, Buffer.from([0xff])])
    // Below the prefix, "after" means nothing: start at the prefix itself.
    const from = (after: Uint8Array | undefined): Buffer | undefined =>
      after !== undefined && Buffer.compare(after, prefix) >= 0 ? Buffer.from(after) : undefined
    const sql = this.#catalog.sql
    const source: PageSource = {
      nextId: after => {
        const start = from(after)
        const row = start === undefined ? sql.firstIdFrom.get(prefix, end) : sql.firstIdAfter.get(start, end)
        return row?.id.toString('utf8')
      },
      records: (after, limit) => {
        const start = from(after)
        const rows = start === undefined
          ? (query.withMetadata ? sql.listFromFull : sql.listFrom).all(prefix, end, limit)
          : (query.withMetadata ? sql.listAfterFull : sql.listAfter).all(start, end, limit)
        return rows.map(row => ({ id: row[0].toString('utf8'), object: fromListRow(row) }))
      }
    }
    // One read transaction: the page is one snapshot, and the seeks share its lock.
    return catalogRead(this.#root, () => this.#catalog.read(() => assembleListPage(source, query)))
  }

  async createUpload (id: string, upload: StoredUpload): Promise<void> {
    await this.#uploads.create(id, upload)
  }

  async getUpload (uploadId: string): Promise<StoredUpload | null> {
    return catalogRead(this.#root, () => this.#uploads.get(uploadId))
  }

  async putPart (uploadId: string, part: StoredPart, body: StagedBody): Promise<boolean> {
    return await this.#uploads.putPart(uploadId, part, body)
  }

  async completeUpload (uploadId: string, id: string, build: CompleteBuilder, options: CompleteOptions = {}): Promise<StoredObject | null> {
    const done = await this.#uploads.complete(uploadId, id, build, options.now)
    if (done === null) return null
    this.#publish(id)
    await this.#blobs.removeSegments(done.replaced)
    return done.object
  }

  async listUploads (query: UploadListQuery): Promise<StoredUpload[]> {
    return catalogRead(this.#root, () => this.#uploads.list(query))
  }

  async listParts (uploadId: string, after: number, limit: number): Promise<StoredPart[] | null> {
    return catalogRead(this.#root, () => this.#uploads.listParts(uploadId, after, limit))
  }

  async abortUpload (uploadId: string): Promise<boolean> {
    return await this.#uploads.abort(uploadId)
  }

  async sweep (createdBefore: number, leftoversBefore: number, underLock?: () => Promise<void>): Promise<SweepReport> {
    await this.#intents.replay()
    const rooms = { root: this.#root, catalog: this.#catalog, blobs: this.#blobs, uploads: this.#uploads, deletedBuckets: this.#deletedBuckets }
    return await sweepStore(rooms, createdBefore, leftoversBefore, underLock)
  }

  async close (): Promise<void> {
    this.#blobs.closed = true
    await this.#commits.close()
    this.#catalog.close()
  }
}

