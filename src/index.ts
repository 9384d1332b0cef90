/**
 * The package entry: the engine's surface (src/bucket/index.ts); `openBucket`
 * and `openRegistry`, which put the engine on the filesystem store, and
 * `openMemoryRegistry` (src/server/open.ts); and `startServer`, the whole
 * server in the caller's process, for test suites (src/server/embed.ts).
 * Other stores are wired the same way: `new BucketEngine(store, options)`,
 * `createRegistry(storage, options)`.
 */
import type { StartedServer, StartServerOptions } from './server/embed.js'

export * from './bucket/index.js'
export { MemoryStore } from './stores/memory/store.js'
export type { FsStoreOptions } from './stores/fs/store.js'
export { shareChecksWithinTurns } from './stores/turn.js'
export { openBucket, openMemoryRegistry, openRegistry, type OpenFsBucketOptions, type OpenFsRegistryOptions } from './server/open.js'
export type { StartedS3, StartedServer, StartServerOptions } from './server/embed.js'

/**
 * Starts the gateway and its S3 port in this process, on free ports of
 * 127.0.0.1 unless told otherwise; `close()` releases all it holds. The
 * server's modules load on the first call, so that a program using only
 * the library never loads the doors. See docs/embedding.md.
 */
export async function startServer (options: StartServerOptions = {}): Promise<StartedServer> {
  const embed = await import('./server/embed.js')
  return await embed.startServer(options)
}
