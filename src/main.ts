/**
 * The command line: configuration from flags and variables, handed to the
 * server (src/server/) or to the commands.
 *
 *     fsbucket serve [--data ./data | --memory] [--host 127.0.0.1] [--port 8787] [--token T]
 *                    [--public a,b] [--route cdn.localhost=site ...] [--fsync on|off]
 *                    [--log-level info] [--workers N] [--sweep-interval 3600]
 *                    [--default-bucket default] [--idle-timeout 60] [--drain-timeout 10]
 *                    [--s3-port 8788] [--s3-domain s3.example.test ...]
 *                    [--s3-access-key-id ID --s3-secret-access-key SECRET]
 *                    [--tls-cert cert.pem --tls-key key.pem]
 *     fsbucket bucket create <name> [--public] | list | delete <name>   [--data ./data]
 *     fsbucket sweep [--data ./data] [--now 2027-01-31T12:00:00Z]
 *     fsbucket migrate --from ./data --catalog postgres://...
 *     fsbucket --version
 *
 * `serve`, `bucket`, `sweep` and the object and management commands take
 * `--catalog <url>` (FSBUCKET_CATALOG):
 * a PostgreSQL catalog shared by several gateways instead of SQLite.
 *
 * Every `serve` flag but `--memory` has an environment variable
 * (FSBUCKET_DATA, ...); a flag beats its variable. (A server that keeps
 * nothing is asked for on its own command line, never by an environment
 * left set.) A secret given as a flag (`--token`, a `--catalog` URL, ...:
 * `secretFlags`) leaves the command line `ps` shows once the arguments are
 * parsed: the process's title becomes the command's path alone,
 * `fsbucket serve` (`main`). What `serve` does (checks, workers, restarts, draining on
 * signals) is src/server/serve.ts; what one server process is made of
 * (registry, doors, listeners) is src/server/gateway.ts, which
 * `startServer` uses too.
 */
import type { EventEmitter } from 'node:events'
import { readFileSync } from 'node:fs'
import { Command, InvalidArgumentError, Option } from 'commander'
import { isBucketError, Queues, type BucketRegistry } from './bucket/index.js'
import { MAX_SWEEP_INTERVAL_MS } from './bucket/limits.js'
import { isValidBucketName } from './bucket/settings.js'
import { parseHostname } from './mgmt/validate/names.js'
import { serveDefaults, unpresentableToken } from './server/defaults.js'
import { defaultWorkers, maxWorkers, workersVariable } from './server/early-fork.js'
import { registerTokenCommands } from './cli/tokens.js'
import { registerShareCommand, s3EndpointOrigin } from './cli/share.js'
import { secretValue } from './cli/secret-option.js'
import { describeError } from './cli/errors.js'
import { isRouteSpec, parseRouteSpec, secondRoute, splitRouteList } from './http/target.js'
import { parseQueuePush, type QueuePush } from './server/queue-push.js'
import { catalogOption, dataOption } from './doors/command-options.js'
import { commandHelp } from './doors/command-help.js'
import { packagePath } from './package-root.js'
import { managementServeOptions, registerManagementCommands } from './mgmt/cli.js'
import { registerObjectCommands } from './cli/index.js'
import { requireDataDirectory } from './cli/local-files.js'
import { shownText } from './cli/terminal-text.js'
import type { ServeOptions } from './server/serve.js'

export type { ServeOptions } from './server/serve.js'

/**
 * Opens the buckets of a data directory (or of `--catalog`). The stores
 * (SQLite, the file store) are loaded by a command that opens them, not by
 * `--version`, `--help` or a command that talks to a server.
 */
async function openRegistry (dataDir: string, options: { catalog?: string }): Promise<BucketRegistry> {
  const open = await import('./server/open.js')
  return await open.openRegistry(dataDir, { ...options, warn: commandWarning })
}

/** What the registry warns a command of (a damaged settings file, a file the readable view could not make), as one line on stderr. */
function commandWarning (fields: { path?: string, reason: string }, message: string): void {
  const where = fields.path === undefined ? '' : `${fields.path}: `
  process.stderr.write(`fsbucket: warning: ${shownText(`${message}: ${where}${fields.reason}`)}\n`)
}

/**
 * The same, for a command that works on what is there (tokens, share
 * links, listings, the sweep): without `--catalog`, a data directory that
 * does not exist is an error, and a token is never made where no server
 * looks.
 */
