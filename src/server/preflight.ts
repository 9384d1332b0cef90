/**
 * Checks made before `serve` opens anything: every directory the server
 * will write in is writable. Without this, an unwritable data directory or
 * bucket shows up only as requests that hang on a lock and then fail; with
 * it, the server refuses to start with one line naming the path and why.
 *
 * Writability is tested by doing: a probe file is created and removed in
 * the data directory, in each bucket directory and in each of the bucket's
 * internal directories (`.fsbucket/` and those directly below it), and the
 * files there must open for writing. Permission bits alone would say
 * nothing to root, and nothing about a read-only mount.
 *
 * The management API's state directory, which holds its credentials, is
 * kept to the server's user here too (`privateManagementState`), and
 * neither it nor the tokens' directory may be a symbolic link: their
 * secrets are never written outside the data directory.
 */
import { constants, promises as fsp } from 'node:fs'
import path from 'node:path'
import { makeDirectory } from '../stores/fs/make-directory.js'

/**
 * A start-up failure: its message is the one line `serve` prints before
 * exiting. One caused by a system error has it as `cause`, and its `code`
 * (`EACCES`, `ENOTDIR`, `EADDRINUSE`), so a caller tells them apart without
 * reading the message.
 */
export class StartupError extends Error {
  readonly code?: string
  constructor (message: string, options?: { cause?: unknown }) {
    super(message, options)
    const code = (options?.cause as NodeJS.ErrnoException | undefined)?.code
    if (typeof code === 'string') this.code = code
  }
}

const reasons: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'not a directory',
  ENOENT: 'does not exist',
  EEXIST: 'exists and is not a directory',
  EISDIR: 'is a directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long'
}

/** A system error's reason in words, with its code: `permission denied (EACCES)`. */
export function why (err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code ?? ''
  return reasons[code] === undefined ? (err as Error).message : `${reasons[code]} (${code})`
}

/**
 * One name for every process's probe: a start killed between the write and
 * the removal leaves the file, and the next start's probe replaces and
 * removes it (a name of its own would stay for good). Two processes probing
 * at once only remove the file twice.
 */
const PROBE = '.fsbucket-write-probe'

/**
 * Whether `err` says that `file`, found by a listing, is gone since: another
 * process's temporary renamed or removed (a settings file's, a probe, a
 * lock), or a bucket deleted. Another gateway starting or creating a bucket
 * beside this one does that; it says nothing of writability.
 */
const vanished = (err: unknown): boolean => (err as NodeJS.ErrnoException).code === 'ENOENT'

/** Probes `dir`; `listed`: found by a listing, so one gone meanwhile is skipped. */
async function probeDirectory (dir: string, what: string, listed = false): Promise<void> {
  const probe = path.join(dir, PROBE)
  try {
    await fsp.writeFile(probe, '')
    await fsp.rm(probe, { force: true })
  } catch (err) {
    if (listed && vanished(err) && await fsp.lstat(dir).then(() => false, () => true)) return
    throw new StartupError(`cannot write in ${what} ${dir}: ${why(err)}`, { cause: err })
  }
}

async function probeFiles (dir: string, what: string): Promise<string[]> {
  const subdirectories: string[] = []
  for (const entry of await fsp.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    // A lock (proper-lockfile's directory) is another process's, held for a moment: a probe in it would keep its release from removing it.
    if (entry.isDirectory()) { if (!entry.name.endsWith('.lock')) subdirectories.push(full); continue }
    if (!entry.isFile() || entry.name === PROBE) continue
    try {
      await (await fsp.open(full, constants.O_WRONLY | constants.O_APPEND)).close()
    } catch (err) {
      if (vanished(err)) continue
      throw new StartupError(`cannot write ${what} file ${full}: ${why(err)}`, { cause: err })
    }
  }
  return subdirectories
}

/**
 * Refuses a data directory inside another one (a bucket's directory, or a
 * folder of a bucket's readable view): its buckets would be files in the
 * outer bucket's view, which the outer server rewrites and removes.
 */
