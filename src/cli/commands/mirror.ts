/**
 * `fsbucket mirror [--delete] [--dry-run] SRC DST`: one-way sync of a
 * directory or prefix to another (local → bucket, bucket → local, bucket →
 * bucket), like `mc mirror` and `aws s3 sync`.
 *
 * A source entry is copied when the destination lacks it or holds other
 * bytes, judged by size and then etag; a local file's etag is computed from
 * its bytes only when the sizes agree (for a multipart object, with each
 * part size that gives its part count, see etag.ts), so a mirror of
 * unchanged data reads the local files but moves nothing. Between buckets,
 * etags of different forms (a copy made with another part size) are settled
 * by reading the destination object. `--delete` removes
 * destination entries (keys, or regular files) that the source does not
 * have, but never a file reached through a link to a directory in a
 * destination directory (the link's target is not the mirror's to prune);
 * `--dry-run` prints the steps and does none. Prefixes are treated as
 * directories (`fsb://b/site` mirrors the keys under `site/`).
 */
import path from 'node:path'
import type { Command } from 'commander'
import { keptForm } from '../../bucket/index.js'
import { CliError } from '../errors.js'
import { addCommonOptions, addTransferOptions, runCommand, type CommandContext, type TransferOptions, type ObjectCommandWiring } from '../context.js'
import { bytesMatchEtag } from '../etag.js'
import { fileKind, filesByKey, makeDirectory, readLocal, refuseStoreDestination, type LocalFile, type Unreadable } from '../local-files.js'
import { directoryPrefix, isFolderMarker, keySuffix, keyUnderPrefix, localPathFor, parseLocation, remoteUrl, type Location } from '../paths.js'
import { runSteps, type Step } from '../steps.js'
import { listAll, type RemoteObject } from '../transport.js'

interface MirrorOptions extends TransferOptions {
  delete: boolean
  dryRun: boolean
}

type Remote = Extract<Location, { kind: 'remote' }>

/** The local file holds the object's bytes (sizes first, then the bytes hashed in the form of its etag). */
async function sameFile (file: LocalFile, object: RemoteObject, partSize: number): Promise<boolean> {
  return file.size === object.size && await bytesMatchEtag(readLocal(file.path), file.size, object.etag, partSize)
}

/**
 * Two stored objects hold the same bytes. Equal etags say so; etags of two
 * forms (one object whole, the other from parts, or parts of other sizes)
 * are settled by reading the destination and hashing it in the source's form.
 */
async function sameObject (context: CommandContext, source: RemoteObject, destination: { bucket: string, object: RemoteObject }, partSize: number): Promise<boolean> {
  if (source.size !== destination.object.size) return false
  if (source.etag === destination.object.etag) return true
  if (!source.etag.includes('-') && !destination.object.etag.includes('-')) return false
  const { body } = await context.transport.get(destination.bucket, destination.object.key)
  try {
    return await bytesMatchEtag(body, source.size, source.etag, partSize)
  } finally {
    body.destroy()
  }
}

async function remoteEntries (context: CommandContext, location: Remote): Promise<Map<string, RemoteObject>> {
  const prefix = directoryPrefix(location.key)
  const entries = new Map<string, RemoteObject>()
  for await (const object of listAll(context.transport, location.bucket, prefix)) entries.set(keptForm(keyUnderPrefix(prefix, object.key)), object)
  return entries
}

/**
 * The objects a remote source holds. A prefix holding none cannot be told
 * from a mistyped one, so `--delete` from it is refused rather than emptying
 * the destination.
 */
async function sourceEntries (context: CommandContext, source: Remote, options: MirrorOptions): Promise<Map<string, RemoteObject>> {
  const entries = await remoteEntries(context, source)
  if (entries.size === 0 && options.delete) {
    throw new CliError(`${remoteUrl(source.bucket, directoryPrefix(source.key))} holds no objects: --delete would remove everything the destination holds (use rm -r for that)`)
  }
  return entries
}

/**
 * The files of a local directory. As the source (`unreadable` given, to hear
 * of files left out), it must exist, and with `--delete` hold a file: an
 * empty one cannot be told from a mistyped one, as an empty prefix. As the
 * destination, what cannot be read is neither compared nor removed.
 */
async function localEntries (dir: string, source: { unreadable: Unreadable, delete: boolean } | null): Promise<Map<string, LocalFile>> {
  const info = await fileKind(dir)
  if (info === null && source === null) return new Map()
  if (info === null) throw Object.assign(new Error('no such directory'), { code: 'ENOENT' })
  if (info.kind !== 'directory') throw new CliError(`${dir} is not a directory`)
  // Names that differ only in Unicode normalization are one key (`café` spelled two ways): the second is reported.
  const entries = await filesByKey(dir, source?.unreadable ?? (() => {}))
  if (entries.size === 0 && source?.delete === true) {
    throw new CliError(`${dir} holds no files: --delete would remove everything the destination holds (use rm -r for that)`)
  }
  return entries
}

