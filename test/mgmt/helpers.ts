/** A Fastify app with only the management API, on a registry in a test directory. */
import Fastify, { type FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { managementApi, type ManagementCredentials } from '../../src/mgmt/index.js'
import { testdir } from '../testdir.js'

export const token = 'test-token-0123456789abcdef'
export const auth = { authorization: `Bearer ${token}` }
export const accountId = '023e105f4ecef8ad9ca31a8372d0c353'

export interface ManagementHarness {
  app: FastifyInstance
  registry: BucketRegistry
  dir: string
}

export async function buildApp (t: Test, options: { dir?: string, credentials?: ManagementCredentials, clock?: () => Date, publicBuckets?: ReadonlySet<string> } = {}): Promise<ManagementHarness> {
  const dir = options.dir ?? testdir(t)
  const registry = await openRegistry(dir, { fsync: false })
  const app = Fastify()
  await app.register(managementApi, {
    prefix: '/client/v4',
    registry,
    credentials: options.credentials ?? { tokens: [token], keys: [{ email: 'user@example.test', key: 'k'.repeat(37) }] },
    clock: options.clock,
    publicBuckets: options.publicBuckets
  })
  t.teardown(async () => {
    await app.close()
    await registry.close()
  })
  return { app, registry, dir }
}

/** Injects a JSON request with the test token and returns status and parsed body. */
export async function call (app: FastifyInstance, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = auth): Promise<{ status: number, body: any, headers: Record<string, unknown> }> {
  const response = await app.inject({ method, url: `/client/v4${url}`, headers, ...(body === undefined ? {} : { payload: body as object }) })
  return { status: response.statusCode, body: response.json(), headers: response.headers }
}

export async function createZone (app: FastifyInstance, name: string, account = accountId): Promise<any> {
  const { status, body } = await call(app, 'POST', '/zones', { name, account: { id: account } })
  if (status !== 200) throw new Error(`zone ${name}: ${JSON.stringify(body)}`)
  return body.result
}