async function openExisting (dataDir: string, catalog?: string): Promise<BucketRegistry> {
  if (catalog === undefined) await requireDataDirectory(dataDir, '; serve and bucket create make one')
  return await openRegistry(dataDir, { catalog })
}

/** The version in package.json. */
function packageVersion (): string {
  const text = readFileSync(packagePath('package.json'), 'utf8')
  return (JSON.parse(text) as { version: string }).version
}

function integer (min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
      throw new InvalidArgumentError(`expected an integer from ${min} to ${max}`)
    }
    return Number(value)
  }
}

/** An ISO 8601 date (midnight UTC) or date and time with a zone (`Z` or `+01:00`): nothing `Date.parse` would guess at. */
function isoInstant (value: string): Date {
  const iso = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i.exec(value)
  const hasTime = iso?.[4] !== undefined
  const zoned = hasTime ? /(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) : true
  const ms = iso === null || !zoned ? NaN : Date.parse(hasTime ? value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : `${value}T00:00:00Z`)
  // Date.parse rolls 2027-02-30 over to March: a field out of range is refused.
  const day = iso === null ? undefined : new Date(Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3])))
  if (Number.isNaN(ms) || day === undefined || day.getUTCDate() !== Number(iso?.[3]) || day.getUTCMonth() !== Number(iso?.[2]) - 1 ||
      Number(iso?.[4] ?? 0) > 23 || Number(iso?.[5] ?? 0) > 59 || Number(iso?.[6] ?? 0) > 59) {
    throw new InvalidArgumentError('expected an ISO 8601 instant such as 2027-01-31 or 2027-01-31T12:00:00Z (a time needs its zone)')
  }
  return new Date(ms)
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

/** `--public`: names a bucket can have, else the bucket meant would never be served publicly and nothing would say so. */
function bucketNameList (value: string, previous: string[] = []): string[] {
  const names = nameList(value, previous)
  const bad = names.find(name => !isValidBucketName(name))
  if (bad !== undefined) throw new InvalidArgumentError(`expected comma-separated bucket names (3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit): ${JSON.stringify(bad)} is none`)
  return names
}

/** `--s3-domain`: host names, else no request's Host could ever fall under the domain. */
function domainList (value: string, previous: string[] = []): string[] {
  const names = nameList(value, previous)
  const bad = names.find(name => parseHostname(name) === null)
  if (bad !== undefined) throw new InvalidArgumentError(`expected comma-separated domain names such as s3.example.test: ${JSON.stringify(bad)} is none`)
  return names
}

/** 1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, …, 21st. */
function ordinal (n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'
  return `${n}${suffix}`
}

/**
 * `--route <spec>`: one route per flag, taken whole, as `--queue-push`
 * takes its push: a comma may stand in a route (a path prefix `/a,b/`, an
 * `error=` key, an `index=` name: http/target.ts), so a flag is never split
 * at one; FSBUCKET_ROUTES holds several, separated by commas or spaces
 * (`fromVariable` tells which one is parsed; empty items are skipped), as
 * docs/http.md documents. A flag holding two routes is refused, as it would
 * otherwise be one route no one meant, or a start-up refusal naming a piece
 * of it: when its pieces between commas or spaces are each a route, or when
 * a whole route is followed by text that starts another
 * (http/target.ts's `secondRoute`). So is a flag ending in a comma, which
 * would end its bucket's name or its last option's value.
 */
function routeSpecs (fromVariable: () => boolean) {
  return (value: string, previous: string[] = []): string[] => {
    const specs = splitRouteList(value)
    try {
      if (fromVariable()) {
        for (const spec of specs) parseRouteSpec(spec)
        return [...previous, ...specs]
      }
      const where = `the ${ordinal(previous.length + 1)} --route`
      if (specs.length > 1 && specs.every(isRouteSpec)) {
        throw new Error(`${where} holds ${specs.length} routes (separated by a comma or a space): give each route a --route of its own`)
      }
      const second = secondRoute(value)
      if (second !== null) throw new Error(`${where} holds a second route after a comma or a space ("${second}"): give each route a --route of its own`)
      if (value.trim().endsWith(',')) throw new Error(`${where} ends with a comma: give each route a --route of its own, without a separator`)
      parseRouteSpec(value.trim())
    } catch (err) {
      throw new InvalidArgumentError((err as Error).message)
    }
    return [...previous, value.trim()]
  }
}

