/**
 * Body files of a bucket's filesystem store: receiving a body to disk
 * (staging), placing it where its version belongs, hard-linking the parts of
 * a completed upload or the body files of a copied object, and removing
 * files no row names any more. Bodies are immutable files named by version;
 * only the catalog says which are live.
 *
 *   blobs/<vv>/<version>        body of a single put (vv = first two hex digits)
 *   blobs/<vv>/<version>.<n>    part n of a completed multipart object
 *   tmp/<random>                a part being received
 */
import { randomBytes } from 'node:crypto'
import { constants as fsConstants, existsSync, promises as fsp, statSync } from 'node:fs'
import type { FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { BucketError, bucketRetired, type StagedBody } from '../../bucket/port.js'
import { fsyncDirectory, storageError } from './atomic.js'
import type { Segment } from './catalog.js'
import { bodyBytesReceived } from './young-garbage.js'

/** Size of the writes a received body is gathered into. */
const WRITE_BATCH = 256 * 1024
/**
 * Bytes of received bodies that may be on their way to the disk at once,
 * in this process: one body alone may use all of it; several received
 * together (the parts of a multipart upload sent side by side) share it,
 * so the memory a process holds for writes does not grow with the number
 * of bodies arriving. A body always keeps one write of its own in flight.
 *
 * Both sizes were chosen by a 1 GiB upload's peak RSS and rate on one
 * machine, in alternating runs: 8 MiB in flight in 1 MiB writes peaked at
 * 108 to 112 MiB, 2 MiB in 256 KiB writes at 94 to 98 MiB, as fast (the
 * disk still has eight writes queued; the received chunks a write holds
 * are garbage sooner). 1 MiB in flight gained nothing more.
 */
const MAX_IN_FLIGHT = 2 * 1024 * 1024
let inFlightInProcess = 0
/**
 * With fsync on, received bytes are flushed in the background this often:
 * more often costs the disk more device flushes, less often leaves more for
 * the final flush (4 MiB and 64 MiB both measured slower than 16 MiB here).
 */
const FLUSH_EVERY = 16 * 1024 * 1024

/**
 * Write buffers whose writes are done, kept for the next (at most what may
 * be in flight, and one more): a fresh one costs the kernel page faults.
 */
const spareBatches: Buffer[] = []

function takeBatch (): Buffer {
  return spareBatches.pop() ?? Buffer.allocUnsafeSlow(WRITE_BATCH)
}

function giveBackBatch (buffer: Buffer): void {
  if (spareBatches.length <= MAX_IN_FLIGHT / WRITE_BATCH) spareBatches.push(buffer)
}

/** A store directory that is something else (a symbolic link planted there): never written through. */
export function notOurDirectory (dir: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${dir} is not a directory of the store (a symbolic link?): it is not written through.`), { code: 'ENOTDIR' })
}

/** Where the body of a single put of `version` lives, relative to the store's directory. */
export function blobFile (version: string): string {
  checkedVersion(version)
  return `blobs/${version.slice(0, 2)}/${version}`
}

/** A body file a catalog row may name: a put's body or a part of a completed upload, under blobs/. */
const bodyFile = /^blobs\/([A-Za-z0-9_-]{2})\/\1[A-Za-z0-9_-]*(\.\d{1,5})?$/
/** A part file of an upload in progress. */
const partFile = /^uploads\/[A-Za-z0-9_-]{16,64}\/\d{1,5}\.[0-9a-f]{12}$/

/**
 * Whether a file name read from the catalog is one this store could have
 * written. The catalog is the truth, but a forged or corrupt row must never
 * make the store read or remove a file outside its directory.
 */
export function isStoreFile (file: unknown): file is string {
  return typeof file === 'string' && (bodyFile.test(file) || partFile.test(file))
}

/** A version names files: only the characters of the engine's versions, nothing that walks a path. */
function checkedVersion (version: string): string {
  if (!/^[A-Za-z0-9_-]{8,128}$/.test(version)) throw new Error(`A version that cannot name a file: ${JSON.stringify(version)}.`)
  return version
}

/** Whether the body files of a row are those of a single put (which the readable view shows), not parts. */
export function isSinglePutBody (segments: Segment[]): boolean {
  return segments.length === 1 && /^blobs\/[0-9a-f]{2}\/[0-9a-f]+$/.test(segments[0][0])
}

/** What a store answers when a catalog row names a file it could not have written. */
export function forgedRow (file: string): BucketError {
  return new BucketError('InternalError', 'reading the catalog', 'A catalog row names a file this store could not have written.', { path: file.slice(0, 200) })
}

/** Removes a file, ignoring one already gone. */
export async function removeQuietly (file: string): Promise<void> {
  await fsp.unlink(file).catch(() => {})
}

/** Upload ids come from callers (resumeMultipartUpload): only ids this store could have made name a directory. */
export function isUploadId (uploadId: string): boolean {
  return typeof uploadId === 'string' && /^[A-Za-z0-9_-]{16,64}$/.test(uploadId)
}

/** The names in `dir`; none when it is missing. */
export async function entries (dir: string): Promise<string[]> {
  try {
    return await fsp.readdir(dir)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return []
    throw err
  }
}

/** Removes a directory and what it holds (or a file), ignoring one already gone. */
export async function removeTree (dir: string): Promise<void> {
  await fsp.rm(dir, { force: true, recursive: true }).catch(() => {})
}

export class Staged implements StagedBody {
  /** `entryDurable`: the file was received in place and its directory entry is already on disk. */
  constructor (readonly file: string, readonly size: number, readonly entryDurable = false) {}
  async discard (): Promise<void> { await removeQuietly(this.file) }
}

/** The device and inode of `file`, null when it is gone. */
function identityOf (file: string): string | null {
  try {
    const stat = statSync(file, { throwIfNoEntry: false })
    return stat === undefined ? null : `${stat.dev}:${stat.ino}`
  } catch {
    return null
  }
}

export class BlobFiles {
  readonly #root: string
  /**
   * What tells this store's bucket from a bucket of the same name created
   * after it was deleted: the catalog file (`catalog.db`), which the store's
   * own connection holds open, so that no file made since can take its inode
   * number; `#identity` is its device and inode when the store opened. A
   * store keeping its catalog elsewhere (PostgreSQL) has none: nothing holds
   * its directory's inode, which a remount or a restore changes and a new
   * directory may reuse, so only the directory's being gone tells there
   * (its catalog refuses the commit of a deleted bucket's write).
   */
  readonly #identityFile: string | null
  readonly #identity: string | null
  readonly #fsync: boolean
  readonly #dirs = new Set<string>()
  /** Directories being made, until durable in their parent: one found there (EEXIST) meanwhile is not yet. */
  readonly #making = new Map<string, Promise<void>>()
  /** Set when the store is closed (its bucket deleted, or the process stopping): no more bodies are received. */
  closed = false

  constructor (root: string, fsync: boolean) {
    this.#root = root
    const catalog = path.join(root, 'catalog.db')
    this.#identityFile = existsSync(catalog) ? catalog : null
    this.#identity = this.#identityFile === null ? null : identityOf(this.#identityFile)
    this.#fsync = fsync
  }

  /**
   * Whether the bucket of this store is gone: the store was closed, or its
   * directory was moved away by a delete (in any process), or replaced by
   * that of a bucket of the same name created since. A stat, asked only
   * where a body is received or a directory made, never on a read.
   */
  #bucketGone (): boolean {
    if (this.closed) return true
    return this.#identityFile === null ? !existsSync(this.#root) : identityOf(this.#identityFile) !== this.#identity
  }

  /** The absolute path of a file named relative to the store's directory. */
  abs (file: string): string {
    return path.join(this.#root, file)
  }

  /**
   * Makes a directory of the store (a `blobs/<vv>` or an upload's), one
   * level only: when its parent is gone, so is the bucket, and nothing
   * brings a deleted bucket's directory back. Nor is one made in the
   * directory of a bucket of the same name created after this store's was
   * deleted: that is looked at before and after the mkdir, and a directory
   * made there is removed again (10006). A directory it makes is durable in
   * its parent before anything is put in it.
   */
  async #ensureDir (dir: string, remember = true): Promise<void> {
    if (this.#dirs.has(dir)) return
    // A body bound for a directory another body is making waits for its parent's sync too.
    const pending = this.#making.get(dir)
    if (pending !== undefined) {
      await pending
    } else {
      const making = this.#makeDir(dir)
      this.#making.set(dir, making)
      try {
        await making
      } finally {
        this.#making.delete(dir)
      }
    }
    if (remember) this.#dirs.add(dir)
  }

  async #makeDir (dir: string): Promise<void> {
    if (this.#bucketGone()) throw bucketRetired()
    try {
      await fsp.mkdir(dir)
      if (this.#bucketGone()) {
        await fsp.rmdir(dir).catch(() => {}) // not emptied: a writer of the new bucket may have found it meanwhile
        throw bucketRetired()
      }
      // The new directory's own entry, or a power cut could lose it with the files made durable in it.
      if (this.#fsync) await fsyncDirectory(path.dirname(dir))
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      // One found there must be a directory itself: a planted link would take bodies outside the data directory.
      if (!(await fsp.lstat(dir)).isDirectory()) throw notOurDirectory(dir)
    }
  }

  /**
   * Creates a new body file. A directory of blobs/ removed from outside
   * (the store never removes one) is made again, rather than every put of
   * its versions failing until the process restarts.
   */
  async #create (file: string): Promise<FileHandle> {
    const flags = fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL
    try {
      return await fsp.open(file, flags, 0o644)
    } catch (err) {
      const dir = path.dirname(file)
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !this.#dirs.has(dir)) throw err
      this.#dirs.delete(dir)
      await this.#ensureDir(dir)
      return await fsp.open(file, flags, 0o644)
    }
  }

  /** The error to report for `err`: a bucket whose directory is gone or replaced was deleted (10006); else a storage failure or `err`. */
  #failure (err: unknown, what: string, path: string): unknown {
    if (this.#bucketGone()) return bucketRetired()
    return storageError(err, what, path)
  }

  /**
   * Receives a body (into blobs/ under its version, or tmp/ for a part).
   * Chunks are copied, as they arrive, into writes of 256 KiB at explicit
   * offsets (a source may write its next bytes into the buffer of the chunk
   * it gave before: a generator or stream that reuses one; the bytes written
   * are then still the bytes hashed); up
   * to 2 MiB of them (in the process) are on their way to the disk while the next chunks are
   * received and hashed, so the network, the hash and the disk work side by
   * side. With fsync on, a flush of what is written starts every 16 MiB, so
   * the final fsync only waits for the tail; a put's directory entry is made
   * durable while the body arrives, so its flush and the file's overlap.
   */
  async stage (source: AsyncIterable<Uint8Array>, version?: string): Promise<StagedBody> {
    // A put's body goes where its version belongs (no row names it before
    // the commit, and the sweeper removes it if none ever does); a part's
    // goes to tmp/ until it is placed in its upload. Nothing is received
    // for a bucket deleted meanwhile (nor into one of its name made since).
    if (this.#bucketGone()) throw bucketRetired()
    const file = version === undefined ? this.abs(`tmp/${randomBytes(12).toString('hex')}`) : this.abs(blobFile(version))
    let handle: FileHandle | undefined
    const inFlight: Array<{ bytes: number, done: Promise<void> }> = []
    let flushing: Promise<void> = Promise.resolve()
    let entryDurable: Promise<void> | undefined
    let size = 0
    try {
      if (version !== undefined) await this.#ensureDir(path.dirname(file))
      const target = handle = await this.#create(file)
      if (version !== undefined && this.#fsync) {
        entryDurable = fsyncDirectory(path.dirname(file))
        entryDurable.catch(() => {}) // observed below, when it is awaited
      }
      let batch: Buffer | undefined
      let batchBytes = 0
      let position = 0
      let unflushed = 0
      const send = async (): Promise<void> => {
        const bytes = batchBytes
        const buffer = batch ?? takeBatch()
        inFlightInProcess += bytes
        const done = writeAll(target, buffer.subarray(0, bytes), position).finally(() => {
          inFlightInProcess -= bytes
          giveBackBatch(buffer)
        })
        done.catch(() => {}) // observed below, when it is awaited
        inFlight.push({ bytes, done })
        position += batchBytes
        unflushed += batchBytes
        batch = undefined
        batchBytes = 0
        while (inFlight.length > 1 && inFlightInProcess > MAX_IN_FLIGHT) await inFlight.shift()?.done
        if (this.#fsync && unflushed >= FLUSH_EVERY) {
          unflushed = 0
          await flushing
          flushing = Promise.all(inFlight.map(async w => await w.done)).then(async () => await target.datasync())
          flushing.catch(() => {})
        }
      }
      for await (const chunk of source) {
        bodyBytesReceived(chunk.byteLength)
        size += chunk.byteLength
        for (let offset = 0; offset < chunk.byteLength;) {
          batch ??= takeBatch()
          const n = Math.min(chunk.byteLength - offset, WRITE_BATCH - batchBytes)
          batch.set(chunk.subarray(offset, offset + n), batchBytes)
          batchBytes += n
          offset += n
          if (batchBytes === WRITE_BATCH) await send()
        }
      }
      if (batchBytes > 0) await send()
      if (batch !== undefined) giveBackBatch(batch)
      for (const write of inFlight.splice(0)) await write.done
      await flushing
      if (this.#fsync) await Promise.all([handle.datasync(), entryDurable])
      // The bucket was deleted while the body arrived (its files removed,
      // or a bucket of that name made since, whose blobs/ directory the
      // body may have been received into): 10006, and the file goes.
      const { nlink } = await handle.stat()
      if (this.#bucketGone()) throw bucketRetired()
      // A body stalled for longer than the sweeper's grace period may have
      // been removed as abandoned: fail rather than commit a row naming nothing.
      if (nlink === 0) throw new Error('The body was removed by a sweep while it was being received.')
      await handle.close()
      return new Staged(file, size, entryDurable !== undefined)
    } catch (err) {
      await Promise.allSettled([...inFlight.map(async w => await w.done), flushing, entryDurable])
      await handle?.close().catch(() => {})
      // Only a file this call made (O_EXCL) is removed.
      if (handle !== undefined) await removeQuietly(file)
      throw this.#failure(err, 'storing a body', file)
    }
  }

  /** Moves a staged body into blobs/ under its version (unless it is there already); durable before the commit that names it. */
  async place (body: StagedBody, version: string): Promise<Segment> {
    const file = blobFile(version)
    const dir = path.dirname(this.abs(file))
    let moved = false
    try {
      const staged = body as Staged
      if (staged.file !== this.abs(file)) {
        await this.#ensureDir(dir)
        await fsp.rename(staged.file, this.abs(file))
        moved = true
      }
      if (this.#fsync && !staged.entryDurable) await fsyncDirectory(dir)
    } catch (err) {
      // Renamed already (the directory's sync failed): the file goes from where it is now.
      if (moved) await fsp.rm(this.abs(file), { force: true }).catch(() => {})
      await body.discard()
      throw this.#failure(err, 'storing a body', dir)
    }
    return [file, body.size]
  }

  /** Moves a staged part into its upload's directory under a fresh name; returns that name. */
  async placePart (body: StagedBody, uploadId: string, partNumber: number): Promise<string> {
    const file = `uploads/${uploadId}/${partNumber}.${randomBytes(6).toString('hex')}`
    const dir = path.dirname(this.abs(file))
    let moved = false
    try {
      await this.#ensureDir(dir, false) // an upload's directory goes when the upload does
      await fsp.rename((body as Staged).file, this.abs(file))
      moved = true
      if (this.#fsync) await fsyncDirectory(dir)
    } catch (err) {
      // Renamed already (the directory's sync failed): the file goes from where it is now.
      if (moved) await fsp.rm(this.abs(file), { force: true }).catch(() => {})
      await body.discard()
      throw this.#failure(err, 'storing a part', dir)
    }
    return file
  }

  /**
   * Hard-links the chosen parts of an upload into blobs/ under `version`
   * and makes the links durable, before the row naming them commits (no
   * byte is copied). On failure, the links made so far are removed.
   */
  async linkParts (version: string, parts: Array<{ file: string, size: number, partNumber: number }>, progress?: () => void): Promise<Segment[]> {
    return await this.#link(version, parts.map(p => [p.file, `.${p.partNumber}`, p.size]), 'completing an upload', progress)
  }

  /**
   * Hard-links the body files of a row (a copy's source) under `version`,
   * each keeping its part suffix, durable before the row naming them
   * commits. A source file that is gone (its row was replaced meanwhile)
   * fails with ENOENT, unchanged, so the caller reads the row again.
   */
  async linkSegments (version: string, segments: Segment[], progress?: () => void): Promise<Segment[]> {
    return await this.#link(version, segments.map(([file, size]) => [file, /\.\d+$/.exec(file)?.[0] ?? '', size]), 'copying an object', progress)
  }

  /** Links `sources` under `version`; `progress` is called after each link. */
  async #link (version: string, sources: Array<[file: string, suffix: string, size: number]>, what: string, progress?: () => void): Promise<Segment[]> {
    if (sources.length === 0) return []
    const dir = path.dirname(this.abs(blobFile(version)))
    const segments: Segment[] = []
    try {
      await this.#ensureDir(dir)
      for (const [from, suffix, size] of sources) {
        if (!isStoreFile(from)) throw forgedRow(from)
        const file = `${blobFile(version)}${suffix}`
        await fsp.link(this.abs(from), this.abs(file))
        segments.push([file, size])
        progress?.()
      }
      if (this.#fsync) await fsyncDirectory(dir)
    } catch (err) {
      await this.removeSegments(segments)
      throw this.#failure(err, what, dir)
    }
    return segments
  }

  /** Removes body files no row names any more (a name this store could not have written is left alone). */
  async removeSegments (segments: Segment[]): Promise<void> {
    await Promise.all(segments.map(async ([file]) => { if (isStoreFile(file)) await removeQuietly(this.abs(file)) }))
  }

  async removeFile (file: string): Promise<void> {
    if (isStoreFile(file)) await removeQuietly(this.abs(file))
  }

  async removeUpload (uploadId: string): Promise<void> {
    await removeTree(this.abs(`uploads/${uploadId}`))
  }
}

/** Writes every byte of `bytes` from `position` (a short write is finished with the rest). */
async function writeAll (handle: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  for (let done = 0; done < bytes.byteLength;) {
    const { bytesWritten } = await handle.write(bytes, done, bytes.byteLength - done, position + done)
    done += bytesWritten
  }
}
