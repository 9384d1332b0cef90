/**
 * The composition root of one server process: configuration → registry →
 * the gateway's app (routes, management API, console) → the S3 app → listen.
 * `fsbucket serve` (serve.ts: signals, workers, restarts) and `startServer`
 * (embed.ts: the server inside a test suite's process) both build their
 * servers here, so the two cannot drift apart.
 *
 * What is done once per server, not once per worker (the start-up notes,
 * the first bucket, the sweeper, the start-up lines), runs only in the
 * `primary` process: the lone process, or the cluster's primary (which
 * serve.ts runs itself, with the helpers of startup.ts and without this
 * module, so it loads no door).
 *
 * With `memory` the registry lives in this process (stores/memory): the
 * data directory, `routes.json`, the writability checks and fsync play no
 * part, and nothing is written to disk.
 */
import { pushFailureLogger, pushStopGraceMs, startQueuePush, type QueuePush, type StopQueuePush } from './queue-push.js'
import type { Server as HttpsServer } from 'node:https'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import type { Logger } from 'pino'
import { buildApp } from '../app.js'
import type { BucketRegistry } from '../bucket/index.js'
import { consoleUrl } from '../console/serve.js'
import { isLoopbackName } from '../http/site-guard.js'
import { beginAlone, connectionsOf, idleConnectionListener, inConnectionOrder, receivingBody, whenAnswered } from './connection.js'
import { lazyChildLogger } from './logger.js'
import { routeHostsOf, type PublicRoute } from '../http/target.js'
import { managementCredentials, managementKeyPair, type ManagementCredentials } from '../mgmt/auth.js'
import { s3AccessPolicy, s3CredentialFrom, s3StartupNote, type S3AccessPolicy } from '../s3/auth.js'
import { s3Domains } from '../s3/domains.js'
import { createLogger } from './logger.js'
import { loopbackOnlyHost } from './listen-host.js'
import { ProcessMetrics, workerMetrics } from './metrics.js'
import { readinessChecks } from './readiness.js'
import { checkWritable, privateManagementState } from './preflight.js'
import { shareEndpointOf } from './share-endpoint.js'
import { checkPorts, ensureFirstBucket, listenFailure, loadRoutes, openServerRegistry, routeNotes, startSweeper, startupNotes, type PortRole } from './startup.js'
import { checkTlsPair, readTlsPair, reloadTls, tlsFilesFrom, type TlsPair } from './tls.js'

export interface GatewayOptions {
  /** The data directory (`--data`); not read with `memory`. */
  data: string
  /** Every bucket in this process's memory (`--memory`): nothing on disk, all gone when the server stops. */
  memory?: boolean
  /** A `postgres://` catalog shared by several gateways (`--catalog`); absent: SQLite per bucket. */
  catalog?: string
  /** Connections each process may open to the catalog (`--catalog-connections`; the command line always gives one, 10 by default). */
  catalogConnections?: number
  host: string
  /** Whether `host` reaches loopback only, when the caller judged it already (listen-host.ts); else judged here. */
  loopbackOnly?: boolean
  port: number
  token?: string
  public: string[]
  route: string[]
  fsync: boolean
  logLevel: string
  sweepInterval: number
  defaultBucket: string
  /** Seconds a connection may stay silent; also the deadline of a request's headers. */
  idleTimeout: number
  apiToken?: string
  apiEmail?: string
  apiKey?: string
  /** Port of the S3-compatible API (src/s3/), in the same process; null: no S3 port. */
  s3Port: number | null
  s3Domain: string[]
  s3AccessKeyId?: string
  s3SecretAccessKey?: string
  /** The S3 port's public origin that share links name (`--s3-endpoint`); default: the request's host with the S3 port. */
  s3Endpoint?: string
  /** Count requests and answer `/_metrics` (`--metrics`; off when absent). */
  metrics?: boolean
  /** PEM files of the certificate chain and key both ports serve HTTPS with (`--tls-cert`, `--tls-key`; both or neither: tls.ts). */
  tlsCert?: string
  tlsKey?: string
  /** The certificate chain and key themselves (`startServer`'s `tls`), instead of the files. */
  tls?: TlsPair
  /** Queues pushed to a local app (`--queue-push <queue>=<url>`, queue-push.ts); by the primary only. */
  queuePush?: QueuePush[]
  /** Seconds a stop lets work in flight finish (`serve --drain-timeout`): a push in flight gets half of it, at most 5 s. */
  drainTimeout?: number
  /** What a cluster's primary read and checked once for every worker; absent: read here. */
  primaryRead?: PrimaryRead
}

/**
 * The files a cluster's primary reads for its workers (primary-checks.ts), as
 * it reads the TLS pair: every worker, one started later too, serves what
 * the checks accepted, so a file damaged or half written since cannot stop
 * a replacement worker (nor serve it something the others do not).
 */
export interface PrimaryRead {
  /** The public routes of the flags and of routes.json. */
  routes: PublicRoute[]
  /** The management API's credentials, those of credentials.json among them. */
  credentials: ManagementCredentials
}

