/**
 * What a server does once as it starts, before or beside its doors: the
 * checks (the ports, routes.json), the start-up notes, opening the registry,
 * the first bucket, the sweeper.
 *
 * Kept apart from gateway.ts, which builds the doors, because the cluster's
 * primary runs all of this and serves nothing (serve.ts starts or adopts the workers,
 * then loads primary-checks.ts, which uses this): it loads neither Fastify
 * nor a door. A test (test/server/startup-modules.test.ts) records what the
 * primary loads.
 */
import { promises as fsp } from 'node:fs'
import { createServer } from 'node:net'
import path from 'node:path'
import type { Logger } from 'pino'
import { isBucketError, isSettingsDamaged, Queues, type BucketRegistry, type RegistryWarn } from '../bucket/index.js'
import { parseRouteSpec, type PublicRoute } from '../http/target.js'
import { parseJsonOf } from '../stores/fs/atomic.js'
import type { ProcessMetrics } from './metrics.js'
import { openMemoryRegistry, openRegistry } from './open.js'
import { StartupError, why } from './preflight.js'

/** Where a server's buckets are (GatewayOptions' fields of the same names). */
interface RegistryPlace {
  data: string
  memory?: boolean
  catalog?: string
  catalogConnections?: number
  fsync: boolean
}

