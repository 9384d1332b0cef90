/**
 * HTTPS on both ports (`--tls-cert`, `--tls-key`; FSBUCKET_TLS_CERT,
 * FSBUCKET_TLS_KEY): the HTTP gateway and the S3 port serve one
 * certificate chain and its private key, both PEM files.
 *
 * Both files or neither: one alone is a start-up error, as is a file that
 * cannot be read or that is no PEM certificate or key (or a key that does
 * not belong to the certificate). Node checks all three when it builds a
 * secure context, so the files are judged by building one before anything
 * listens, and the server refuses to start with one line naming the file.
 *
 * SIGHUP re-reads both files (certificates are renewed while the server
 * runs) and swaps the secure context of every listener: new connections get
 * the new certificate, open ones keep theirs. A pair that fails the same
 * checks keeps the old one and logs why; a renewal half written (the new
 * certificate beside the old key) is refused the same way, and the next
 * SIGHUP tries again. With workers the primary reads and checks the files
 * and hands each worker the pair it accepted: a worker started later (one
 * that replaces a worker that died) is given the same pair, never the files
 * as they are at that moment (a renewal half written would make every
 * replacement fail, and the crash loop stop the server).
 */
import { promises as fsp } from 'node:fs'
import type { Server as HttpsServer } from 'node:https'
import type { SecureContextOptions } from 'node:tls'
import { StartupError } from './preflight.js'

/**
 * Node's TLS module, loaded when a certificate is first checked: a process
 * serving plain HTTP never loads it (it made a worker a MiB larger).
 */
function createSecureContext (options: SecureContextOptions): void {
  process.getBuiltinModule('node:tls').createSecureContext(options)
}

/** The PEM files named on the command line. */
export interface TlsFiles {
  cert: string
  key: string
}

/** A certificate chain and its key, read from their files (or given by `startServer`). */
export interface TlsPair {
  cert: Buffer | string
  key: Buffer | string
}

/** Both paths, neither (null), or a StartupError saying which one is missing. */
export function tlsFilesFrom (options: { tlsCert?: string, tlsKey?: string }): TlsFiles | null {
  const cert = options.tlsCert === '' ? undefined : options.tlsCert
  const key = options.tlsKey === '' ? undefined : options.tlsKey
  if (cert === undefined && key === undefined) return null
  if (cert === undefined) throw new StartupError('--tls-key (FSBUCKET_TLS_KEY) needs --tls-cert (FSBUCKET_TLS_CERT): give both PEM files or neither')
  if (key === undefined) throw new StartupError('--tls-cert (FSBUCKET_TLS_CERT) needs --tls-key (FSBUCKET_TLS_KEY): give both PEM files or neither')
  return { cert, key }
}

async function readPem (file: string, what: string): Promise<Buffer> {
  try {
    return await fsp.readFile(file)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new StartupError(`cannot read the TLS ${what} ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (err as Error).message}${code === undefined ? '' : ` (${code})`}`, { cause: err })
  }
}

/** Throws a StartupError unless Node accepts the pair as a server's certificate chain and key. */
export function checkTlsPair (pair: TlsPair, files?: TlsFiles): void {
  const cert = files === undefined ? '' : ` ${files.cert}`
  const key = files === undefined ? '' : ` ${files.key}`
  try {
    createSecureContext({ cert: pair.cert })
  } catch (err) {
    throw new StartupError(`the TLS certificate${cert} is not a PEM certificate: ${(err as Error).message}`)
  }
  try {
    createSecureContext({ key: pair.key })
  } catch (err) {
    throw new StartupError(`the TLS key${key} is not a PEM private key: ${(err as Error).message}`)
  }
  try {
    createSecureContext({ cert: pair.cert, key: pair.key })
  } catch (err) {
    throw new StartupError(`the TLS key${key} does not belong to the certificate${cert}: ${(err as Error).message}`)
  }
}

/** Reads and checks both files; a StartupError names the one that is wrong. */
export async function readTlsPair (files: TlsFiles): Promise<TlsPair> {
  const [cert, key] = await Promise.all([readPem(files.cert, 'certificate'), readPem(files.key, 'key')])
  const pair = { cert, key }
  checkTlsPair(pair, files)
  return pair
}

interface Log {
  info: (fields: object, message: string) => void
  error: (fields: object, message: string) => void
}

/** Reads and checks the files for a reload; null (logged) when they fail the checks: the previous pair stays. */
export async function reloadedPair (files: TlsFiles, log: Pick<Log, 'error'>): Promise<TlsPair | null> {
  try {
    return await readTlsPair(files)
  } catch (err) {
    log.error({ cert: files.cert, key: files.key, reason: (err as Error).message }, 'TLS reload failed: still serving the previous certificate')
    return null
  }
}

/**
 * Gives every server the new pair: `given` (checked by the cluster's
 * primary), else the files read again; a pair that fails the checks leaves
 * every server as it was and is logged. Resolves true when the new pair is
 * served.
 */
export async function reloadTls (files: TlsFiles, servers: HttpsServer[], log: Log, given?: TlsPair): Promise<boolean> {
  const pair = given ?? await reloadedPair(files, log)
  if (pair === null) return false
  for (const server of servers) server.setSecureContext(pair)
  log.info({ cert: files.cert, key: files.key }, 'TLS certificate reloaded')
  return true
}