/** The gateway of one process, built and not yet listening. */
export interface Gateway {
  app: FastifyInstance
  s3: FastifyInstance | null
  s3Policy: S3AccessPolicy
  registry: BucketRegistry
  /** Listens on both ports; a port that cannot be had is a StartupError naming it. Returns the ports listened on. */
  listen: () => Promise<{ port: number, s3Port: number | null }>
  /** Stops both listeners (requests in flight finish; each connection closes after its last answer, an idle one after `idleGraceMs` without a request, default none), then closes the registry (sweeper, stores, catalog connections). */
  close: (idleGraceMs?: number) => Promise<void>
  /** A forced stop's: cuts the queue push's delivery in flight at once, its batch released (queue-push.ts); nothing without a push. */
  cutPush: () => Promise<void>
  /** A cluster worker's, as it stops: tells the primary its final counts (metrics.ts); nothing in the primary, a process alone or without metrics. */
  sendFinalMetrics: () => Promise<void>
  /** `https` when both ports serve TLS. */
  scheme: 'http' | 'https'
  /** Re-reads the TLS files and serves the new pair (tls.ts), or `pair` when the primary read it; null when the certificate came from no file. */
  reloadTls: ((pair?: TlsPair) => Promise<boolean>) | null
}

/** The port a listening app was given (the one asked for, or the one the system picked for 0). */
function boundPort (app: FastifyInstance, asked: number): number {
  const address = app.server.address()
  return address !== null && typeof address === 'object' ? address.port : asked
}

/**
 * Builds one server process's gateway from its options. `primary`: this
 * process is the whole server or the cluster's primary, so it checks the
 * data directory, prints the notes and the start-up lines, creates the
 * first bucket and runs the sweeper (a worker does none of these).
 * Whatever fails after the registry is open closes what was opened.
 */
