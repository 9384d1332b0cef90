/**
 * The user's own files, the only ones the command door touches: what `cp`
 * and `mirror` read to upload and write when they download, and the walk of
 * a directory for `-r`. Every node:fs call of src/cli/ is here (the
 * architecture test allows this one module of the door to touch files);
 * buckets are reached only through the engine's surface.
 *
 * - A walk yields regular files, symbolic links followed to what they name
 *   (as `cp -r` and `aws s3 cp --recursive` do); sockets, pipes, devices
 *   and dangling links are skipped. A file found under a link to a directory
 *   is marked `throughLink`: it may be anywhere, outside the directory
 *   walked or a second name of a file inside it, so mirror never removes it.
 *   A link to a directory that holds it (`ln -s .. up`) is skipped: followed,
 *   it would repeat the tree under itself until the kernel gives up (and a
 *   link at the top to a directory above the root would upload that
 *   directory whole); real paths are compared, so how the link spells its
 *   target does not matter.
 * - A walk reports what it cannot read rather than leave it out silently:
 *   a name that is not UTF-8 (Node reads it with U+FFFD, a name no file
 *   has) cannot be a key, and an entry that vanished or cannot be read is
 *   named with its error. Only dangling links are skipped without a word.
 *   Of two names that differ only in Unicode normalization (`café` spelled
 *   two ways: one key), `filesByKey` keeps the first and reports the second.
 * - A download into a directory (`cp -r`, `mirror`) never passes a symbolic
 *   link between that directory and the file: a link `DST/x -> /etc` would
 *   put a key `x/passwd` outside DST. The item fails instead. (Checked
 *   before the file is written: a link made in between, by someone who can
 *   write in DST, is not seen; Node has no way to open along a path
 *   without following links.)
 * - A download streams into a temporary file beside the destination,
 *   renamed over it once complete: an interrupted download (Ctrl-C,
 *   SIGTERM, a failed stdout; stopping.ts) never leaves a truncated file
 *   under the real name, nor a temporary one behind. A file replaced keeps
 *   its mode. A destination the user named (`cp fsb://b/k FILE`) that is a
 *   link is written through, as `cp` does, and one that is a pipe, a
 *   device or a socket is written into (its reader gets the bytes, and
 *   `/dev/null` stays a device); inside a directory (`cp -r`, `mirror`), a
 *   link is replaced, never followed out of it.
 * - fsbucket's own directories are never walked nor written: a data
 *   directory or a bucket's directory (one holding `.fsbucket`) met in a
 *   walk is left out and reported, so `mirror --delete` into a directory
 *   holding the store cannot remove it; a download into one is refused.
 */
import { createReadStream, createWriteStream, fstatSync } from 'node:fs'
import { chmod, lstat, mkdir, readdir, realpath, rename, stat, unlink } from 'node:fs/promises'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import { Transform, type Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { keptForm } from '../bucket/index.js'
import { keySuffix } from './paths.js'
import { isStopping, undoIfStopped } from './stopping.js'
import { CliError } from './errors.js'

export interface LocalFile {
  path: string
  /** `/`-separated path under the directory walked. */
  relative: string
  size: number
  /** Reached through a symbolic link to a directory. */
  throughLink: boolean
}

/** What is at `file` (links followed), or null when nothing is; a file that cannot be looked at (a loop of links, no permission) throws. */
export async function fileKind (file: string): Promise<{ kind: 'file' | 'directory' | 'other', size: number } | null> {
  const info = await stat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null
    throw err
  })
  if (info === null) return null
  return { kind: info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other', size: info.size }
}

/**
 * Refuses a data directory that does not exist: a command that reads one
 * never makes it (a mistyped `--data` would become a new, empty one);
 * `mb`, `bucket create` and `serve` make it. `hint` says what else to try.
 */
export async function requireDataDirectory (dataDir: string, hint = ''): Promise<void> {
  if ((await fileKind(dataDir))?.kind !== 'directory') throw new CliError(`no data directory ${dataDir} (set --data or FSBUCKET_DATA${hint})`)
}

