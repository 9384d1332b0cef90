/**
 * A real headless Chromium (Debian's `chromium` package, driven by
 * playwright-core; no browser is ever downloaded) and a gateway listening on
 * a real socket, for the web console's tests. A missing chromium fails the
 * test with a message saying how to install it: it never skips.
 */
import type { Test } from 'tap'
import { existsSync, promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { chromium, type BrowserContext } from 'playwright-core'
import { buildApp } from '../../src/app.js'
import type { BucketRegistry } from '../../src/bucket/index.js'
import { openRegistry } from '../../src/index.js'
import { testdir } from '../testdir.js'

export const chromiumPath = process.env.FSBUCKET_CHROMIUM ?? '/usr/bin/chromium'

export const launchFlags = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'
]

/** A browser context on a fresh user-data-dir, closed and removed at teardown. */
export async function browser (t: Test): Promise<BrowserContext> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`chromium not found at ${chromiumPath}: install it with "apt-get install -y chromium" (.ci/run does), or set FSBUCKET_CHROMIUM`)
  }
  const profile = await fsp.mkdtemp(path.join(os.tmpdir(), 'fsbucket-chromium-'))
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: launchFlags,
    acceptDownloads: true,
    viewport: { width: 1280, height: 860 }
  })
  t.teardown(async () => {
    await context.close()
    await fsp.rm(profile, { recursive: true, force: true })
  })
  return context
}

export interface ListeningGateway {
  base: string
  registry: BucketRegistry
}

/** A gateway on 127.0.0.1 (any free port) over a fresh data directory with a private bucket `photos`. */
export async function listeningGateway (t: Test, token: string | null): Promise<ListeningGateway> {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  const app = await buildApp({ dataDir, host: '127.0.0.1', token, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  t.teardown(async () => { await app.close(); await registry.close() })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return { base: `http://127.0.0.1:${address.port}`, registry }
}
