/**
 * `startServer`: the whole server (the HTTP gateway with its management
 * API and console, and the S3 port) inside the caller's process, for test
 * suites. It is built by gateway.ts exactly as `fsbucket serve` builds a
 * lone process, with defaults suited to tests (docs/embedding.md):
 *
 * - Ports: 0 for both, so the system picks free ones; the result says which.
 *   (For `serve`, `--s3-port 0` turns the S3 port off; here it is always on.)
 * - Storage: `memory: true` keeps everything in this process, nothing on
 *   disk; `dataDir` serves a data directory as `serve --data` does. Neither
 *   given means memory: a test that forgets to choose leaves nothing behind,
 *   and a directory of the caller's is never written unless named. Both is
 *   an error.
 * - S3 credentials: with no token on loopback, the development key pair
 *   (src/s3/auth.ts), which `serve` prints too; otherwise a key pair made
 *   for this server, since a test cannot read a start-up line. Both are in
 *   the result, with the region the SDKs need (`auto`).
 * - Logs: errors only (a fault is worth seeing; a line per request is not).
 * - Metrics: on, as `serve` has them (`GET {url}/_metrics`). The process's
 *   figures (Node's, the catalog commits) are the whole process's, the
 *   suite's own library calls included: the store observer is process-wide.
 * - Options are checked before anything opens (options-check.ts, shared
 *   with the library's open functions): a key it does not know (a misspelt
 *   `datadir` would otherwise start in memory), a value of the wrong type,
 *   an empty string, an unknown log level and a `tls` without both parts
 *   are each a TypeError with Node's code for it, naming the option.
 *
 * Deliberately unlike `serve`: no signal handlers (the process is the
 * caller's; with `dataDir`, proper-lockfile's signal-exit adds its own at
 * the first lock: docs/embedding.md), and looks at shared state are not
 * shared within a turn (stores/turn.ts): that switch is process-wide, and
 * the caller's own library calls in this process must look afresh.
 *
 * `close()` stops both listeners (idle connections are closed at once,
 * requests in flight finish, and their connections close after their last
 * answer: connection.ts), stops the sweeper and closes every store, so a
 * process that has closed its servers exits by itself.
 */
import { randomBytes } from 'node:crypto'
import { DEVELOPMENT_CREDENTIAL } from '../s3/index.js'
import { serveDefaults, unpresentableToken } from './defaults.js'
import { buildGateway, type GatewayOptions } from './gateway.js'
import { loopbackOnlyHost } from './listen-host.js'
import { checkNumber, checkOptions, OptionError, shown, unknownKey, type OptionErrorCode, type OptionType } from './options-check.js'

export interface StartServerOptions {
  /** Serve the buckets of this data directory (created when missing), as `serve --data` does. Not with `memory`. */
  dataDir?: string
  /** Keep every bucket in this process's memory: nothing is written to disk, and all is gone at `close()`. The default when `dataDir` is absent. */
  memory?: boolean
  /** Address both ports listen on. Default `127.0.0.1`. */
  host?: string
  /** Port of the HTTP gateway; 0 (the default) picks a free one. */
  port?: number
  /** Port of the S3-compatible API; 0 (the default) picks a free one. */
  s3Port?: number
  /** Bearer token required for writes and private reads on the HTTP gateway (and the management API); with one, the S3 port gets a key pair of its own. */
  token?: string
  /** Pino level of the server's log on stdout, or `silent`. Default `error`. */
  logLevel?: string
  /** fsync writes before answering them (with `dataDir`). Default true, as for `serve`. */
  fsync?: boolean
  /** Serve HTTPS on both ports with this PEM certificate chain and private key, both required and non-empty (the URLs start with `https://`). Default: plain HTTP. */
  tls?: { cert: string | Buffer, key: string | Buffer }
  /** Seconds a connection may stay silent (`serve --idle-timeout`), 1 to 86400: a request whose body stopped arriving is answered 408 after it, and `close()` waits for that answer. Default 60. */
  idleTimeout?: number
}

/** How a client reaches the S3 port: the values an S3 client's configuration takes. */
export interface StartedS3 {
  /** `http://127.0.0.1:<port>` (`https://` with `tls`); use path-style addressing (the AWS SDK's `forcePathStyle: true`). */
  endpoint: string
  accessKeyId: string
  secretAccessKey: string
  region: 'auto'
}

export interface StartedServer {
  /** The HTTP gateway's origin, `http://127.0.0.1:<port>` (`https://` with `tls`), without a trailing slash. */
  url: string
  s3: StartedS3
  /** Stops the server and releases all it holds; resolves when done. Calling it again does nothing more. */
  close: () => Promise<void>
}

/** `serve`'s defaults for what the embedded server does not take as options. */
const fixed = {
  catalogConnections: serveDefaults.catalogConnections,
  sweepInterval: serveDefaults.sweepInterval,
  defaultBucket: serveDefaults.defaultBucket,
  public: [],
  route: [],
  s3Domain: [],
  // On, as `serve` has them by default: `GET {url}/_metrics` answers. Counting costs plain additions; prom-client loads at the first scrape (metrics.ts).
  metrics: true
} satisfies Partial<GatewayOptions>