/** What a walk could not read: the path, and why. */
export type Unreadable = (file: string, err: Error) => void

/** Regular files under `root`, depth first, each directory's entries in name order; `unreadable` hears of what is left out. */
async function * walkFiles (root: string, unreadable: Unreadable): AsyncGenerator<LocalFile> {
  const info = await stat(root)
  yield * walkFrom(root, '', false, new Set([`${info.dev}:${info.ino}`]), unreadable)
}

/** Whether `dir` is fsbucket's: a data directory or a bucket's directory holds `.fsbucket`. */
async function holdsStore (dir: string): Promise<boolean> {
  return (await lstat(path.join(dir, '.fsbucket')).catch(() => null))?.isDirectory() === true
}

/**
 * Refuses a download into fsbucket's own directories (`dir` or a directory
 * above it holds `.fsbucket`): a file written there would become a bucket
 * or shadow the store's readable view. Write through the buckets instead.
 */
export async function refuseStoreDestination (dir: string): Promise<void> {
  // Judged where the destination really is: a link to a directory of the store (`view -> data/b/x`) is the store's.
  let current = path.resolve(dir)
  while (await lstat(current).then(() => false, () => true) && path.dirname(current) !== current) current = path.dirname(current)
  for (current = await realpath(current).catch(() => current); ; current = path.dirname(current)) {
    if (await holdsStore(current)) throw new CliError(`${dir} is inside fsbucket's data directory ${current}: write there through its buckets (fsb://)`)
    if (path.dirname(current) === current) return
  }
}

/** Whether the link `link` names a directory that holds the link itself (`.`, `..`, an ancestor's absolute path). */
async function leadsToItsOwnHolder (link: string): Promise<boolean> {
  const [target, home] = await Promise.all([realpath(link), realpath(path.dirname(link))]).catch(() => [null, null])
  if (target === null || home === null) return false // gone meanwhile: readdir says so
  const down = path.relative(target, home)
  return down === '' || (down.split(path.sep)[0] !== '..' && !path.isAbsolute(down))
}

/** `ancestors`: the directories from the root down to this one, by device and inode. */
async function * walkFrom (root: string, relative: string, throughLink: boolean, ancestors: Set<string>, unreadable: Unreadable): AsyncGenerator<LocalFile> {
  const dir = path.join(root, relative)
  // The root must be read (its failure is the command's); a directory below it that cannot be is one item's failure.
  const listed = await readdir(dir, { withFileTypes: true }).catch((err: Error) => {
    if (relative === '') throw err
    unreadable(dir, err)
    return null
  })
  if (listed === null) return
  if (await holdsStore(dir)) {
    unreadable(dir, new CliError('an fsbucket data directory or bucket directory: left out'))
    return
  }
  const entries = listed.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  for (const entry of entries) {
    const child = path.join(relative, entry.name)
    const full = path.join(root, child)
    if (entry.name.includes('\uFFFD') && (await lstat(full).catch(() => null)) === null) {
      unreadable(full, new CliError('the name is not UTF-8, and a key is: skipped'))
      continue
    }
    // A FIFO, a socket or a device holds no object's bytes: reported, so that no command takes it for a missing file.
    if (!(entry.isSymbolicLink() || entry.isFile() || entry.isDirectory())) {
      unreadable(full, notRegular)
      continue
    }
    const info = await stat(full).catch((err: NodeJS.ErrnoException) => {
      // A dangling link is skipped without a word; a loop of links (ELOOP) or one that cannot be followed is reported.
      if (!entry.isSymbolicLink() || err.code !== 'ENOENT') unreadable(full, err)
      return null
    })
    if (info === null) continue
    if (info.isDirectory()) {
      // A link to a directory that holds it would be walked again and again (up to the kernel's 40 links): skipped.
      // The ancestors walked catch a cycle of links; the real paths, a link to a directory above the root (`up -> ..`).
      const id = `${info.dev}:${info.ino}`
      if (ancestors.has(id) || (entry.isSymbolicLink() && await leadsToItsOwnHolder(full))) continue
      yield * walkFrom(root, child, throughLink || entry.isSymbolicLink(), new Set([...ancestors, id]), unreadable)
    } else if (info.isFile()) {
      yield { path: full, relative: keySuffix(child), size: info.size, throughLink }
    } else {
      unreadable(full, notRegular)
    }
  }
}

