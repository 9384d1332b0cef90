/**
 * `fsbucket serve`: one server process, or a cluster primary and its
 * workers, from start-up checks to shutdown.
 *
 * Start-up fails fast, with one line naming what is wrong: an unwritable
 * data directory or bucket (preflight.ts), a port in use or an address that
 * cannot be listened on. With `--workers N` a worker that cannot listen
 * tells the primary, which stops everything at once instead of starting
 * workers that can never listen either.
 *
 * A worker that dies is replaced after a back-off (100 ms, doubling up to
 * 10 s, counted over the last minute); more than five deaths within a
 * minute is a crash loop, and the primary stops the server with a message
 * saying so (exit code 1).
 *
 * Shutdown: the first SIGINT or SIGTERM drains. The server stops accepting
 * connections, lets requests in flight finish for at most the drain timeout
 * (`--drain-timeout`, default 10 s) and exits 0, or 1 when the timeout cut
 * requests short. A second signal exits at once (1). Every commit the server
 * acknowledged is durable either way; an upload cut short is discarded.
 * Workers ignore SIGINT (a terminal's Ctrl-C reaches the whole process
 * group; the primary decides) and are told to drain over the cluster's IPC
 * channel, so one Ctrl-C never counts as two.
 */
import cluster from 'node:cluster'
import { promises as fsp } from 'node:fs'
import path from 'node:path'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from '../app.js'
import type { BucketRegistry } from '../bucket/index.js'
import { openRegistry, shareChecksWithinTurns, type OpenFsRegistryOptions } from '../index.js'
import { consoleUrl } from '../console/serve.js'
import { isLoopbackHost } from '../http/auth.js'
import { createLogger, lazyChildLogger } from '../http/logger.js'
import { parseRouteList, parseRouteSpec, routeHostsOf, type PublicRoute } from '../http/target.js'
import { managementCredentials } from '../mgmt/cli.js'
import { buildS3App, s3AccessPolicy, s3CredentialFrom, s3StartupNote } from '../s3/index.js'
import { idleConnectionListener, inConnectionOrder, whenAnswered } from '../http/connection.js'
import { checkWritable, StartupError } from './preflight.js'
import { guardS3Site } from './s3-guard.js'
import { parseJsonOf } from '../stores/fs/atomic.js'

export interface ServeOptions {
  data: string
  /** A `postgres://` catalog shared by several gateways (`--catalog`); absent: SQLite per bucket. */
  catalog?: string
  /** Connections each process may open to the catalog (`--catalog-connections`; the command line always gives one, 10 by default). */
  catalogConnections?: number
  host: string
  port: number
  token?: string
  public: string[]
  route: string[]
  fsync: boolean
  logLevel: string
  workers: number
  sweepInterval: number
  defaultBucket: string
  /** Seconds a connection may stay silent; also the deadline of a request's headers. */
  idleTimeout: number
  /** Seconds the first signal lets requests in flight finish. */
  drainTimeout: number
  apiToken?: string
  apiEmail?: string
  apiKey?: string
  /** Port of the S3-compatible API (src/s3/), in the same processes; 0 = off. */
  s3Port: number
  s3Domain: string[]
  s3AccessKeyId?: string
  s3SecretAccessKey?: string
}

/** Worker deaths within `crashWindowMs` that make a crash loop. */
const maxDeaths = 5
const crashWindowMs = 60_000
const firstRestartDelayMs = 100
const maxRestartDelayMs = 10_000

interface ListenFailed { fsbucket: 'listen-failed', message: string }
interface Drain { fsbucket: 'drain' }

function isMessage<T extends { fsbucket: string }> (message: unknown, kind: T['fsbucket']): message is T {
  return typeof message === 'object' && message !== null && (message as { fsbucket?: unknown }).fsbucket === kind
}