/** `http://host:port`, with an IPv6 address in brackets and a wildcard address reached on loopback. */
function origin (scheme: string, host: string, port: number): string {
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host
  return `${scheme}://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`
}

/** A refused option of startServer (options-check.ts): a TypeError with Node's code for it. */
function refused (message: string, code?: OptionErrorCode): OptionError {
  return new OptionError('startServer', message, code)
}

/** Every option and the type of its value: a key not listed is refused, so a misspelt one is not silently ignored. */
const optionTypes = {
  dataDir: 'string', memory: 'boolean', host: 'string', port: 'number', s3Port: 'number', token: 'string',
  logLevel: 'string', fsync: 'boolean', tls: 'object', idleTimeout: 'number'
} as const satisfies Record<keyof StartServerOptions, OptionType>

/** Pino's levels (what `serve --log-level` takes). */
const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** The options as given, each of its type; an option set to `undefined` counts as left out. */
function checkServerOptions (options: unknown): StartServerOptions {
  const checked = checkOptions<StartServerOptions>('startServer', options, optionTypes)
  if (checked.logLevel !== undefined && !logLevels.includes(checked.logLevel)) {
    throw refused(`logLevel must be one of ${logLevels.join(', ')} (got ${shown(checked.logLevel)})`)
  }
  const isPort = (value: number): boolean => Number.isInteger(value) && value >= 0 && value <= 65535
  checkNumber('startServer', 'port', checked.port, isPort, 'an integer from 0 to 65535', OptionError)
  checkNumber('startServer', 's3Port', checked.s3Port, isPort, 'an integer from 0 to 65535', OptionError)
  const isSeconds = (value: number): boolean => Number.isInteger(value) && value >= 1 && value <= 86400
  checkNumber('startServer', 'idleTimeout', checked.idleTimeout, isSeconds, 'an integer number of seconds from 1 to 86400', OptionError)
  if (checked.tls !== undefined) checkTls(checked.tls)
  const problem = checked.token === undefined ? undefined : unpresentableToken(checked.token)
  if (problem !== undefined) throw refused(`token: ${problem}`)
  return checked
}

/** Both PEM values, each a non-empty string or Buffer: Node would build a context without one, and every handshake would fail. */
function checkTls (tls: object): void {
  for (const key of Object.keys(tls)) if (key !== 'cert' && key !== 'key') throw unknownKey('startServer', key, ['cert', 'key'], 'tls.')
  for (const part of ['cert', 'key'] as const) {
    const value = (tls as Record<string, unknown>)[part]
    if (value === undefined) throw refused(`tls needs both cert and key (PEM, strings or Buffers): ${part} is missing`)
    if (typeof value !== 'string' && !Buffer.isBuffer(value)) throw refused(`tls.${part} must be a string or a Buffer (got ${shown(value)})`, 'ERR_INVALID_ARG_TYPE')
    if (value.length === 0) throw refused(`tls.${part} must not be empty`)
  }
}

/** Starts a server in this process; see StartServerOptions for the defaults. */
export async function startServer (given: StartServerOptions = {}): Promise<StartedServer> {
  const options = checkServerOptions(given)
  if (options.memory === true && options.dataDir !== undefined) {
    throw refused('give either dataDir or memory: true, not both')
  }
  if (options.memory === false && options.dataDir === undefined) {
    throw refused('memory: false needs a dataDir to keep the buckets in')
  }
  const host = options.host ?? serveDefaults.host
  const memory = options.dataDir === undefined
  // One judgement of the host, from the addresses it resolves to, for the key pair handed back and every door.
  const loopbackOnly = await loopbackOnlyHost(host)
  const developmentPair = options.token === undefined && loopbackOnly
  const pair = developmentPair
    ? { ...DEVELOPMENT_CREDENTIAL }
    : { accessKeyId: `FSB${randomBytes(8).toString('hex').toUpperCase()}`, secretAccessKey: randomBytes(30).toString('base64url') }
  const gateway = await buildGateway({
    ...fixed,
    data: options.dataDir ?? '',
    memory,
    host,
    loopbackOnly,
    port: options.port ?? 0,
    s3Port: options.s3Port ?? 0,
    token: options.token,
    fsync: options.fsync ?? serveDefaults.fsync,
    logLevel: options.logLevel ?? 'error',
    idleTimeout: options.idleTimeout ?? serveDefaults.idleTimeout,
    tls: options.tls,
    ...(developmentPair ? {} : { s3AccessKeyId: pair.accessKeyId, s3SecretAccessKey: pair.secretAccessKey })
  }, true)
  let bound: { port: number, s3Port: number | null }
  try {
    bound = await gateway.listen()
  } catch (err) {
    await gateway.close().catch(() => {})
    throw err
  }
  let closing: Promise<void> | null = null
  return {
    url: origin(gateway.scheme, host, bound.port),
    s3: { endpoint: origin(gateway.scheme, host, bound.s3Port ?? 0), ...pair, region: 'auto' },
    close: async () => { await (closing ??= gateway.close()) }
  }
}