/** Why a FIFO, a socket or a device (or a link to one) is left out of a walk. */
const notRegular = new CliError('not a regular file: skipped')

/**
 * The files under `root` by the form their keys are compared in (NFC), in
 * walk order; a second name of one key is reported to `unreadable`, not
 * uploaded over the first (`cp -r` and `mirror` read a directory so).
 */
export async function filesByKey (root: string, unreadable: Unreadable): Promise<Map<string, LocalFile>> {
  const files = new Map<string, LocalFile>()
  for await (const file of walkFiles(root, unreadable)) {
    const kept = keptForm(file.relative)
    const first = files.get(kept)
    if (first === undefined) files.set(kept, file)
    else unreadable(file.path, new CliError(`names the same key as ${first.path} (keys are compared in NFC): skipped`))
  }
  return files
}

/** The bytes of a file. */
export function readLocal (file: string): Readable {
  return createReadStream(file)
}

/**
 * The bytes of a file that had `size` bytes when its upload was planned, or
 * of its `part`, checked against that size: a file that shrank or grew
 * meanwhile fails the stream, since what went up would be neither the file
 * as it was nor as it is (a short part would otherwise surface as the
 * store's "part too small", and a short put as a truncated object). A body
 * that reaches the end of the file reads on past the size planned, so that a
 * file grown since is seen too.
 */
export function readPlanned (file: string, size: number, part?: { start: number, length: number }): Readable {
  const start = part?.start ?? 0
  const toEnd = part === undefined || start + part.length >= size
  const expected = toEnd ? size - start : part.length
  let read = 0
  const changed = (): CliError => new CliError(`the file changed while it was read (its size is no longer the ${size} bytes planned)`)
  const check = new Transform({
    transform (chunk: Buffer, _encoding, callback) {
      read += chunk.length
      callback(read > expected ? changed() : null, chunk)
    },
    flush (callback) {
      callback(read < expected ? changed() : null)
    }
  })
  const source = toEnd ? createReadStream(file, { start }) : createReadStream(file, { start, end: start + expected - 1 })
  pipeline(source, check).catch(() => {}) // a failure destroys `check` with the error, so its reader sees it
  return check
}

/** Refuses a path from `root` down to `dir` that passes a symbolic link (what does not exist yet is made a directory later). */
async function refuseLinks (root: string, dir: string): Promise<void> {
  let at = path.resolve(root)
  for (const segment of path.relative(at, path.resolve(dir)).split(path.sep).filter(s => s !== '')) {
    at = path.join(at, segment)
    // fsbucket's own directories, below the destination too (a key `data/b/.fsbucket/x` of a mirrored backup).
    if (segment === '.fsbucket') throw new CliError(`${at} is fsbucket's own directory: nothing is written there`)
    const info = await lstat(at).catch(() => null)
    if (info === null) return
    if (info.isSymbolicLink()) throw new CliError(`${at} is a symbolic link: it may lead outside ${root}, so nothing is written through it`)
    if (await holdsStore(at)) throw new CliError(`${at} is an fsbucket data directory or bucket directory: nothing is written there`)
  }
}

/**
 * Streams `body` through `through` into `file`, by way of a temporary file
 * renamed over it at the end; `root`, for a download into a directory, is
 * that directory, which the file must not leave by a symbolic link.
 */
