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

/**
 * Chromium's console errors and uncaught page errors fail the test they
 * happen in: an invalid `pattern` attribute, a CSP refusal or an exception
 * shows only there. A test that provokes one on purpose allows it by its
 * text (`allowConsoleErrors`), for that test alone.
 */
const seenErrors: string[] = []
let allowed: RegExp[] = []
/** Gateways a test has closed: a page still open on one fails to reach it, which is the test's end, not an error of the console. */
const closedOrigins = new Set<string>()

function consoleError (text: string): void {
  if (allowed.some(pattern => pattern.test(text))) return
  if ([...closedOrigins].some(origin => text.includes(`(${origin}/`))) return
  seenErrors.push(text)
}

/** Lets errors matching `patterns` pass in the current test (until the next one starts). */
export function allowConsoleErrors (...patterns: RegExp[]): void {
  allowed.push(...patterns)
}

/** A browser context on a fresh user-data-dir, closed and removed at teardown; console errors fail each child test of `t`. */
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
  context.on('console', message => { if (message.type() === 'error') consoleError(`console error: ${message.text()} (${message.location().url})`) })
  context.on('weberror', error => { consoleError(`page error: ${error.error().message}`) })
  t.beforeEach(() => { allowed = [] })
  // Asserted on the file's test: the child has ended when afterEach runs.
  t.afterEach(child => {
    t.same(seenErrors.splice(0), [], `no console error or page error in Chromium during "${child.name}"`)
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
export async function listeningGateway (t: Test, token: string | null, servedAs = '127.0.0.1'): Promise<ListeningGateway> {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('photos')
  // `servedAs`: the address the server's policy is judged by (`0.0.0.0`: beyond loopback); it listens on 127.0.0.1 all the same.
  const app = await buildApp({ dataDir, host: servedAs, token, publicBuckets: [], routes: [], fsync: false, logLevel: false, registry })
  let base = ''
  t.teardown(async () => {
    if (base !== '') closedOrigins.add(base)
    await app.close()
    await registry.close()
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('no port')
  base = `http://127.0.0.1:${address.port}`
  return { base, registry }
}