/** Public routes from flags/environment, then `<dataDir>/routes.json` (an array of route specs). */
export async function loadRoutes (dataDir: string, specs: string[]): Promise<PublicRoute[]> {
  const routes = specs.flatMap(parseRouteList)
  const file = path.join(dataDir, 'routes.json')
  let text: string | null = null
  try {
    text = await fsp.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  if (text !== null) {
    const listed = parseJsonOf<unknown>(file, text)
    if (!Array.isArray(listed) || !listed.every(s => typeof s === 'string')) {
      throw new TypeError(`${file} must be a JSON array of route specs such as "cdn.localhost=site"`)
    }
    routes.push(...listed.map(parseRouteSpec))
  }
  return routes
}

/** Creates the first bucket of an empty data directory, so the README's curl examples work at once. */
async function ensureFirstBucket (registry: BucketRegistry, name: string, log: Logger): Promise<void> {
  if ((await registry.list()).length > 0) return
  try {
    await registry.create(name)
    log.info({ bucket: name }, 'created the first bucket')
  } catch (err) {
    if ((err as { code?: number }).code !== 10004) throw err
  }
}

function startupNotes (options: ServeOptions, log: Logger): void {
  if (options.token === undefined) {
    if (isLoopbackHost(options.host)) {
      log.warn('no token configured: accepting writes and private reads without credentials, because the server listens on loopback only (foreign Host names and cross-site writes are refused)')
    } else {
      log.warn(`no token configured and listening on ${options.host}: writes and private reads are refused; set --token or FSBUCKET_TOKEN`)
    }
  }
  if (!options.fsync) log.warn('fsync is off: acknowledged writes may be lost in a crash')
}

function listenFailure (err: unknown, options: ServeOptions, port: number): StartupError {
  const code = (err as NodeJS.ErrnoException).code
  const where = `port ${port} on ${options.host}`
  if (code === 'EADDRINUSE') return new StartupError(`cannot listen: ${where} is already in use (EADDRINUSE)`)
  if (code === 'EACCES') return new StartupError(`cannot listen: no permission to use ${where} (EACCES)`)
  if (code === 'EADDRNOTAVAIL') return new StartupError(`cannot listen: ${options.host} is not an address of this machine (EADDRNOTAVAIL)`)
  return new StartupError(`cannot listen on ${where}: ${(err as Error).message}`)
}

/**
 * Drain on the first signal (or the primary's word), exit at once on the
 * second. Installed before the app is built, so a signal during start-up
 * counts too; the drain itself starts once the app exists.
 */
function handleShutdown (options: ServeOptions, inWorker: boolean): (app: FastifyInstance, s3: FastifyInstance | null, registry: BucketRegistry) => boolean {
  let server: { app: FastifyInstance, s3: FastifyInstance | null, registry: BucketRegistry } | null = null
  let reason: string | null = null
  const drain = (): void => {
    if (server === null || reason === null) return
    const { app, s3, registry } = server
    app.log.info({ reason, drainTimeout: options.drainTimeout }, 'draining: finishing requests in flight (a second signal exits at once)')
    setTimeout(() => {
      app.log.warn({ drainTimeout: options.drainTimeout }, 'drain timeout: exiting with requests in flight')
      process.exit(1)
    }, options.drainTimeout * 1000).unref()
    Promise.all([app.close(), s3?.close()])
      .then(async () => { await registry.close() })
      .then(() => process.exit(0), err => { app.log.error({ err }, 'close failed'); process.exit(1) })
  }
  const onSignal = (signal: string): void => {
    if (reason !== null) {
      server?.app.log.warn({ signal }, 'second signal: exiting now')
      process.exit(1)
    }
    reason = signal
    drain()
  }
  process.on('SIGTERM', onSignal)
  if (inWorker) {
    process.on('SIGINT', () => {})
    process.on('message', message => {
      if (!isMessage<Drain>(message, 'drain') || reason !== null) return
      reason = 'asked by the primary'
      drain()
    })
  } else {
    process.on('SIGINT', onSignal)
  }
  /** Hands over the app; false when a signal came first (the drain has begun: do not listen). */
  return (app, s3, registry) => {
    server = { app, s3, registry }
    drain()
    return reason === null
  }
}

/** The registry's options from the command line (the primary and each worker open their own). */
function registryOptions (options: ServeOptions): OpenFsRegistryOptions {
  return { fsync: options.fsync, catalog: options.catalog, catalogConnections: options.catalogConnections }
}

/** One server process: alone (`--workers 1`), or a worker of the primary below. */
export async function serveOne (options: ServeOptions, inWorker: boolean): Promise<void> {
  const serving = handleShutdown(options, inWorker)
  if (!inWorker) await checkWritable(options.data)
  const registry = await openRegistry(options.data, registryOptions(options))
  const routes = await loadRoutes(options.data, options.route)
  const app = await buildApp({
    dataDir: options.data,
    host: options.host,
    token: options.token ?? null,
    publicBuckets: options.public,
    routes,
    fsync: options.fsync,
    logLevel: options.logLevel,
    idleTimeout: options.idleTimeout,
    management: await managementCredentials(options, isLoopbackHost(options.host), registry.state('mgmt')),
    registry
  })
  const s3Policy = s3AccessPolicy(s3CredentialFrom(options), options.token ?? null, isLoopbackHost(options.host), options.public)
  const s3 = options.s3Port === 0
    ? null
    : await buildS3App({
      registry,
      policy: s3Policy,
      domains: options.s3Domain,
      logLevel: options.logLevel,
      // One log for both ports: the same destination and format, lines alike.
      logger: app.log,
      // The gateway port's connection promises (idle timeout, request order), kept the same way.
      connections: { idleTimeoutMs: options.idleTimeout * 1000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered },
      childLoggerFactory: lazyChildLogger as unknown as FastifyServerOptions['childLoggerFactory']
    })
  if (s3 !== null && s3Policy.anonymousWrites) {
    guardS3Site(s3, { routeHosts: routeHostsOf(routes), domains: options.s3Domain, registry })
  }
  const log = app.log as unknown as Logger
  if (!inWorker) {
    startupNotes(options, log)
    await ensureFirstBucket(registry, options.defaultBucket, log)
    if (options.sweepInterval > 0) registry.startSweeper(options.sweepInterval * 1000, err => log.error({ err }, 'sweep failed'))
  }
  if (!serving(app, s3, registry)) return
  // Requests arrive through the event loop here, so the stores may share their looks at the catalogs and settings within a turn (stores/turn.ts).
  shareChecksWithinTurns(() => true)
  let port = options.port
  try {
    await app.listen({ host: options.host, port: options.port })
    port = options.s3Port
    await s3?.listen({ host: options.host, port: options.s3Port })
  } catch (err) {
    const failure = listenFailure(err, options, port)
    if (!inWorker || process.send === undefined) throw failure
    // The primary prints it, once, and stops the other workers.
    const message: ListenFailed = { fsbucket: 'listen-failed', message: failure.message }
    await new Promise(resolve => process.send?.(message, undefined, {}, resolve))
    process.exit(1)
  }
  if (!inWorker) {
    if (s3 !== null) s3.log.info(...s3StartupNote(s3Policy, options.host, options.s3Port))
    const address = app.server.address()
    const url = consoleUrl(options.host, address !== null && typeof address === 'object' ? address.port : options.port)
    log.info({ url }, `web console: ${url}`)
  }
}

/** The cluster primary: checks, first bucket, sweeper, workers, restarts, shutdown. */
export async function servePrimary (options: ServeOptions): Promise<void> {
  const log = createLogger({ level: options.logLevel })
  await checkWritable(options.data)
  // What every worker would refuse as it starts, refused here once: one line and exit 1, not workers dying in turn.
  s3CredentialFrom(options)
  await loadRoutes(options.data, options.route)
  startupNotes(options, log)
  const registry = await openRegistry(options.data, registryOptions(options))
  // The management API's credentials file too, which every worker reads as it starts.
  await managementCredentials(options, isLoopbackHost(options.host), registry.state('mgmt')).catch(async err => {
    await registry.close()
    throw err
  })
  await ensureFirstBucket(registry, options.defaultBucket, log)
  if (options.sweepInterval > 0) registry.startSweeper(options.sweepInterval * 1000, err => log.error({ err }, 'sweep failed'))

  let stopping = false
  let exitCode = 0
  const deaths: number[] = []
  const workers = (): Array<NonNullable<(typeof cluster.workers & object)[string]>> =>
    Object.values(cluster.workers ?? {}).filter(w => w !== undefined)
  const exitNow = (code: number): void => {
    for (const worker of workers()) worker.process.kill('SIGKILL')
    void registry.close().finally(() => process.exit(code))
  }
  /** Stops the server because it cannot run: one line on stderr, exit 1. */
  const fail = (message: string): void => {
    if (stopping) return
    stopping = true
    console.error(message)
    exitNow(1)
  }

  cluster.on('message', (_worker, message) => {
    if (isMessage<ListenFailed>(message, 'listen-failed')) fail(message.message)
  })
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) exitCode = 1
      if (workers().length === 0) void registry.close().finally(() => process.exit(exitCode))
      return
    }
    const now = Date.now()
    deaths.push(now)
    while (deaths[0] < now - crashWindowMs) deaths.shift()
    if (deaths.length > maxDeaths) {
      fail(`workers keep dying (${deaths.length} exits within ${crashWindowMs / 1000} s, the last with ${signal ?? `code ${code}`}): stopping the server`)
      return
    }
    const delay = Math.min(firstRestartDelayMs * 2 ** (deaths.length - 1), maxRestartDelayMs)
    log.error({ worker: worker.process.pid, code, signal, restartInMs: delay }, 'worker died; starting another')
    setTimeout(() => { if (!stopping) cluster.fork() }, delay)
  })

  const stop = (signal: string): void => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now')
      exitNow(1)
      return
    }
    stopping = true
    log.info({ signal, workers: workers().length, drainTimeout: options.drainTimeout }, 'draining workers (a second signal exits at once)')
    const drain: Drain = { fsbucket: 'drain' }
    for (const worker of workers()) if (worker.isConnected()) worker.send(drain)
    // The workers time out on their own; this only catches one that cannot.
    setTimeout(() => { exitCode = 1; exitNow(1) }, options.drainTimeout * 1000 + 2000).unref()
    if (workers().length === 0) exitNow(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)

  let listening = 0
  const listeners = options.s3Port === 0 ? 1 : 2
  cluster.on('listening', worker => {
    // A worker that started after the signal missed the word.
    if (stopping) worker.send({ fsbucket: 'drain' } satisfies Drain)
    if (++listening === options.workers * listeners) {
      log.info({ host: options.host, port: options.port, workers: options.workers, data: path.resolve(options.data) }, 'serving')
      if (options.s3Port !== 0) {
        log.info(...s3StartupNote(s3AccessPolicy(s3CredentialFrom(options), options.token ?? null, isLoopbackHost(options.host), options.public), options.host, options.s3Port))
      }
      log.info({ url: consoleUrl(options.host, options.port) }, `web console: ${consoleUrl(options.host, options.port)}`)
    }
  })
  for (let i = 0; i < options.workers; i++) cluster.fork()
}