export async function buildGateway (options: GatewayOptions, primary: boolean): Promise<Gateway> {
  const memory = options.memory === true
  // The certificate before anything is opened: a wrong file is a one-line start-up error.
  const tlsFiles = tlsFilesFrom(options)
  let tls = options.tls
  if (tls !== undefined) checkTlsPair(tls)
  else if (tlsFiles !== null) tls = await readTlsPair(tlsFiles)
  const scheme = tls === undefined ? 'http' : 'https'
  // From the addresses the host resolves to, not its name alone (listen-host.ts); before anything is opened.
  const loopbackOnly = options.loopbackOnly ?? await loopbackOnlyHost(options.host)
  // What would otherwise fail once the registry is open (the management API's key pair), refused before.
  managementKeyPair(options.apiEmail, options.apiKey)
  const ports: Array<{ port: number, role: PortRole }> = [{ port: options.port, role: 'HTTP gateway' }]
  if (options.s3Port !== null) ports.push({ port: options.s3Port, role: 'S3 API' })
  // Before anything is made (the data directory, the first bucket). A worker shares the primary's listening sockets,
  // which checked the ports before starting it.
  if (primary) await checkPorts(options.host, ports)
  if (primary && !memory) await checkWritable(options.data)
  // Logged with the other notes, once there is a log.
  const stateWarnings = primary && !memory ? await privateManagementState(options.data) : []
  /** The server's log, once there is one: the registry warns there of a bucket whose settings are damaged. */
  let warnLog: Logger | null = null
  const registry = await openServerRegistry(options, (fields, message) => { warnLog?.warn(fields, message) })
  let app: FastifyInstance | null = null
  let s3: FastifyInstance | null = null
  let stopPush: StopQueuePush | null = null
  /** Stops this server's metrics counting the process's catalog commits. */
  let stopCounting: (() => void) | null = null
  // The S3 port share links name: the one asked for until the listener says which it got (port 0 picks one).
  let s3PortBound = options.s3Port
  /** Ends the connections of each listener as it closes (connection.ts), so an answer given during shutdown frees its connection. */
  const endConnections: Array<(idleGraceMs: number) => void> = []
  const close = async (idleGraceMs = 0): Promise<void> => {
    try {
      // The listeners first (readiness fails, nothing new is taken); the push stops beside them, cutting a delivery in flight.
      const stopping = stopPush?.()
      for (const end of endConnections) end(idleGraceMs)
      // Settled, each: a listener whose close fails must not close the registry under a push still releasing its batch.
      const closed = await Promise.allSettled([app?.close(), s3?.close(), stopping])
      const failed = closed.find(c => c.status === 'rejected')
      if (failed !== undefined) throw failed.reason
    } finally {
      stopCounting?.()
      await registry.close()
    }
  }
  try {
    const routes = options.primaryRead?.routes ?? await loadRoutes(memory ? null : options.data, options.route)
    // Each process answers its own readiness; a worker's metrics are the whole server's (metrics.ts).
    const metrics = options.metrics === true ? new ProcessMetrics() : null
    stopCounting = metrics?.stopObserving ?? null
    const ofWorker = metrics === null || primary ? null : workerMetrics(metrics)
    const operator = {
      ready: readinessChecks(memory ? null : options.data, registry, { log: createLogger({ level: options.logLevel }) }),
      metrics: metrics === null ? null : ofWorker?.scrape ?? (async () => await metrics.text())
    }
    app = await buildApp({
      dataDir: options.data,
      host: options.host,
      loopbackOnly,
      token: options.token ?? null,
      publicBuckets: options.public,
      routes,
      fsync: options.fsync,
      logLevel: options.logLevel,
      idleTimeout: options.idleTimeout,
      management: options.primaryRead?.credentials ?? await managementCredentials(options, loopbackOnly, registry.state('mgmt')),
      registry,
      operator,
      meter: metrics?.requests,
      https: tls,
      shareEndpoint: shareEndpointOf({ configured: options.s3Endpoint, scheme, s3Port: () => s3PortBound, host: options.host, domains: s3Domains(options.s3Domain) })
    })
    const s3Policy = s3AccessPolicy(s3CredentialFrom(options), options.token ?? null, loopbackOnly, options.public)
    // The S3 door (its XML parser, its signer) is loaded only with an S3 port: it weighs on every process's memory.
    // Its site guard (development mode) too, with the door, which it answers in (its error document).
    const s3Guard = options.s3Port !== null && s3Policy.anonymousWrites ? await import('./s3-guard.js') : null
    const underS3Domains = s3Guard?.underDomains(options.s3Domain) ?? (() => false)
    s3 = options.s3Port === null
      ? null
      : await (await import('../s3/index.js')).buildS3App({
        registry,
        policy: s3Policy,
        domains: options.s3Domain,
        logLevel: options.logLevel,
        // One log for both ports: the same destination and format, lines alike.
        logger: app.log,
        // The gateway port's connection promises (idle timeout, request order), kept the same way.
        connections: { idleTimeoutMs: options.idleTimeout * 1000, inConnectionOrder, idleListener: idleConnectionListener, whenAnswered, receivingBody },
        childLoggerFactory: lazyChildLogger as unknown as FastifyServerOptions['childLoggerFactory'],
        operator,
        meter: metrics?.requests,
        https: tls,
        // Plain reads beside Fastify, under the site guard's Host rules in development mode (as guardS3Site below).
        readsBeside: {
          beginAlone,
          guard: s3Guard === null ? null : { routeHosts: routeHostsOf(routes), isOwnHost: host => isLoopbackName(host) || underS3Domains(host) }
        }
      })
    if (s3 !== null && s3Guard !== null) s3Guard.guardS3Site(s3, { routeHosts: routeHostsOf(routes), domains: options.s3Domain, registry })
    const log = app.log as unknown as Logger
    warnLog = log
    if (primary) {
      startupNotes({ ...options, loopbackOnly }, log)
      routeNotes(routes, log)
      for (const warning of stateWarnings) log.warn(warning)
      await ensureFirstBucket(registry, options.defaultBucket, log)
      startSweeper(options.sweepInterval, registry, metrics, log)
      if (options.queuePush !== undefined && options.queuePush.length > 0) {
        stopPush = startQueuePush(registry, options.queuePush, { onFailure: pushFailureLogger(log), stopGraceMs: pushStopGraceMs(options.drainTimeout) })
      }
    }
    const gatewayApp = app
    const s3App = s3
    const listen = async (): Promise<{ port: number, s3Port: number | null }> => {
      let role: PortRole = 'HTTP gateway'
      let port = options.port
      try {
        await gatewayApp.listen({ host: options.host, port: options.port, listenTextResolver: address => `HTTP gateway listening at ${address}` })
        if (s3App !== null && options.s3Port !== null) {
          role = 'S3 API'
          port = options.s3Port
          await s3App.listen({ host: options.host, port: options.s3Port, listenTextResolver: address => `S3 API listening at ${address}` })
        }
      } catch (err) {
        throw listenFailure(err, options.host, port, role)
      }
      const bound = { port: boundPort(gatewayApp, options.port), s3Port: s3App === null ? null : boundPort(s3App, options.s3Port ?? 0) }
      s3PortBound = bound.s3Port
      if (primary) {
        if (s3App !== null && bound.s3Port !== null) s3App.log.info(...s3StartupNote(s3Policy, options.host, bound.s3Port, scheme))
        const url = consoleUrl(options.host, bound.port, scheme)
        log.info({ url }, `web console: ${url}`)
      }
      return bound
    }
    const servers = [app, s3].filter(a => a !== null).map(a => a.server as unknown as HttpsServer)
    for (const server of servers) endConnections.push(connectionsOf(server, tls !== undefined).end)
    const reload = tlsFiles === null ? null : async (pair?: TlsPair) => await reloadTls(tlsFiles, servers, log, pair)
    const cutPush = async (): Promise<void> => { await stopPush?.(true) }
    const sendFinalMetrics = async (): Promise<void> => { await ofWorker?.sendFinal() }
    return { app, s3, s3Policy, registry, listen, close, cutPush, sendFinalMetrics, scheme, reloadTls: reload }
  } catch (err) {
    await close().catch(() => {})
    throw err
  }
}
