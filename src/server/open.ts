/**
 * Opening what the doors serve: a registry of buckets on a data directory
 * (a SQLite catalog in each bucket, or one PostgreSQL catalog shared by
 * several gateways) or in memory, and a single bucket on a directory. The
 * package entry (src/index.ts) exports these to library users; the server's
 * composition (gateway.ts) and the commands open their registries here too.
 *
 * Each checks its path and its options before it touches the disk
 * (options-check.ts, as `startServer` checks its own): an unknown key, a
 * value of the wrong type or an empty string is a TypeError, a number out
 * of its range a RangeError, each with Node's code (docs/library.md).
 */
import { BucketEngine, createRegistry, MAX_PART_BYTES, MAX_SWEEP_INTERVAL_MS, type Bucket, type BucketRegistry, type OpenBucketOptions, type RegistryOptions } from '../bucket/index.js'
import { realpath } from 'node:fs/promises'
import path from 'node:path'
import { refuseMarked } from '../stores/fs/catalog-mark.js'
import { FsRegistryStorage } from '../stores/fs/registry-storage.js'
import { FsStore, type FsStoreOptions } from '../stores/fs/store.js'
import { MemoryRegistryStorage } from '../stores/memory/registry-storage.js'
import { checkNumber, checkOptions, OptionError, shown, type OptionType } from './options-check.js'

/**
 * A path the library would resolve against the working directory, or a
 * value no path: `''` would make the working directory itself a bucket
 * (its files beside the catalog), so it is refused as a TypeError with
 * Node's codes, naming the function.
 */
function checkPath (method: string, name: string, value: unknown): void {
  if (typeof value !== 'string') throw new OptionError(method, `${name} must be a string (got ${shown(value)})`, 'ERR_INVALID_ARG_TYPE')
  if (value === '') throw new OptionError(method, `${name} must not be empty (give '.' for the working directory)`)
}

/** A count: a whole number, 0 or more, that a double holds exactly. */
const isCount = (value: number): boolean => Number.isSafeInteger(value) && value >= 0

/** The engine's options every open function takes. */
function checkEngineOptions (method: string, options: OpenBucketOptions): void {
  checkNumber(method, 'minPartSize', options.minPartSize, value => isCount(value) && value <= MAX_PART_BYTES, `an integer number of bytes from 0 to ${MAX_PART_BYTES}`)
}

/**
 * Options of a bucket on the filesystem: the engine's and the store's
 * `fsync`. (The store's `create` is the registry's: a bucket opened alone
 * is created when missing.)
 */
export type OpenFsBucketOptions = OpenBucketOptions & Pick<FsStoreOptions, 'fsync'>

/** Every option of openBucket and the type of its value (options-check.ts): a key not listed is refused. */
const bucketOptionTypes = {
  fsync: 'boolean', clock: 'function', minPartSize: 'number', uploadMaxAgeMs: 'number', sweepIntervalMs: 'number', notifications: 'object', defaultStorageClass: 'function'
} as const satisfies Record<keyof OpenFsBucketOptions, OptionType>

/** Opens the bucket stored in the directory `dir`, creating it when missing. */
export async function openBucket (dir: string, given?: OpenFsBucketOptions): Promise<Bucket> {
  checkPath('openBucket', 'dir', dir)
  const options = checkOptions<OpenFsBucketOptions>('openBucket', given, bucketOptionTypes)
  checkEngineOptions('openBucket', options)
  checkNumber('openBucket', 'uploadMaxAgeMs', options.uploadMaxAgeMs, value => value >= 0 && Number.isFinite(value), 'a number of ms, 0 or more')
  // Node's timers keep nothing longer (lifecycle-sweep.ts).
  checkNumber('openBucket', 'sweepIntervalMs', options.sweepIntervalMs, value => value >= 0 && value <= MAX_SWEEP_INTERVAL_MS, `from 1 to ${MAX_SWEEP_INTERVAL_MS} ms, or 0 for no timer`)
  // A bucket of a data directory a PostgreSQL catalog keeps: its SQLite files are stale (stores/fs/catalog-mark.ts).
  await refuseMarked(path.dirname(await realpath(dir).catch(() => path.resolve(dir))))
  const store = await FsStore.open(dir, { fsync: options.fsync })
  try {
    return new BucketEngine(store, options)
  } catch (err) {
    // An option the engine refuses all the same: the store opened for it is closed again.
    await store.close()
    throw err
  }
}

/**
 * Options of a registry on a data directory: the registry's, the store's
 * (`fsync`), and `catalog`: absent or empty, a SQLite catalog in each
 * bucket's directory; a `postgres://` URL, one PostgreSQL catalog shared by
 * every gateway (the bodies stay in the data directory), to which this
 * process opens at most `catalogConnections` connections (default 10).
 */
export type OpenFsRegistryOptions = RegistryOptions & Pick<FsStoreOptions, 'fsync'> & { catalog?: string, catalogConnections?: number }

const registryOptionTypes = {
  fsync: 'boolean', clock: 'function', minPartSize: 'number', warn: 'function', catalog: 'string', catalogConnections: 'number'
} as const satisfies Record<keyof OpenFsRegistryOptions, OptionType>

/** Opens the registry of the buckets in the data directory `dataDir` (created when missing). */
export async function openRegistry (dataDir: string, given?: OpenFsRegistryOptions): Promise<BucketRegistry> {
  checkPath('openRegistry', 'dataDir', dataDir)
  // An empty catalog is none (SQLite), as an empty --catalog is.
  const options = checkOptions<OpenFsRegistryOptions>('openRegistry', given, registryOptionTypes, ['catalog'])
  checkEngineOptions('openRegistry', options)
  // As `serve --catalog-connections` takes it (main.ts).
  checkNumber('openRegistry', 'catalogConnections', options.catalogConnections, value => isCount(value) && value >= 1 && value <= 1000, 'an integer from 1 to 1000')
  if (options.catalog !== undefined && options.catalog !== '') {
    // Loaded only when asked for: the PostgreSQL client weighs on every process's memory.
    const { PgRegistryStorage } = await import('../stores/pg/registry-storage.js')
    return createRegistry(await PgRegistryStorage.open(dataDir, options.catalog, { fsync: options.fsync, maxConnections: options.catalogConnections }), options)
  }
  // `warn` also hears of the readable view's refusals, in every bucket it opens (view.ts).
  return createRegistry(await FsRegistryStorage.open(dataDir, { fsync: options.fsync, warn: options.warn }), options)
}

const memoryRegistryOptionTypes = { clock: 'function', minPartSize: 'number', warn: 'function' } as const satisfies Record<keyof RegistryOptions, OptionType>

/** A new, empty registry kept in this process's memory: nothing touches the disk, and everything is gone with the registry. */
export function openMemoryRegistry (given?: RegistryOptions): BucketRegistry {
  const options = checkOptions<RegistryOptions>('openMemoryRegistry', given, memoryRegistryOptionTypes)
  checkEngineOptions('openMemoryRegistry', options)
  return createRegistry(new MemoryRegistryStorage(), options)
}