/**
 * `--queue-push <queue>=<url>`: one push per flag, taken whole (a comma in a
 * webhook's query is part of its URL), repeatable; FSBUCKET_QUEUE_PUSH holds
 * several, comma-separated (`fromVariable` tells which one is parsed). A
 * refusal names the push by its queue or its place, never by its text (a URL
 * or a piece of one may hold a secret: queue-push.ts).
 */
function queuePushSpec (fromVariable: () => boolean) {
  return (value: string, previous: QueuePush[] = []): QueuePush[] => {
    if (!fromVariable()) {
      const where = `the ${ordinal(previous.length + 1)} --queue-push`
      // Two pushes in one flag (as the variable takes them) would make one, to a wrong URL: refused, naming nothing of it.
      if (/,\s*[a-z0-9-]+=https?:\/\//i.test(value)) throw new Error(`${where} holds a second <queue>=<url> after a comma: give each push a --queue-push of its own`)
      return [...previous, parseQueuePush(value.trim(), where)]
    }
    const specs = value.split(/[\s,]+/).filter(s => s !== '')
    return [...previous, ...specs.map((spec, i) => parseQueuePush(spec, `the ${ordinal(i + 1)} item of FSBUCKET_QUEUE_PUSH`))]
  }
}

/**
 * The flags that are secrets or may hold one, over every command, by
 * attribute name (a command's `--token` is `token`): the bearer tokens
 * (`serve`'s and the object commands'), the management API's token and
 * key, the S3 secret key, a catalog URL (its password), a push URL (a token
 * in its query or path), an endpoint (a user:password@ or `?token=` in it).
 * The ids and the email of a key pair are not secrets; `--tls-key` is a
 * file's name.
 */
export const secretFlags: ReadonlySet<string> = new Set(['token', 'apiToken', 'apiKey', 's3SecretAccessKey', 'catalog', 'queuePush', 'endpoint', 's3Endpoint'])

/**
 * The title of a process running `command` when one of `secretFlags` was
 * given on its command line (not by a variable): the command's path alone,
 * `fsbucket serve`, which `ps` shows instead of the arguments (on Linux,
 * `process.title` overwrites their memory); null when none was (the
 * command line stays as it was).
 */
export function secretlessTitle (command: Command): string | null {
  const path: string[] = []
  let secret = false
  for (let c: Command | null = command; c !== null; c = c.parent) {
    path.unshift(c.name())
    secret ||= c.options.some(option => secretFlags.has(option.attributeName()) && c.getOptionValueSource(option.attributeName()) === 'cli')
  }
  return secret ? path.join(' ') : null
}

/** `--host`: an address or a name; empty would listen on every interface (as `startServer` refuses it: embed.ts). */
function listenHost (value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('expected an address or host name such as 127.0.0.1, not an empty value')
  return value
}

/**
 * `--token`: one word, as a client's `Authorization: Bearer <token>` can
 * carry it (http/auth.ts), else no request could ever authenticate. Empty
 * is no token, as an empty --api-token, --tls-cert or --catalog is none.
 */
function bearerToken (value: string): string {
  const problem = unpresentableToken(value)
  if (problem !== undefined) throw new Error(problem)
  return value
}

function bucketName (value: string): string {
  if (!isValidBucketName(value)) throw new InvalidArgumentError('expected a bucket name: 3 to 63 lowercase letters, digits and hyphens, starting and ending with a letter or digit')
  return value
}

/**
 * Why `serve --memory` cannot run with these options, or null: what was
 * given (by flag or variable; defaults do not count) that memory cannot
 * honour. Workers are processes, which cannot share one process's memory;
 * a data directory or a catalog would be storage beside it.
 */
export function memoryRefusal (options: Pick<ServeOptions, 'workers' | 'data' | 'catalog'>, sourceOf: (name: string) => string | undefined): string | null {
  const given = (name: string, flag: string, variable: string): string | null => {
    const source = sourceOf(name)
    if (source === 'cli') return flag
    if (source === 'env') return variable
    return null
  }
  const workers = given('workers', `--workers ${options.workers}`, `FSBUCKET_WORKERS=${options.workers}`)
  if (workers !== null && options.workers > 1) {
    return `--memory keeps the buckets in one process: it cannot be used with ${workers} (workers are separate processes and cannot share that memory)`
  }
  // An empty value is none (a variable set empty in an environment names no storage).
  const data = options.data === '' ? null : given('data', `--data ${options.data}`, `FSBUCKET_DATA=${options.data}`)
  if (data !== null) return `--memory keeps nothing on disk: it cannot be used with ${data}`
  const catalog = (options.catalog ?? '') === '' ? null : given('catalog', '--catalog', 'FSBUCKET_CATALOG')
  if (catalog !== null) return `--memory keeps nothing on disk: it cannot be used with ${catalog}`
  return null
}

export function buildCli (): Command {
  const program = new Command('fsbucket')
    .description('An object storage gateway: buckets on a local directory, served over HTTP')
    .version(packageVersion(), '-V, --version', 'print the version and exit')
    // A bad flag value is one line, not the line followed by every option.
    .showHelpAfterError('(add --help for usage)')
    .configureHelp(commandHelp)

  const serveCommand = (): Command => serve
  let queuePushFromVariable = false
  let routesFromVariable = false
  const serve: Command = program.command('serve')
    .description('serve the buckets of the data directory over HTTP')
    .addOption(dataOption())
    .addOption(catalogOption())
    .addOption(new Option('--catalog-connections <n>', 'connections each process may open to the --catalog (the primary and every worker)').env('FSBUCKET_CATALOG_CONNECTIONS')
      .default(serveDefaults.catalogConnections).argParser(integer(1, 1000)))
    .addOption(new Option('--memory', 'keep every bucket in this process\'s memory: nothing is written to disk and all is lost when the server stops (one process; not with --data or --catalog)'))
    .addOption(new Option('-H, --host <address>', 'address to listen on').env('FSBUCKET_HOST').default(serveDefaults.host).argParser(listenHost))
    .addOption(new Option('-p, --port <port>', 'port to listen on').env('FSBUCKET_PORT').default(8787).argParser(integer(0, 65535)))
    .addOption(new Option('-t, --token <token>', 'bearer token required for writes and private reads (empty: none)').env('FSBUCKET_TOKEN')
      .argParser(secretValue(serveCommand, '--token', 'FSBUCKET_TOKEN', bearerToken)))
    .addOption(new Option('--public <buckets>', 'comma-separated buckets served publicly (GET/HEAD without a token)').env('FSBUCKET_PUBLIC').default([]).argParser(bucketNameList))
    .addOption(new Option('--route <spec>', 'public read-only route: host=bucket, /prefix/=bucket or host/prefix/=bucket (repeatable, one route each; separated by commas or spaces in the variable)').env('FSBUCKET_ROUTES').default([]).argParser(routeSpecs(() => routesFromVariable)))
    .addOption(new Option('--fsync <on|off>', 'fsync every write before answering').env('FSBUCKET_FSYNC').default(serveDefaults.fsync, serveDefaults.fsync ? 'on' : 'off').argParser(onOff))
    .addOption(new Option('--log-level <level>', 'log level').env('FSBUCKET_LOG_LEVEL').default('info')
      .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']))
    // Read before this parser too, by the fork of the workers as the command starts (early-fork.ts).
    .addOption(new Option('-w, --workers <n>', 'worker processes sharing the port').env(workersVariable)
      .default(defaultWorkers(), 'one per core').argParser(integer(1, maxWorkers)))
    .addOption(new Option('--sweep-interval <seconds>', 'how often lifecycle rules are carried out and expired uploads and leftovers swept (0 = never)').env('FSBUCKET_SWEEP_INTERVAL')
      .default(serveDefaults.sweepInterval).argParser(integer(0, Math.floor(MAX_SWEEP_INTERVAL_MS / 1000))))
    .addOption(new Option('--default-bucket <name>', 'bucket created when the data directory has none').env('FSBUCKET_DEFAULT_BUCKET').default(serveDefaults.defaultBucket).argParser(bucketName))
    .addOption(new Option('--idle-timeout <seconds>', 'close a connection silent this long (a stalled upload answers 408); also the deadline for request headers').env('FSBUCKET_IDLE_TIMEOUT')
      .default(serveDefaults.idleTimeout).argParser(integer(1, 24 * 3600)))
    .addOption(new Option('--drain-timeout <seconds>', 'on SIGINT/SIGTERM, how long requests in flight may finish').env('FSBUCKET_DRAIN_TIMEOUT')
      .default(10).argParser(integer(0, 3600)))
    .addOption(new Option('--s3-port <port>', 'port of the S3-compatible API (0 = off)').env('FSBUCKET_S3_PORT').default(serveDefaults.s3Port).argParser(integer(0, 65535)))
    .addOption(new Option('--s3-domain <domains>', 'comma-separated domains whose sub-domains name buckets on the S3 port (besides localhost)').env('FSBUCKET_S3_DOMAIN').default([]).argParser(domainList))
    .addOption(new Option('--s3-endpoint <url>', 'the S3 port\'s public origin, which share links made in the console name (default: the host the console was reached by, with --s3-port)').env('FSBUCKET_S3_ENDPOINT')
      .argParser(secretValue(serveCommand, '--s3-endpoint', 'FSBUCKET_S3_ENDPOINT', s3EndpointOrigin)))
    .addOption(new Option('--s3-access-key-id <id>', 'access key id of the S3 API\'s key pair').env('FSBUCKET_S3_ACCESS_KEY_ID'))
    .addOption(new Option('--s3-secret-access-key <secret>', 'secret access key of the S3 API\'s key pair').env('FSBUCKET_S3_SECRET_ACCESS_KEY'))
    .addOption(new Option('--tls-cert <file>', 'serve HTTPS on both ports with this PEM certificate chain (with --tls-key; re-read on SIGHUP)').env('FSBUCKET_TLS_CERT'))
    .addOption(new Option('--tls-key <file>', 'PEM private key of --tls-cert').env('FSBUCKET_TLS_KEY'))
    .addOption(new Option('--queue-push <queue=url>', 'POST the messages of a queue to a local app as JSON batches; a 2xx answer acknowledges, anything else retries with back-off (repeatable; comma-separated in the variable)')
      .env('FSBUCKET_QUEUE_PUSH').default([]).argParser(secretValue(serveCommand, '--queue-push', 'FSBUCKET_QUEUE_PUSH', queuePushSpec(() => queuePushFromVariable))))
    .addOption(new Option('--metrics <on|off>', 'count requests and answer GET /_metrics (docs/operations.md)').env('FSBUCKET_METRICS').default(true, 'on').argParser(onOff))
    .action(async (options: ServeOptions, command: Command) => {
      // An empty --token (FSBUCKET_TOKEN=) is none (bearerToken); the parser cannot say so itself: commander keeps ''.
      if (options.token === '') delete options.token
      if (options.memory === true) {
        const refusal = memoryRefusal(options, name => command.getOptionValueSource(name))
        if (refusal !== null) throw new Error(refusal)
        // Workers are separate processes: one in-memory server is one process, whatever the number of cores.
        options.workers = 1
      } else if (options.data === '') {
        // As the library refuses it (server/open.ts), but naming the flag: '' would make the working directory itself a bucket's.
        throw new Error('--data (FSBUCKET_DATA) must not be empty: give \'.\' for the working directory')
      }
      // Loaded here: the server (Fastify, every door) costs the other commands a second of start-up.
      // The primary's workers start from src/server/worker.ts, not from here.
      const { serveOne, servePrimary } = await import('./server/serve.js')
      if (options.workers > 1) await servePrimary(options)
      else await serveOne(options, false)
    })
  // The management API's credentials are serve flags too; that module defines them.
  for (const option of managementServeOptions()) serve.addOption(option)
  // Commander parses FSBUCKET_QUEUE_PUSH with the flag's parser, on this event (a Command is an EventEmitter,
  // its typings declare only `on`): true only while it does, from before commander's listener to after it.
  ;(serve as unknown as EventEmitter).prependListener('optionEnv:queue-push', () => { queuePushFromVariable = true })
  serve.on('optionEnv:queue-push', () => { queuePushFromVariable = false })
  ;(serve as unknown as EventEmitter).prependListener('optionEnv:route', () => { routesFromVariable = true })
  serve.on('optionEnv:route', () => { routesFromVariable = false })

  const bucket = program.command('bucket').description('manage buckets')
  bucket.command('create <name>')
    .description('create a bucket')
    .addOption(dataOption())
    .addOption(catalogOption())
    .option('--public', 'serve GET/HEAD of the bucket without a token', false)
    .action(async (name: string, options: { data: string, catalog?: string, public: boolean }) => {
      const registry = await openRegistry(options.data, { catalog: options.catalog })
      await registry.create(name, { public: options.public })
      await registry.close()
      console.log(`created bucket ${name}${options.public ? ' (public)' : ''}`)
    })
  bucket.command('list')
    .description('list buckets')
    .addOption(dataOption())
    .addOption(catalogOption())
    .action(async (options: { data: string, catalog?: string }) => {
      const registry = await openExisting(options.data, options.catalog)
      for (const info of await registry.list()) {
        console.log(`${info.name}\t${info.creationDate.toISOString()}\t${info.settings.public ? 'public' : 'private'}`)
      }
      await registry.close()
    })
  bucket.command('delete <name>')
    .description('delete an empty bucket')
    .addOption(dataOption())
    .addOption(catalogOption())
    .action(async (name: string, options: { data: string, catalog?: string }) => {
      const registry = await openExisting(options.data, options.catalog)
      await registry.delete(name)
      await registry.close()
      console.log(`deleted bucket ${name}`)
    })

  program.command('sweep')
    .description('carry out lifecycle rules (expire, transition), abort expired multipart uploads and remove leftovers of interrupted writes, in every bucket')
    .addOption(dataOption())
    .addOption(catalogOption())
    .addOption(new Option('--now <instant>', 'judge lifecycle rules and upload ages as if the clock read this ISO 8601 instant (2027-01-31T12:00:00Z); stored times are not changed')
      .argParser(isoInstant))
    .action(async (options: { data: string, catalog?: string, now?: Date }) => {
      const registry = await openExisting(options.data, options.catalog)
      try {
        const report = await registry.sweep({ now: options.now })
        console.log(`swept: ${report.expiredObjects ?? 0} objects expired, ${report.transitionedObjects ?? 0} moved to InfrequentAccess, ` +
          `${report.abortedUploads} uploads aborted, ${report.removedLeftovers} leftovers removed`)
        const orphans = await new Queues(registry).dropOrphans()
        if (orphans > 0) console.log(`${orphans} ${orphans === 1 ? 'message' : 'messages'} of deleted queues dropped`)
        const skipped = report.skippedBuckets ?? 0
        if (skipped > 0) console.log(`${skipped} ${skipped === 1 ? 'bucket' : 'buckets'} skipped: another sweep holds ${skipped === 1 ? 'it' : 'them'} (one that was stopped holds its bucket for a minute); run again later`)
      } finally {
        await registry.close()
      }
    })

  program.command('migrate')
    .description('import the buckets of a data directory (SQLite catalogs) into a PostgreSQL catalog; bodies stay in place')
    .requiredOption('--from <dir>', 'data directory whose buckets are imported')
    .addOption(catalogOption().makeOptionMandatory())
    .action(async (options: { from: string, catalog: string }) => {
      const { migrateToCatalog } = await import('./server/migrate.js')
      const report = await migrateToCatalog(options.from, options.catalog, line => { console.log(line) })
      const imported = report.buckets.filter(b => b.skipped === undefined)
      console.log(`imported ${imported.length} buckets (${imported.reduce((n, b) => n + b.objects, 0)} objects) and ${report.documents} documents`)
    })

  // The management and object commands open the catalog their --catalog (FSBUCKET_CATALOG) names, when given;
  // the object commands check the data directory themselves (mb makes it).
  const openConfigured = async (dataDir: string, catalog?: string): Promise<BucketRegistry> => await openRegistry(dataDir, { catalog })
  registerManagementCommands(program, { openRegistry: openExisting })
  registerObjectCommands(program, { openRegistry: openConfigured })
  registerTokenCommands(program, { openRegistry: openExisting })
  registerShareCommand(program, { openRegistry: openExisting, defaultS3Endpoint: `http://${serveDefaults.host}:${serveDefaults.s3Port}` })
  return program
}

/** Runs the command line (bin/fsbucket.js calls this). */
export async function main (argv: string[] = process.argv): Promise<void> {
  const program = buildCli()
  // Once the arguments are parsed, before a command does anything (a server listens): the secrets given as flags
  // leave the command line `ps` shows every local user. Not on Windows, where the title is the console window's.
  program.hook('preAction', (_, command) => {
    const title = process.platform === 'win32' ? null : secretlessTitle(command)
    if (title !== null) process.title = title
  })
  try {
    await program.parseAsync(argv)
  } catch (err) {
    // A damaged state document says what is wrong with it here: a command's failure has no log to name it in.
    console.error(isBucketError(err) && err.errorName === 'StateDamaged' ? describeError(err) : err instanceof Error ? err.message : err)
    process.exit(1)
  }
}