async function plan (context: CommandContext, source: Location, destination: Location, options: MirrorOptions): Promise<Step[]> {
  const steps: Step[] = []
  if (source.kind === 'local' && destination.kind === 'remote') {
    // What the walk left out (a directory it could not read, a store, a name no key can have) is not missing from
    // the source: --delete keeps its keys, whatever is under it.
    const leftOut: string[] = []
    const unreadable: Unreadable = (file, err) => {
      leftOut.push(keptForm(keySuffix(path.relative(source.path, file))))
      context.report(file, err)
    }
    const have = await localEntries(source.path, { unreadable, delete: options.delete })
    const there = await remoteEntries(context, destination)
    const prefix = directoryPrefix(destination.key)
    for (const [kept, file] of have) {
      const object = there.get(kept)
      if (object !== undefined && await sameFile(file, object, options.partSize)) continue
      steps.push({ kind: 'upload', file: file.path, size: file.size, bucket: destination.bucket, key: `${prefix}${file.relative}` })
    }
    if (options.delete) {
      const keptBack = (kept: string): boolean => leftOut.some(out => kept === out || kept.startsWith(`${out}/`))
      for (const [kept, object] of there) if (!have.has(kept) && !keptBack(kept)) steps.push({ kind: 'remove', bucket: destination.bucket, key: object.key })
    }
    return steps
  }
  if (source.kind === 'remote' && destination.kind === 'local') {
    await refuseStoreDestination(destination.path)
    const have = await sourceEntries(context, source, options)
    const there = await localEntries(destination.path, null)
    const prefix = directoryPrefix(source.key)
    for (const [kept, object] of have) {
      if (isFolderMarker(object)) continue
      const relative = keyUnderPrefix(prefix, object.key)
      if (localPathFor(destination.path, relative) === null) {
        context.report(remoteUrl(source.bucket, object.key), new CliError('not a safe local path, skipped'))
        continue
      }
      const file = there.get(kept)
      if (file !== undefined && await sameFile(file, object, options.partSize)) continue
      // A file of the key's other Unicode spelling is the key's file: replaced where it is, not left beside a second one.
      steps.push({ kind: 'download', bucket: source.bucket, object, file: file?.path ?? path.join(destination.path, ...relative.split('/')), root: destination.path })
    }
    if (options.delete) {
      // A file under a link to a directory is not the destination's own: it may live outside it.
      for (const [kept, file] of there) if (!have.has(kept) && !file.throughLink) steps.push({ kind: 'remove-file', file: file.path })
    }
    return steps
  }
  if (source.kind === 'remote' && destination.kind === 'remote') {
    const have = await sourceEntries(context, source, options)
    const there = await remoteEntries(context, destination)
    const prefix = directoryPrefix(destination.key)
    const sourcePrefix = directoryPrefix(source.key)
    for (const [kept, object] of have) {
      const existing = there.get(kept)
      if (existing !== undefined && await sameObject(context, object, { bucket: destination.bucket, object: existing }, options.partSize)) continue
      steps.push({ kind: 'copy', from: { bucket: source.bucket, object }, bucket: destination.bucket, key: `${prefix}${keyUnderPrefix(sourcePrefix, object.key)}` })
    }
    if (options.delete) {
      for (const [kept, object] of there) if (!have.has(kept)) steps.push({ kind: 'remove', bucket: destination.bucket, key: object.key })
    }
    return steps
  }
  throw new CliError('mirror needs an fsb:// location on one side at least, and no -')
}

export function registerMirror (program: Command, wiring: ObjectCommandWiring): void {
  const command = program.command('mirror')
    .description('make DST hold what SRC holds (one way, by size and etag)')
    .argument('<src>', 'a directory or fsb://bucket[/prefix]')
    .argument('<dst>', 'a directory or fsb://bucket[/prefix]')
    .option('--delete', 'remove what DST has and SRC does not', false)
    .option('--dry-run', 'print what would be done, do nothing', false)
  addCommonOptions(command)
  addTransferOptions(command)
  command.action(async (src: string, dst: string, options: MirrorOptions, cmd: Command) => {
    await runCommand('mirror', src, cmd, wiring, async context => {
      const source = parseLocation(src)
      const destination = parseLocation(dst)
      const steps = await plan(context, source, destination, options)
      if (destination.kind === 'local' && !options.dryRun) await makeDirectory(destination.path)
      await runSteps(context, steps, { transfer: options, dryRun: options.dryRun })
    })
  })
}
