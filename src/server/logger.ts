/**
 * The server's logger: pino, JSON lines when stdout is not a terminal and
 * pino-pretty's readable lines when it is (formatted in this process, no
 * worker thread, nothing loaded at run time that is not installed).
 *
 * Secrets never reach a line, at any level: the paths below are redacted
 * wherever a request's headers are logged (Fastify's request serializer,
 * @fastify/multipart's busboy options at trace, a client error's raw bytes),
 * and the client-error handler (client-error.ts) never logs raw packets.
 *
 * A destination that fails (a full disk under a redirected stdout, a closed
 * pipe) drops lines instead of throwing: logging must never take the
 * process down. Each line carries the process id once, as `pid`.
 */
import { createRequire } from 'node:module'
import { hostname } from 'node:os'
import { pino, type Bindings, type ChildLoggerOptions, type DestinationStream, type Level, type Logger } from 'pino'
import type { PrettyOptions, PrettyStream } from 'pino-pretty'
import { requestForLog } from '../doors/redacted-url.js'

/** pino-pretty, loaded only for a terminal: a server logging JSON lines never loads it. */
function prettyStream (options: PrettyOptions): PrettyStream {
  return (createRequire(import.meta.url)('pino-pretty') as (options: PrettyOptions) => PrettyStream)(options)
}

/**
 * Headers that carry a secret: credentials, a session token, an SSE-C key
 * (of the object, or of a copy's source) and its MD5, which names the key
 * (as redacted-url.ts hides the same names in a query).
 */
const secretHeaders = [
  'authorization', 'cookie', '["x-auth-key"]', '["proxy-authorization"]', '["x-amz-security-token"]',
  '["x-amz-server-side-encryption-customer-key"]', '["x-amz-server-side-encryption-customer-key-md5"]',
  '["x-amz-copy-source-server-side-encryption-customer-key"]', '["x-amz-copy-source-server-side-encryption-customer-key-md5"]'
]

/** Paths pino redacts: request headers at the depths Fastify and its plugins log them, and raw packets. */
export const redactedPaths = [
  ...secretHeaders.flatMap(h => {
    const member = h.startsWith('[') ? h : `.${h}`
    return [`req.headers${member}`, `headers${member}`, `*.headers${member}`, `*.*.headers${member}`]
  }),
  'rawPacket', 'err.rawPacket', '*.rawPacket'
]

export interface LoggerOptions {
  level: string
  /** Where lines go (tests); stdout otherwise. */
  destination?: DestinationStream
  /** Force readable (true) or JSON (false) lines; default: readable when stdout is a terminal. */
  pretty?: boolean
}

function stdoutDestination (): DestinationStream {
  const destination = pino.destination({ dest: 1, sync: true })
  // ENOSPC, EPIPE, EBADF...: the line is lost, the server goes on.
  destination.on('error', () => {})
  return destination
}

export function createLogger (options: LoggerOptions): Logger {
  const base = {
    level: options.level,
    base: { pid: process.pid, hostname: hostname() },
    redact: { paths: redactedPaths, censor: '[redacted]' },
    // Where Fastify logs a request itself (a fault at an app's root, a failed write of an answer), on every door.
    serializers: { req: requestForLog }
  }
  if (options.destination !== undefined) return pino(base, options.destination)
  const readable = options.pretty ?? process.stdout.isTTY === true
  if (!readable) return pino(base, stdoutDestination())
  return pino(base, prettyStream({ colorize: true, ignore: 'hostname', translateTime: 'SYS:HH:MM:ss.l', destination: stdoutDestination() }))
}

/**
 * A request's logger, made on first use (Fastify's `childLoggerFactory`).
 * Below the configured level most requests log nothing, and making a child
 * logger (its bindings pass through the redaction above) cost a small GET
 * more than all the rest of its logging.
 */
class LazyChild {
  readonly #parent: Logger
  readonly #bindings: Bindings
  #made: Logger | undefined

  constructor (parent: Logger, bindings: Bindings) {
    this.#parent = parent
    this.#bindings = bindings
  }

  get level (): string { return this.#parent.level }

  #log (level: Level, args: unknown[]): void {
    if (!this.#parent.isLevelEnabled(level)) return
    const child = this.#made ??= this.#parent.child(this.#bindings)
    ;(child[level] as (...a: unknown[]) => void)(...args)
  }

  isLevelEnabled (level: string): boolean { return this.#parent.isLevelEnabled(level) }
  fatal (...args: unknown[]): void { this.#log('fatal', args) }
  error (...args: unknown[]): void { this.#log('error', args) }
  warn (...args: unknown[]): void { this.#log('warn', args) }
  info (...args: unknown[]): void { this.#log('info', args) }
  debug (...args: unknown[]): void { this.#log('debug', args) }
  trace (...args: unknown[]): void { this.#log('trace', args) }
  silent (): void {}
  child (bindings: Bindings, options?: ChildLoggerOptions): Logger {
    return (this.#made ??= this.#parent.child(this.#bindings)).child(bindings, options)
  }
}

/** Fastify's `childLoggerFactory` for the gateway: a lazy child, unless the route asks for its own level. */
export function lazyChildLogger (logger: Logger, bindings: Bindings, options: ChildLoggerOptions): Logger {
  // Fastify's stand-in when logging is off has no levels to ask.
  if (options.level !== undefined || typeof logger.isLevelEnabled !== 'function') return logger.child(bindings, options)
  return new LazyChild(logger, bindings) as unknown as Logger
}
