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
import { hostname } from 'node:os'
import { pino, type DestinationStream, type Logger } from 'pino'
import pretty from 'pino-pretty'

const secretHeaders = ['authorization', 'cookie', '["x-auth-key"]', '["proxy-authorization"]']

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
    redact: { paths: redactedPaths, censor: '[redacted]' }
  }
  if (options.destination !== undefined) return pino(base, options.destination)
  const readable = options.pretty ?? process.stdout.isTTY === true
  if (!readable) return pino(base, stdoutDestination())
  return pino(base, pretty({ colorize: true, ignore: 'hostname', translateTime: 'SYS:HH:MM:ss.l', destination: stdoutDestination() }))
}
