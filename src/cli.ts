/**
 * The command line, and the composition root: configuration → registry →
 * Fastify app → listen.
 *
 *     fsbucket serve [--data ./data] [--host 127.0.0.1] [--port 8787] [--token T]
 *                    [--public a,b] [--route cdn.localhost=site ...] [--fsync on|off]
 *                    [--log-level info] [--workers N] [--sweep-interval 3600]
 *                    [--default-bucket default] [--s3-port 8788] [--s3-domain s3.example.test ...]
 *                    [--s3-access-key-id ID --s3-secret-access-key SECRET]
 *     fsbucket bucket create <name> [--public] | list | delete <name>   [--data ./data]
 *     fsbucket sweep [--data ./data]
 *
 * Every `serve` flag has an environment variable (FSBUCKET_DATA, ...); a flag
 * beats its variable. `serve --workers N` runs N worker processes on one
 * port (node:cluster); the primary creates the first bucket, runs the
 * sweeper and restarts a worker that dies. SIGINT/SIGTERM stop accepting
 * connections, let requests in flight finish, and exit 0. The S3-compatible
 * API (src/s3/) listens on its own port in the same processes, over the
 * same registry (`--s3-port 0` turns it off).
 */
import cluster from 'node:cluster'
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Command, InvalidArgumentError, Option } from 'commander'
import { pino, type Logger } from 'pino'
import { openRegistry, type BucketRegistry } from './index.js'
import { buildApp, redactedHeaders } from './app.js'
import { isLoopbackHost } from './http/auth.js'
import { parseRouteList, parseRouteSpec, type PublicRoute } from './http/target.js'
import { consoleUrl } from './console/serve.js'
import { managementCredentials, registerManagementCommands } from './mgmt/cli.js'
import { buildS3App, s3AccessPolicy, s3CredentialFrom, s3StartupNote } from './s3/index.js'
import { registerObjectCommands } from './cli/index.js'

export interface ServeOptions {
  data: string
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
  apiToken?: string
  apiEmail?: string
  apiKey?: string
  s3Port: number
  s3Domain: string[]
  s3AccessKeyId?: string
  s3SecretAccessKey?: string
}

