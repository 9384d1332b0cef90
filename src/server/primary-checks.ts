/**
 * What the cluster's primary (serve.ts) does once its workers are forked:
 * the checks every worker would otherwise fail in turn, the first bucket,
 * the sweeper, and the lines that say the server is serving.
 *
 * Apart from serve.ts so that the primary forks first: these modules (the
 * stores and the SQLite driver, the credentials, TLS) load while the workers
 * load their doors, not before the workers exist.
 */
import path from 'node:path'
import type { Logger } from 'pino'
import type { BucketRegistry } from '../bucket/index.js'
import { consoleUrl } from '../console/serve.js'
import { managementCredentials, managementKeyPair } from '../mgmt/auth.js'
import { s3AccessPolicy, s3CredentialFrom, s3StartupNote } from '../s3/auth.js'
import { answerWorkersMetrics, ProcessMetrics } from './metrics.js'
import { loopbackOnlyHost } from './listen-host.js'
import { checkWritable, privateManagementState } from './preflight.js'
import type { GatewayOptions, PrimaryRead } from './gateway.js'
import { checkPorts, ensureFirstBucket, loadRoutes, openServerRegistry, routeNotes, startSweeper, startupNotes } from './startup.js'
import { readTlsPair, reloadedPair, tlsFilesFrom, type TlsFiles } from './tls.js'

/** What of `serve`'s options (serve.ts's ServeOptions) the primary's checks read. */
type ServeOptions = Omit<GatewayOptions, 's3Port'> & { workers: number, s3Port: number }

/** `https` when the server was given a certificate. */
function schemeOf (options: ServeOptions): 'http' | 'https' {
  return tlsFilesFrom(options) === null ? 'http' : 'https'
}

/**
 * Before any worker may build and listen: every check a worker would
 * otherwise fail in turn, the first bucket, the sweeper (and the metrics it
 * counts in), and the ports (first). `opened` is handed the registry as soon as it
 * is open, for the primary to close.
 */
export async function primaryChecks (options: ServeOptions, log: Logger, opened: (registry: BucketRegistry) => void): Promise<{ loopbackOnly: boolean, tls: PemPair | null, reloadTls: (() => Promise<PemPair | null>) | null, primaryRead: PrimaryRead }> {
  // Read here once and handed to every worker (a file that is wrong is refused once, and a worker started later gets the same pair).
  const tlsFiles = tlsFilesFrom(options)
  const tls = tlsFiles === null ? null : pemOf(await readTlsPair(tlsFiles))
  // What every worker would refuse as it starts, refused here once: one line and exit 1, not workers dying in turn.
  s3CredentialFrom(options)
  managementKeyPair(options.apiEmail, options.apiKey)
  const loopbackOnly = await loopbackOnlyHost(options.host)
  // Before anything is made (the data directory, the first bucket) and before any worker listens: a busy port is one
  // line, before any line says the other port listens.
  await checkPorts(options.host, [{ port: options.port, role: 'HTTP gateway' }, { port: options.s3Port, role: 'S3 API' }])
  await checkWritable(options.data)
  for (const warning of await privateManagementState(options.data)) log.warn(warning)
  const routes = await loadRoutes(options.data, options.route)
  startupNotes({ ...options, loopbackOnly }, log)
  routeNotes(routes, log)
  const registry = await openServerRegistry(options, (fields, message) => { log.warn(fields, message) })
  opened(registry)
  // The management API's credentials file too: read here once, as routes.json is, and handed to every worker.
  const credentials = await managementCredentials(options, loopbackOnly, registry.state('mgmt'))
  await ensureFirstBucket(registry, options.defaultBucket, log)
  // The primary's own metrics (the sweeper, its catalog pool, the process), added to the workers' when one is asked.
  const metrics = options.metrics === true ? new ProcessMetrics() : null
  if (metrics !== null) answerWorkersMetrics(metrics)
  startSweeper(options.sweepInterval, registry, metrics, log)
  const reloadTls = tlsFiles === null ? null : async (): Promise<PemPair | null> => await reloadPemPair(tlsFiles, log)
  return { loopbackOnly, tls, reloadTls, primaryRead: { routes, credentials } }
}

/** A certificate and key as PEM text: what the cluster's messages (JSON) carry to a worker. */
export interface PemPair { cert: string, key: string }

function pemOf (pair: { cert: Buffer | string, key: Buffer | string }): PemPair {
  return { cert: pair.cert.toString(), key: pair.key.toString() }
}

/** The files read and checked again for SIGHUP: the pair to hand the workers, or null when it failed (logged; the old pair stays). */
async function reloadPemPair (files: TlsFiles, log: Logger): Promise<PemPair | null> {
  const pair = await reloadedPair(files, log)
  return pair === null ? null : pemOf(pair)
}

/** The lines once every worker listens: where the server serves (`options`' ports are the bound ones), the S3 port's access, the console's URL. */
export function logServing (options: ServeOptions, loopbackOnly: boolean, log: Logger): void {
  const scheme = schemeOf(options)
  // The message stays 'serving' (scripts wait for it); the fields name each port, as the workers' lines did.
  log.info({ host: options.host, httpGatewayPort: options.port, s3ApiPort: options.s3Port === 0 ? null : options.s3Port, scheme, workers: options.workers, data: path.resolve(options.data) }, 'serving')
  if (options.s3Port !== 0) {
    log.info(...s3StartupNote(s3AccessPolicy(s3CredentialFrom(options), options.token ?? null, loopbackOnly, options.public), options.host, options.s3Port, scheme))
  }
  log.info({ url: consoleUrl(options.host, options.port, scheme) }, `web console: ${consoleUrl(options.host, options.port, scheme)}`)
}