export async function writeLocal (file: string, body: Readable, through: Transform, root?: string): Promise<void> {
  if (root !== undefined) {
    try {
      await refuseLinks(root, path.dirname(file))
    } catch (err) {
      body.destroy()
      throw err
    }
  }
  await mkdir(path.dirname(file), { recursive: true })
  // A download whose answer came once the stop began writes nothing: the undos may be over, and its file would outlive the exit.
  if (isStopping()) {
    body.destroy()
    throw new CliError('interrupted')
  }
  const there = await replaced(file, root === undefined)
  if (there.into) {
    // The process's own descriptor is written as it is (a `>>` appends), never opened again and truncated.
    const fd = ownDescriptor(file)
    await pipeline(body, through, fd === undefined ? createWriteStream(there.file, { flags: 'w' }) : createWriteStream('', { fd, autoClose: false }))
    return
  }
  file = there.file
  // Not named after the file: a name near the file system's limit (255 bytes) would leave no room for a suffix.
  const temporary = path.join(path.dirname(file), `.fsbucket-${randomBytes(6).toString('hex')}.download`)
  let written: Promise<void> | undefined
  // Stopped, the download is cut and its writing settled before the file goes: a file opened after the unlink would outlive the exit.
  const release = undoIfStopped('file', async () => {
    body.destroy()
    await written?.catch(() => {})
    await unlink(temporary).catch(() => {})
  })
  try {
    written = pipeline(body, through, createWriteStream(temporary, { flags: 'wx' }))
    await written
    if (there.mode !== undefined) await chmod(temporary, there.mode)
    await rename(temporary, file)
  } catch (err) {
    body.destroy()
    await unlink(temporary).catch(() => {})
    // The user never named the temporary file: a failure is the destination's.
    const errno = err as NodeJS.ErrnoException
    if (errno.path === temporary && errno.syscall === 'open') {
      throw new CliError(`cannot create a file in ${path.dirname(file)} to write ${path.basename(file)} (${errno.code ?? errno.message})`, undefined, { cause: err })
    }
    if (errno.path === temporary) errno.path = file
    throw err
  } finally {
    release()
  }
}

/** The descriptor `/dev/stdout`, `/dev/stderr`, `/dev/fd/N` or `/proc/self/fd/N` names, or undefined. */
function ownDescriptor (file: string): number | undefined {
  const named = path.resolve(file)
  if (named === '/dev/stdout') return 1
  if (named === '/dev/stderr') return 2
  const n = /^\/(?:dev|proc\/self)\/fd\/(\d+)$/.exec(named)?.[1]
  return n === undefined ? undefined : Number(n)
}

/**
 * How a download replaces what is at `file`: the file to rename over (a
 * link the user named is followed to it) and its mode, or `into`: a pipe,
 * device or socket the user named, written into. Inside a directory walk
 * (`named` false) what is there is replaced, never followed.
 */
async function replaced (file: string, named: boolean): Promise<{ file: string, mode?: number, into?: boolean }> {
  const link = await lstat(file).catch(() => null)
  if (link === null) return { file }
  // `/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`: a descriptor of the process, written into (its shell's redirection kept), never replaced.
  if (named && link.isSymbolicLink() && /^\/(dev|proc)\//.test(path.resolve(file))) return { file, into: true }
  const info = link.isSymbolicLink() && named ? await stat(file).catch(() => null) : link
  if (info === null) return { file } // a dangling link: replaced
  if (info.isFile()) return { file: info === link ? file : await realpath(file), mode: info.mode & 0o7777 }
  if (named && !info.isDirectory() && !info.isSymbolicLink()) return { file, into: true }
  return { file }
}

export async function makeDirectory (dir: string): Promise<void> {
  await mkdir(dir, { recursive: true })
}

export async function removeLocal (file: string): Promise<void> {
  await unlink(file)
}

/** Whether stdin is a directory (`< dir` in a shell), which Node reads as no bytes at all; a closed stdin is left to the read to report. */
export function stdinIsDirectory (): boolean {
  try {
    return fstatSync(0).isDirectory()
  } catch {
    return false
  }
}
