/**
 * `fsbucket cp [-r] SRC DST`: local → bucket, bucket → local, bucket →
 * bucket, and `-` for stdin (as SRC) or stdout (as DST).
 *
 * Like `cp` and `aws s3 cp`: a destination ending in `/` (or a bucket with no
 * key, or an existing local directory) receives the source under its own
 * name. With `-r` the source is a directory or a prefix (`photos` means the
 * keys under `photos/`) and its contents land under the destination, each at
 * its path relative to the source. A key that could not be a path inside the
 * destination directory (`..` or empty segments) is reported and skipped.
 */
import path from 'node:path'
import type { Command } from 'commander'
import { CliError, cliError } from '../errors.js'
import { addCommonOptions, addTransferOptions, metadataFor, runCommand, tuningOf, type CommandContext, type TransferOptions, type ObjectCommandWiring } from '../context.js'
import { fileKind, filesByKey, refuseStoreDestination, stdinIsDirectory } from '../local-files.js'
import { directoryPrefix, isFolderMarker, keyBaseName, keyUnderPrefix, localPathFor, parseLocation, remoteUrl, type Location } from '../paths.js'
import { runSteps, type Step } from '../steps.js'
import { downloadToStream, uploadStream } from '../transfer.js'
import { listAll, type ObjectTransport, type RemoteObject } from '../transport.js'

interface CpOptions extends TransferOptions {
  recursive: boolean
}

type Remote = Extract<Location, { kind: 'remote' }>

/** The key a single source named `name` gets at the remote destination. */
function destinationKey (destination: Remote, name: string): string {
  return destination.key === '' || destination.key.endsWith('/') ? `${destination.key}${name}` : destination.key
}

async function requireObject (transport: ObjectTransport, source: Remote): Promise<RemoteObject> {
  if (source.key === '') throw new CliError(`${remoteUrl(source.bucket)} names a bucket, not a key (use -r to copy its objects)`)
  const object = await transport.head(source.bucket, source.key)
  if (object === null) throw cliError('NoSuchKey')
  return object
}

/** Steps that copy every object under a prefix, each to `destination(relative part)`, or null to skip. */
async function stepsFromPrefix (
  context: CommandContext, source: Remote, toStep: (object: RemoteObject, relative: string) => Step | null
): Promise<Step[]> {
  const prefix = directoryPrefix(source.key)
  const steps: Step[] = []
  for await (const object of listAll(context.transport, source.bucket, prefix)) {
    if (isFolderMarker(object)) continue
    const step = toStep(object, keyUnderPrefix(prefix, object.key))
    if (step === null) context.report(remoteUrl(source.bucket, object.key), new CliError('not a safe local path, skipped'))
    else steps.push(step)
  }
  return steps
}