async function refuseNested (root: string): Promise<void> {
  // The outermost directory holding `.fsbucket` is the data directory (its buckets' directories hold one too).
  let outermost: string | null = null
  for (let outer = path.dirname(root); ; outer = path.dirname(outer)) {
    if (await fsp.lstat(path.join(outer, '.fsbucket')).then(s => s.isDirectory(), () => false)) outermost = outer
    if (path.dirname(outer) === outer) break
  }
  if (outermost !== null) {
    throw new StartupError(`the data directory ${root} is inside fsbucket's data directory ${outermost} (a bucket's directory or its readable view): serve ${outermost}, or a directory outside it`)
  }
}

/** Throws a StartupError naming the first path the server could not write. */
export async function checkWritable (dataDir: string): Promise<void> {
  const root = path.resolve(dataDir)
  await refuseNested(root)
  try {
    await makeDirectory(root)
  } catch (err) {
    throw new StartupError(`cannot create the data directory ${root}: ${why(err)}`, { cause: err })
  }
  await probeDirectory(root, 'the data directory')
  for (const entry of await fsp.readdir(root, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name === '.mgmt') await probeDirectory(path.join(root, entry.name), 'the management API\'s state directory')
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue
    const bucket = path.join(root, entry.name)
    const what = `bucket "${entry.name}":`
    await probeDirectory(bucket, what, true)
    const internal = path.join(bucket, '.fsbucket')
    const exists = await fsp.stat(internal).then(s => s.isDirectory(), () => false)
    if (!exists) continue
    await probeDirectory(internal, what, true)
    const inside = await probeFiles(internal, what).catch((err: unknown) => { if (vanished(err)) return []; throw err })
    for (const dir of inside) await probeDirectory(dir, what, true)
  }
}

/** A file's permission bits as `ls` and `chmod` write them: `0644`. */
const octal = (mode: number): string => (mode & 0o777).toString(8).padStart(4, '0')

/**
 * Keeps `<data>/.mgmt/` to the server's user, and says what it cannot:
 * the directory holds `credentials.json`, the management API's admin
 * tokens and key pairs, which an operator writes by hand. The server makes
 * the directory 0700 (stores/fs/registry-storage.ts); one an older version
 * made 0755 is made 0700 here when it is a directory of this user's own
 * (another user's is left as it is, with a warning). A
 * `credentials.json` that group or others may read or write gets a warning
 * naming it and its mode, never its content: the server only reads it, and
 * leaves its mode to its owner. Returns the warnings, one line each.
 *
 * A `.mgmt` or `.tokens` that is a symbolic link stops the start (a
 * StartupError naming it): the management API's state and the tokens'
 * records (S3 secrets) would be written wherever it points, outside the
 * data directory. stores/fs/json-directory.ts refuses it too, for the
 * commands that write there without a server (`fsbucket token create`).
 */
export async function privateManagementState (dataDir: string): Promise<string[]> {
  for (const name of ['.mgmt', '.tokens']) {
    const state = path.resolve(dataDir, name)
    if ((await fsp.lstat(state).catch(() => null))?.isSymbolicLink() === true) {
      throw new StartupError(`${state} is a symbolic link: fsbucket writes its state only inside the data directory; replace it with a directory`)
    }
  }
  const dir = path.resolve(dataDir, '.mgmt')
  const warnings: string[] = []
  const stat = await fsp.lstat(dir).catch(() => null)
  // Without POSIX owners (Windows), the modes say nothing.
  if (stat === null || process.getuid === undefined) return warnings
  if (stat.isDirectory() && (stat.mode & 0o077) !== 0) {
    const own = stat.uid === process.getuid()
    const failed = own ? await fsp.chmod(dir, 0o700).then(() => null, (err: unknown) => why(err)) : 'not owned by the server\'s user'
    if (failed !== null) warnings.push(`the management API's state directory ${dir} is open to group or others (mode ${octal(stat.mode)}) and was not made 0700: ${failed}`)
  }
  const file = path.join(dir, 'credentials.json')
  const credentials = await fsp.stat(file).catch(() => null)
  if (credentials !== null && (credentials.mode & 0o066) !== 0) {
    warnings.push(`${file} is readable or writable by group or others (mode ${octal(credentials.mode)}); it holds the management API's credentials: chmod 600 it`)
  }
  return warnings
}
