/**
 * The package entry, and a composition root for library users: the engine's
 * surface (src/bucket/index.ts) plus `openBucket` and `openRegistry`, which
 * put the engine on the filesystem store. Other stores are wired the same
 * way: `new BucketEngine(store, options)`, `createRegistry(storage, options)`.
 */
import { BucketEngine, createRegistry, type Bucket, type BucketRegistry, type OpenBucketOptions, type RegistryOptions } from './bucket/index.js'
import { FsRegistryStorage } from './stores/fs/registry-storage.js'
import { FsStore, type FsStoreOptions } from './stores/fs/store.js'

export * from './bucket/index.js'
export { MemoryStore } from './stores/memory/store.js'
export type { FsStoreOptions } from './stores/fs/store.js'
export { shareChecksWithinTurns } from './stores/turn.js'

/** Options of a bucket on the filesystem: the engine's and the store's (`fsync`). */
export type OpenFsBucketOptions = OpenBucketOptions & FsStoreOptions

/** Opens the bucket stored in the directory `dir`, creating it when missing. */
export async function openBucket (dir: string, options: OpenFsBucketOptions = {}): Promise<Bucket> {
  const store = await FsStore.open(dir, { fsync: options.fsync })
  return new BucketEngine(store, options)
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
  if (options.catalog !== undefined && options.catalog !== '') {
    // Loaded only when asked for: the PostgreSQL client weighs on every process's memory.
    const { PgRegistryStorage } = await import('./stores/pg/registry-storage.js')
    return createRegistry(await PgRegistryStorage.open(dataDir, options.catalog, { fsync: options.fsync, maxConnections: options.catalogConnections }), options)
  }
  return createRegistry(await FsRegistryStorage.open(dataDir, { fsync: options.fsync }), options)
}
