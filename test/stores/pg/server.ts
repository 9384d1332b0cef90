/**
 * A throwaway PostgreSQL server for one test file: Debian's `postgresql`
 * binaries (`initdb`, `pg_ctl`), a cluster in a temporary directory, trust
 * authentication on a free loopback port, no fsync (the tests check
 * behaviour, not the server's durability; the benchmark asks for `durable`:
 * the server's defaults, fsync and synchronous commit). Run as the
 * `postgres` user when the tests run as root, as the server refuses root.
 * With `passwords`, other roles log in with their password (for the tests
 * of a rotated one); `postgres` stays trusted.
 * When the server cannot start, `startPostgres` throws with the reason:
 * these tests never skip.
 */
import { execFile } from 'node:child_process'
import { existsSync, readdirSync } from 'node:fs'
import { chmod, chown, mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort } from '../../server/serve-process.js'

const run = promisify(execFile)

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url: (database?: string) => string
  port: number
  stop: () => Promise<void>
  start: () => Promise<void>
  /** Stops the server and removes its directory. */
  destroy: () => Promise<void>
}

function binDir (): string {
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter(v => existsSync(path.join(root, v, 'bin', 'pg_ctl'))) : []
  versions.sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) {
    throw new Error('PostgreSQL is not installed: these tests need Debian\'s postgresql package (apt-get install postgresql; .ci/run installs it).')
  }
  return path.join(root, versions[0], 'bin')
}

export interface PostgresOptions {
  /** Keep the server's durability (fsync, synchronous commit, full pages): for measurements, not tests. */
  durable?: boolean
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string>
  /** Roles other than `postgres` log in over TCP with their password (scram-sha-256). */
  passwords?: boolean
}

export async function startPostgres (options: PostgresOptions = {}): Promise<PostgresServer> {
  const bin = binDir()
  const root = await mkdtemp(path.join(os.tmpdir(), 'fsbucket-pg-'))
  const data = path.join(root, 'data')
  const asRoot = process.getuid?.() === 0
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']).catch(() => {
      throw new Error('The tests run as root and there is no `postgres` user to run PostgreSQL as (install the postgresql package).')
    })
    const uid = Number(stdout.trim())
    const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim())
    await chown(root, uid, gid)
  }
  await chmod(root, 0o700)
  const as = async (command: string, args: string[]): Promise<void> => {
    const file = path.join(bin, command)
    try {
      if (asRoot) await run('runuser', ['-u', 'postgres', '--', file, ...args], { cwd: root })
      else await run(file, args, { cwd: root })
    } catch (err) {
      const e = err as { stderr?: string, message: string }
      throw new Error(`PostgreSQL could not start (${command}): ${e.stderr ?? e.message}`)
    }
  }
  await as('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'])
  if (options.passwords === true) {
    const hba = path.join(data, 'pg_hba.conf')
    await writeFile(hba, 'local all all trust\nhost all postgres 127.0.0.1/32 trust\nhost all all 127.0.0.1/32 scram-sha-256\n')
    if (asRoot) await run('chown', ['postgres:postgres', hba])
  }
  const port = await freePort()
  const settings: Record<string, string> = {
    listen_addresses: '127.0.0.1',
    port: String(port),
    unix_socket_directories: root,
    max_connections: '200',
    ...(options.durable === true ? {} : { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }),
    ...options.settings
  }
  const flags = Object.entries(settings).map(([name, value]) => `-c ${name}=${value}`).join(' ')
  const start = async (): Promise<void> => { await as('pg_ctl', ['-D', data, '-w', '-t', '60', '-o', flags, '-l', path.join(root, 'log'), 'start']) }
  const stop = async (): Promise<void> => { await as('pg_ctl', ['-D', data, '-w', '-m', 'fast', 'stop']) }
  await start()
  return {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start,
    stop,
    destroy: async () => {
      await stop().catch(() => {})
      await rm(root, { recursive: true, force: true })
    }
  }
}

/** Counts the statements every pg client of this process sends, until `restore`. */
export function countStatements (): { readonly count: number, restore: () => void } {
  const query = pg.Client.prototype.query
  let count = 0
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    count++
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query
  return { get count () { return count }, restore: () => { pg.Client.prototype.query = query } }
}