/** Public routes from flags/environment, then `<dataDir>/routes.json` (an array of route specs); no file with `dataDir` null. */
export async function loadRoutes (dataDir: string | null, specs: string[]): Promise<PublicRoute[]> {
  // One route each: the command line takes a --route whole and splits FSBUCKET_ROUTES itself (main.ts).
  const routes = specs.map(spec => parseRouteSpec(spec))
  if (dataDir === null) return routes
  const file = path.join(dataDir, 'routes.json')
  let text: string | null = null
  try {
    text = await fsp.readFile(file, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new StartupError(`cannot read ${file}: ${why(err)}`, { cause: err })
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

/** The registry the options name: in memory, or on the data directory (and its catalog). */
export async function openServerRegistry (options: RegistryPlace, warn?: RegistryWarn): Promise<BucketRegistry> {
  if (options.memory === true) return openMemoryRegistry({ warn })
  return await openRegistry(options.data, { fsync: options.fsync, catalog: options.catalog, catalogConnections: options.catalogConnections, warn })
}

/**
 * Creates the first bucket of an empty data directory, so the README's curl
 * examples work at once. A bucket whose settings are damaged does not stop
 * the start: the server serves the others and answers 10915 for it (the
 * registry's warning names the file), and a directory holding one is not
 * empty, so no first bucket is made beside it.
 */
export async function ensureFirstBucket (registry: BucketRegistry, name: string, log: Logger): Promise<void> {
  let buckets
  try {
    buckets = await registry.list({ strict: true })
  } catch (err) {
    // The registry's warning has named the file and what is wrong.
    if (isSettingsDamaged(err)) return
    throw err
  }
  if (buckets.length > 0) return
  try {
    await registry.create(name)
    log.info({ bucket: name }, 'created the first bucket')
  } catch (err) {
    if (!isBucketError(err) || err.errorName !== 'BucketAlreadyExists') throw err
  }
}

/** The notes on what the server will do; `loopbackOnly` as listen-host.ts judged the host. */
export function startupNotes (options: { memory?: boolean, token?: string, host: string, fsync: boolean, loopbackOnly: boolean }, log: Logger): void {
  if (options.memory === true) {
    log.warn('memory mode: nothing is kept; buckets and objects live in this process and are lost when it stops')
  }
  if (options.token === undefined) {
    if (options.loopbackOnly) {
      log.warn('no token configured: accepting writes and private reads without credentials, because the server listens on loopback only (foreign Host names and cross-site writes are refused)')
    } else {
      log.warn(`no token configured and listening on ${options.host}: writes and private reads are refused; set --token or FSBUCKET_TOKEN`)
    }
  }
  if (!options.fsync && options.memory !== true) log.warn('fsync is off: acknowledged writes may be lost in a crash')
}

/** One line a public route (from --route, FSBUCKET_ROUTES or routes.json), so that the log says which are served. */
export function routeNotes (routes: PublicRoute[], log: Logger): void {
  for (const route of routes) {
    const where = route.host === null ? `${route.pathPrefix} on every host name` : `${route.host}${route.pathPrefix}`
    log.info({ host: route.host, path: route.pathPrefix, bucket: route.bucket }, `public route: ${where} serves the bucket ${route.bucket}, read-only`)
  }
}

/** Which port a listener is, for the start-up lines and the errors. */
export type PortRole = 'HTTP gateway' | 'S3 API'

/** How each port is chosen, for a refusal that asks for another. */
const portOptions: Record<PortRole, string> = {
  'HTTP gateway': '--port (FSBUCKET_PORT)',
  'S3 API': '--s3-port (FSBUCKET_S3_PORT; 0 turns the S3 port off)'
}

/** The default port of `wrangler dev`, which is this server's default too (a Worker's local bucket and this one side by side). */
const wranglerDevPort = 8787

export function listenFailure (err: unknown, host: string, port: number, role?: PortRole): StartupError {
  const code = (err as NodeJS.ErrnoException).code
  const where = `port ${port} on ${host}`
  const cause = { cause: err }
  const whose = role === undefined ? '' : ` (the ${role} port)`
  if (code === 'EADDRINUSE') {
    const choose = role === undefined ? 'choose another port' : `choose another port with ${portOptions[role]}`
    const wrangler = port === wranglerDevPort ? `; ${wranglerDevPort} is also the default port of \`wrangler dev\`, which may be running: stop it or ${choose}` : role === undefined ? '' : `; ${choose}`
    return new StartupError(`cannot listen: ${where} is already in use (EADDRINUSE)${whose}${wrangler}`, cause)
  }
  if (code === 'EACCES') return new StartupError(`cannot listen: no permission to use ${where} (EACCES)${whose}`, cause)
  if (code === 'EADDRNOTAVAIL') return new StartupError(`cannot listen: ${host} is not an address of this machine (EADDRNOTAVAIL)`, cause)
  return new StartupError(`cannot listen on ${where}: ${(err as Error).message}${whose}`, cause)
}

/**
 * Takes and gives back each port before the server listens on any, so a
 * port that cannot be had is reported before a line says another one is
 * listening (the server would exit at once, and the line would have been
 * false). Port 0 (any free port) needs no check. A port taken between the
 * check and the listen is still reported, by the listen itself.
 *
 * Two roles given the same port are refused first, saying so (the second
 * listen would otherwise say the port is in use, by the first).
 *
 * A client already trying the port (a script waiting for the server) may
 * be let in while the probe listens: its connection is reset at once, so it
 * tries again, and the probe's close, which waits for its connections, is
 * not held up by one that would stay open (a busy primary, its workers
 * loading beside it, can take a while between listening and closing).
 */
export async function checkPorts (host: string, ports: Array<{ port: number, role: PortRole }>): Promise<void> {
  const asked = ports.filter(p => p.port !== 0)
  const twice = asked.find((p, i) => asked.findIndex(q => q.port === p.port) !== i)
  if (twice !== undefined) {
    throw new StartupError(`cannot listen: the ${asked.filter(p => p.port === twice.port).map(p => p.role).join(' and the ')} ports are both ${twice.port} (--port, --s3-port): each needs its own`)
  }
  for (const { port, role } of ports) {
    if (port === 0) continue
    const probe = createServer(socket => { socket.destroy() })
    await new Promise<void>((resolve, reject) => {
      probe.once('error', err => { reject(listenFailure(err, host, port, role)) })
      probe.listen({ host, port, exclusive: true }, () => { probe.close(() => { resolve() }) })
    })
  }
}

/**
 * Sweeps every `sweepInterval` seconds (0: never), counted in the metrics
 * and logged when one fails; after each sweep, the messages of deleted
 * queues are dropped (queues.ts's `dropOrphans`).
 */
export function startSweeper (sweepInterval: number, registry: BucketRegistry, metrics: ProcessMetrics | null, log: Logger): void {
  if (sweepInterval === 0) return
  const failed = (err: unknown): void => {
    metrics?.sweepFailed()
    log.error({ err }, 'sweep failed')
  }
  registry.startSweeper(sweepInterval * 1000, failed, (report, ms) => {
    metrics?.swept(report, ms)
    new Queues(registry).dropOrphans().then(dropped => {
      if (dropped > 0) log.info({ dropped }, 'messages of deleted queues dropped')
    }, failed)
  })
}
