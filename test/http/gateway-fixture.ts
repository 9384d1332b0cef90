/** A gateway app over a fresh data directory, for the HTTP tests. */
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { buildApp, type GatewayConfig } from '../../src/app.js'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

export const token = 'test-token-0123456789'
export const auth = { authorization: `Bearer ${token}` }

/** Every gateway here: no fsync (tests do not survive power cuts), and parts as small as 5 bytes. */
const registryOptions = { fsync: false, minPartSize: 5 }

export interface Gateway {
  app: FastifyInstance
  registry: BucketRegistry
  dataDir: string
}

/** Buckets: `photos` (private) and `site` (public). Multipart parts may be as small as 5 bytes. */
export async function gateway (t: Test, config: Partial<GatewayConfig> = {}): Promise<Gateway> {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, registryOptions)
  await registry.create('photos')
  await registry.create('site', { public: true })
  return await serving(t, dataDir, registry, config)
}

/** A gateway started again on `dataDir` (what a restart reads: nothing cached), after `gateway`'s was closed. */
export async function restarted (t: Test, dataDir: string, config: Partial<GatewayConfig> = {}): Promise<Gateway> {
  return await serving(t, dataDir, await openRegistry(dataDir, registryOptions), config)
}

async function serving (t: Test, dataDir: string, registry: BucketRegistry, config: Partial<GatewayConfig>): Promise<Gateway> {
  const app = await buildApp({
    dataDir, host: '127.0.0.1', token, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry, ...config
  })
  t.teardown(async () => { await app.close(); await registry.close() })
  return { app, registry, dataDir }
}