function integer (min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`)
    }
    return Number(value)
  }
}

function onOff (value: string): boolean {
  const lower = value.toLowerCase()
  if (['on', 'true', '1', 'yes'].includes(lower)) return true
  if (['off', 'false', '0', 'no'].includes(lower)) return false
  throw new InvalidArgumentError('expected on or off')
}

function nameList (value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map(s => s.trim()).filter(s => s !== '')]
}

function routeSpec (value: string, previous: string[] = []): string[] {
  try {
    for (const spec of value.split(/[\s,]+/).filter(s => s !== '')) parseRouteSpec(spec)
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message)
  }
  return [...previous, value]
}

const dataOption = (): Option => new Option('-d, --data <dir>', 'data directory (one sub-directory per bucket)')
  .env('FSBUCKET_DATA').default('./data')

/** Public routes from flags/environment, then `<dataDir>/routes.json` (an array of route specs). */
export async function loadRoutes (dataDir: string, specs: string[]): Promise<PublicRoute[]> {
  const routes = specs.flatMap(parseRouteList)
  let text: string | null = null
  try {
    text = await fsp.readFile(path.join(dataDir, 'routes.json'), 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  if (text !== null) {
    const listed: unknown = JSON.parse(text)
    if (!Array.isArray(listed) || !listed.every(s => typeof s === 'string')) {
      throw new TypeError(`${path.join(dataDir, 'routes.json')} must be a JSON array of route specs such as "cdn.localhost=site"`)
    }
    routes.push(...listed.map(parseRouteSpec))
  }
  return routes
}

function primaryLogger (level: string): Logger {
  return pino({ level, redact: { paths: redactedHeaders, censor: '[redacted]' } })
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
      log.warn('no token configured: accepting writes and private reads without credentials, because the server listens on loopback only')
    } else {
      log.warn(`no token configured and listening on ${options.host}: writes and private reads are refused; set --token or FSBUCKET_TOKEN`)
    }
  }
  if (!options.fsync) log.warn('fsync is off: acknowledged writes may be lost in a crash')
}

/** One server process: build the app, listen, close gracefully on a signal. */
async function serveOne (options: ServeOptions, ownsSweeper: boolean): Promise<void> {
  const registry = await openRegistry(options.data, { fsync: options.fsync })
  const app = await buildApp({
    dataDir: options.data,
    host: options.host,
    token: options.token ?? null,
    publicBuckets: options.public,
    routes: await loadRoutes(options.data, options.route),
    fsync: options.fsync,
    logLevel: options.logLevel,
    management: await managementCredentials(options, isLoopbackHost(options.host), registry.state('mgmt')),
    registry
  })
  const s3Policy = s3AccessPolicy(s3CredentialFrom(options), options.token ?? null, isLoopbackHost(options.host))
  const s3 = options.s3Port === 0 ? null : await buildS3App({ registry, policy: s3Policy, domains: options.s3Domain, logLevel: options.logLevel })
  if (ownsSweeper) {
    startupNotes(options, app.log as unknown as Logger)
    await ensureFirstBucket(registry, options.defaultBucket, app.log as unknown as Logger)
    if (options.sweepInterval > 0) registry.startSweeper(options.sweepInterval * 1000, err => app.log.error({ err }, 'sweep failed'))
  }
  let closing = false
  const shutdown = (signal: string): void => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'closing: finishing requests in flight')
    Promise.all([app.close(), s3?.close()])
      .then(async () => { await registry.close() })
      .then(() => process.exit(0), err => { app.log.error({ err }, 'close failed'); process.exit(1) })
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
  await app.listen({ host: options.host, port: options.port })
  if (s3 !== null) {
    await s3.listen({ host: options.host, port: options.s3Port })
    if (ownsSweeper) s3.log.info(...s3StartupNote(s3Policy, options.host, options.s3Port))
  }
  if (ownsSweeper) {
    const address = app.server.address()
    const port = address !== null && typeof address === 'object' ? address.port : options.port
    app.log.info({ url: consoleUrl(options.host, port) }, `web console: ${consoleUrl(options.host, port)}`)
  }
}

/** The cluster primary: first bucket, sweeper, workers, restarts, graceful stop. */
async function servePrimary (options: ServeOptions): Promise<void> {
  const log = primaryLogger(options.logLevel)
  startupNotes(options, log)
  const registry = await openRegistry(options.data, { fsync: options.fsync })
  await ensureFirstBucket(registry, options.defaultBucket, log)
  if (options.sweepInterval > 0) registry.startSweeper(options.sweepInterval * 1000, err => log.error({ err }, 'sweep failed'))

  let stopping = false
  for (let i = 0; i < options.workers; i++) cluster.fork()
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        registry.close().finally(() => process.exit(0))
      }
      return
    }
    log.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another')
    cluster.fork()
  })
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
    log.info({ signal, workers: options.workers }, 'stopping workers')
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM')
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
  let listening = 0
  const listeners = options.s3Port === 0 ? 1 : 2
  cluster.on('listening', () => {
    if (++listening === options.workers * listeners) {
      log.info({ host: options.host, port: options.port, workers: options.workers, data: path.resolve(options.data) }, 'serving')
      if (options.s3Port !== 0) {
        log.info(...s3StartupNote(s3AccessPolicy(s3CredentialFrom(options), options.token ?? null, isLoopbackHost(options.host)), options.host, options.s3Port))
      }
      log.info({ url: consoleUrl(options.host, options.port) }, `web console: ${consoleUrl(options.host, options.port)}`)
    }
  })
}

export function buildCli (): Command {
  const program = new Command('fsbucket')
    .description('An object storage gateway: buckets on a local directory, served over HTTP')
    .showHelpAfterError()

  program.command('serve')
    .description('serve the buckets of the data directory over HTTP')
    .addOption(dataOption())
    .addOption(new Option('-H, --host <address>', 'address to listen on').env('FSBUCKET_HOST').default('127.0.0.1'))
    .addOption(new Option('-p, --port <port>', 'port to listen on').env('FSBUCKET_PORT').default(8787).argParser(integer(0, 65535)))
    .addOption(new Option('-t, --token <token>', 'bearer token required for writes and private reads').env('FSBUCKET_TOKEN'))
    .addOption(new Option('--public <buckets>', 'comma-separated buckets served publicly (GET/HEAD without a token)').env('FSBUCKET_PUBLIC').default([]).argParser(nameList))
    .addOption(new Option('--route <spec>', 'public read-only route: host=bucket, /prefix/=bucket or host/prefix/=bucket (repeatable; comma-separated in the variable)').env('FSBUCKET_ROUTES').default([]).argParser(routeSpec))
    .addOption(new Option('--fsync <on|off>', 'fsync every write before answering').env('FSBUCKET_FSYNC').default(true).argParser(onOff))
    .addOption(new Option('--log-level <level>', 'log level').env('FSBUCKET_LOG_LEVEL').default('info')
      .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    .addOption(new Option('-w, --workers <n>', 'worker processes sharing the port (default: one per core)').env('FSBUCKET_WORKERS')
      .default(os.availableParallelism()).argParser(integer(1, 256)))
    .addOption(new Option('--sweep-interval <seconds>', 'how often expired uploads and leftovers are swept (0 = never)').env('FSBUCKET_SWEEP_INTERVAL')
      .default(3600).argParser(integer(0, 31 * 24 * 3600)))
    .addOption(new Option('--default-bucket <name>', 'bucket created when the data directory has none').env('FSBUCKET_DEFAULT_BUCKET').default('default'))
    .addOption(new Option('--s3-port <port>', 'port of the S3-compatible API (0 = off)').env('FSBUCKET_S3_PORT').default(8788).argParser(integer(0, 65535)))
    .addOption(new Option('--s3-domain <domains>', 'comma-separated domains whose sub-domains name buckets on the S3 port (besides localhost)').env('FSBUCKET_S3_DOMAIN').default([]).argParser(nameList))
    .addOption(new Option('--s3-access-key-id <id>', 'access key id of the S3 API\'s key pair').env('FSBUCKET_S3_ACCESS_KEY_ID'))
    .addOption(new Option('--s3-secret-access-key <secret>', 'secret access key of the S3 API\'s key pair').env('FSBUCKET_S3_SECRET_ACCESS_KEY'))
    .action(async (options: ServeOptions) => {
      if (cluster.isWorker) await serveOne(options, false)
      else if (options.workers > 1) await servePrimary(options)
      else await serveOne(options, true)
    })

  const bucket = program.command('bucket').description('manage buckets')
  bucket.command('create <name>')
    .description('create a bucket')
    .addOption(dataOption())
    .option('--public', 'serve GET/HEAD of the bucket without a token', false)
    .action(async (name: string, options: { data: string, public: boolean }) => {
      const registry = await openRegistry(options.data)
      await registry.create(name, { public: options.public })
      await registry.close()
      console.log(`created bucket ${name}${options.public ? ' (public)' : ''}`)
    })
  bucket.command('list')
    .description('list buckets')
    .addOption(dataOption())
    .action(async (options: { data: string }) => {
      const registry = await openRegistry(options.data)
      for (const info of await registry.list()) {
        console.log(`${info.name}\t${info.creationDate.toISOString()}\t${info.settings.public ? 'public' : 'private'}`)
      }
      await registry.close()
    })
  bucket.command('delete <name>')
    .description('delete an empty bucket')
    .addOption(dataOption())
    .action(async (name: string, options: { data: string }) => {
      const registry = await openRegistry(options.data)
      await registry.delete(name)
      await registry.close()
      console.log(`deleted bucket ${name}`)
    })

  program.command('sweep')
    .description('abort expired multipart uploads and remove leftovers of interrupted writes, in every bucket')
    .addOption(dataOption())
    .action(async (options: { data: string }) => {
      const registry = await openRegistry(options.data)
      await registry.sweep()
      await registry.close()
      console.log('swept')
    })

  registerManagementCommands(program, { openRegistry })
  registerObjectCommands(program, { openRegistry })
  return program
}

/** Runs the command line (bin/fsbucket.js calls this; so do cluster workers, with the same argv). */
export async function main (argv: string[] = process.argv): Promise<void> {
  try {
    await buildCli().parseAsync(argv)
  } catch (err) {
    console.error(err instanceof Error ? err.message : err)
    process.exit(1)
  }
}
