/**
 * Opening what the doors serve: a registry of buckets on a data directory
 * (a SQLite catalog in each bucket, or one PostgreSQL catalog shared by
 * several gateways) or in memory, and a single bucket on a directory. The
 * package entry (src/index.ts) exports these to library users; the server's
 * composition (gateway.ts) and the commands open their registries here too.
 */
import { BucketEngine, createRegistry, type Bucket, type BucketRegistry, type OpenBucketOptions, type RegistryOptions } from '../bucket/index.js'
import { FsRegistryStorage } from '../stores/fs/registry-storage.js'
import { FsStore, type FsStoreOptions } from '../stores/fs/store.js'
import { MemoryRegistryStorage } from '../stores/memory/registry-storage.js'

/**
 * A path the library would resolve against the working directory, or a
 * value no path: `''` would make the working directory itself a bucket
 * (its files beside the catalog), so it is refused as a TypeError with
 * Node's codes, naming the function.
 */
function checkPath (method: string, name: string, value: unknown): void {
  if (typeof value !== 'string') throw Object.assign(new TypeError(`${method}: ${name} must be a string (got ${typeof value})`), { code: 'ERR_INVALID_ARG_TYPE' })
  if (value === '') throw Object.assign(new TypeError(`${method}: ${name} must not be empty (give '.' for the working directory)`), { code: 'ERR_INVALID_ARG_VALUE' })
}

/** Options of a bucket on the filesystem: the engine's and the store's (`fsync`). */
export type OpenFsBucketOptions = OpenBucketOptions & FsStoreOptions

/** Opens the bucket stored in the directory `dir`, creating it when missing. */
export async function openBucket (dir: string, options: OpenFsBucketOptions = {}): Promise<Bucket> {
  checkPath('openBucket', 'dir', dir)
  const store = await FsStore.open(dir, { fsync: options.fsync })
  try {
    return new BucketEngine(store, options)
  } catch (err) {
    // An option the engine refuses (a sweep interval Node's timers cannot keep): the store opened for it is closed again.
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
export type OpenFsRegistryOptions = RegistryOptions & FsStoreOptions & { catalog?: string, catalogConnections?: number }

/** Opens the registry of the buckets in the data directory `dataDir` (created when missing). */
export async function openRegistry (dataDir: string, options: OpenFsRegistryOptions = {}): Promise<BucketRegistry> {
  checkPath('openRegistry', 'dataDir', dataDir)
  if (options.catalog !== undefined && options.catalog !== '') {
    // Loaded only when asked for: the PostgreSQL client weighs on every process's memory.
    const { PgRegistryStorage } = await import('../stores/pg/registry-storage.js')
    return createRegistry(await PgRegistryStorage.open(dataDir, options.catalog, { fsync: options.fsync, maxConnections: options.catalogConnections }), options)
  }
  return createRegistry(await FsRegistryStorage.open(dataDir, { fsync: options.fsync }), options)
}

/** A new, empty registry kept in this process's memory: nothing touches the disk, and everything is gone with the registry. */
export function openMemoryRegistry (options: RegistryOptions = {}): BucketRegistry {
  return createRegistry(new MemoryRegistryStorage(), options)
}