async function plan (context: CommandContext, source: Location, destination: Location, recursive: boolean): Promise<Step[]> {
  if (source.kind === 'local' && destination.kind === 'remote') {
    const found = await fileKind(source.path)
    if (found === null) throw Object.assign(new Error('no such file or directory'), { code: 'ENOENT' })
    if (found.kind === 'directory') {
      if (!recursive) throw new CliError('is a directory (use -r)')
      const steps: Step[] = []
      // Two names of one key (`café` composed and decomposed): the second fails its item rather than replace the first.
      for (const file of (await filesByKey(source.path, context.report)).values()) {
        steps.push({ kind: 'upload', file: file.path, size: file.size, bucket: destination.bucket, key: `${directoryPrefix(destination.key)}${file.relative}` })
      }
      return steps
    }
    if (found.kind !== 'file') throw new CliError('not a regular file')
    return [{ kind: 'upload', file: source.path, size: found.size, bucket: destination.bucket, key: destinationKey(destination, path.basename(source.path)) }]
  }
  if (source.kind === 'remote' && destination.kind === 'local') {
    await refuseStoreDestination(destination.path)
    if (recursive) {
      return await stepsFromPrefix(context, source, (object, relative) => {
        if (localPathFor(destination.path, relative) === null) return null
        return { kind: 'download', bucket: source.bucket, object, file: path.join(destination.path, ...relative.split('/')), root: destination.path }
      })
    }
    const object = await requireObject(context.transport, source)
    const intoDirectory = destination.path.endsWith('/') || destination.path.endsWith(path.sep) || (await fileKind(destination.path))?.kind === 'directory'
    let file = destination.path
    if (intoDirectory) {
      const name = keyBaseName(object.key)
      if (localPathFor(destination.path, name) === null) throw new CliError(`the key's last segment "${name}" is not a file name; name the destination file`)
      file = path.join(destination.path, name)
    }
    return [{ kind: 'download', bucket: source.bucket, object, file }]
  }
  if (source.kind === 'remote' && destination.kind === 'remote') {
    if (recursive) {
      return await stepsFromPrefix(context, source, (object, relative) =>
        ({ kind: 'copy', from: { bucket: source.bucket, object }, bucket: destination.bucket, key: `${directoryPrefix(destination.key)}${relative}` }))
    }
    const object = await requireObject(context.transport, source)
    return [{ kind: 'copy', from: { bucket: source.bucket, object }, bucket: destination.bucket, key: destinationKey(destination, keyBaseName(object.key)) }]
  }
  throw new CliError('copy needs an fsb:// location on one side at least (and - only opposite one)')
}

export function registerCp (program: Command, wiring: ObjectCommandWiring): void {
  const command = program.command('cp')
    .description('copy files and objects: local -> bucket, bucket -> local, bucket -> bucket (- is stdin or stdout)')
    .argument('<src>', 'a file, a directory (with -r), fsb://bucket/key, fsb://bucket/prefix (with -r), or -')
    .argument('<dst>', 'a file or directory, fsb://bucket/key, fsb://bucket/prefix/, or -')
    .option('-r, --recursive', 'copy a directory or every object under a prefix', false)
  addCommonOptions(command)
  addTransferOptions(command)
  command.action(async (src: string, dst: string, options: CpOptions, cmd: Command) => {
    await runCommand('cp', src, cmd, wiring, async context => {
      const source = parseLocation(src)
      const destination = parseLocation(dst)
      const tuning = tuningOf(options)
      if (source.kind === 'stdio' && destination.kind === 'remote') {
        if (options.recursive) throw new CliError('-r cannot read stdin')
        if (destination.key === '' || destination.key.endsWith('/')) throw new CliError(`${dst}: name the key to write stdin to`)
        // Node reads a directory given as stdin as no bytes at all: it would be stored as an empty object.
        if (stdinIsDirectory()) throw new CliError('stdin is a directory, not a file or a pipe (copy a directory with cp -r <dir> fsb://<bucket>/<prefix>/)')
        const tracker = context.progress.track(`upload: - -> ${dst}`, undefined)
        try {
          await uploadStream(context.transport, destination.bucket, destination.key, process.stdin, metadataFor(destination.key, options), tuning, tracker)
        } finally {
          tracker.end()
        }
        context.say(`upload: - -> ${remoteUrl(destination.bucket, destination.key)}`)
        return
      }
      if (source.kind === 'remote' && destination.kind === 'stdio') {
        if (options.recursive) throw new CliError('-r cannot write to stdout')
        const object = await requireObject(context.transport, source)
        const tracker = context.progress.track(`download: ${src} -> -`, object.size)
        try {
          await downloadToStream(context.transport, source.bucket, object.key, process.stdout, tracker)
        } finally {
          tracker.end()
        }
        return
      }
      const steps = await plan(context, source, destination, options.recursive)
      if (steps.length === 1 && !options.recursive) {
        // One file: its own bar, and a failure reported against the command's source.
        await runSteps({ ...context, report: (_target, err) => { throw err } }, steps, { transfer: options })
        return
      }
      await runSteps(context, steps, { transfer: options })
    })
  })
}
