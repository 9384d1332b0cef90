/**
 * Steps of the commands that move or remove many things (cp, mirror, rm):
 * each step is planned first, then run, `--parallel` files at a time, under
 * one overall progress bar when there are several. A failed step is
 * reported on its own line and the others go on; the command then exits 1.
 * Every step done prints one line on stdout, the record of what happened
 * (`upload: a.txt -> fsb://b/a.txt`), or with `--dry-run` what would happen.
 */
import { BucketErrors, MAX_DELETE_KEYS } from '../bucket/index.js'
import { removeLocal } from './local-files.js'
import { isStopping } from './stopping.js'
import { remoteUrl } from './paths.js'
import { itemsToDo, metadataFor, type CommandContext, type TransferOptions } from './context.js'
import { copyObject, downloadToFile, uploadFile, type Tuning } from './transfer.js'
import type { RemoteObject } from './transport.js'

export type Step =
  | { kind: 'upload', file: string, size: number, bucket: string, key: string }
  /** `root`: the directory a recursive download writes under, which the file may not leave by a link. */
  | { kind: 'download', bucket: string, object: RemoteObject, file: string, root?: string }
  | { kind: 'copy', from: { bucket: string, object: RemoteObject }, bucket: string, key: string }
  | { kind: 'remove', bucket: string, key: string }
  | { kind: 'remove-file', file: string }

export function describeStep (step: Step): string {
  switch (step.kind) {
    case 'upload': return `upload: ${step.file} -> ${remoteUrl(step.bucket, step.key)}`
    case 'download': return `download: ${remoteUrl(step.bucket, step.object.key)} -> ${step.file}`
    case 'copy': return `copy: ${remoteUrl(step.from.bucket, step.from.object.key)} -> ${remoteUrl(step.bucket, step.key)}`
    case 'remove': return `remove: ${remoteUrl(step.bucket, step.key)}`
    case 'remove-file': return `remove: ${step.file}`
  }
}

/** What a failure of the step is reported against. */
function targetOf (step: Step): string {
  switch (step.kind) {
    case 'upload': return step.file
    case 'download': return remoteUrl(step.bucket, step.object.key)
    case 'copy': return remoteUrl(step.from.bucket, step.from.object.key)
    case 'remove': return remoteUrl(step.bucket, step.key)
    case 'remove-file': return step.file
  }
}

function sizeOf (step: Step): number {
  switch (step.kind) {
    case 'upload': return step.size
    case 'download': return step.object.size
    case 'copy': return step.from.object.size
    default: return 0
  }
}

async function runTransfer (context: CommandContext, step: Step, options: TransferOptions, tuning: Tuning): Promise<void> {
  const tracker = context.progress.track(describeStep(step), sizeOf(step))
  try {
    switch (step.kind) {
      case 'upload':
        await uploadFile(context.transport, step.bucket, step.key, step.file, step.size, metadataFor(step.file, options), tuning, tracker)
        break
      case 'download':
        await downloadToFile(context.transport, step.bucket, step.object.key, step.file, tracker, step.root)
        break
      case 'copy':
        await copyObject(context.transport, step.from, step.bucket, step.key, metadataFor(step.key, options, step.from.object), tuning, tracker)
        break
      case 'remove-file':
        await removeLocal(step.file)
        break
      case 'remove':
        throw new TypeError('removals of keys are batched')
    }
  } finally {
    tracker.end()
  }
}

/**
 * Runs the steps: transfers `parallel` at a time, then the removals of keys
 * in batches of 1,000 (the store's limit per call). Each step counts as an
 * item left to do until it has succeeded or failed (context.ts: a reader
 * that goes away before then stops the command with exit 1).
 */
export async function runSteps (
  context: CommandContext, steps: Step[], settings: { transfer?: TransferOptions, dryRun?: boolean } = {}
): Promise<void> {
  const options = settings.transfer ?? { meta: {}, partSize: 8 * 1024 * 1024, parallel: 4 }
  const tuning: Tuning = { partSize: options.partSize, parallel: options.parallel }
  if (settings.dryRun === true) {
    for (const step of steps) context.say(`(dry run) ${describeStep(step)}`)
    return
  }
  itemsToDo(steps.length)
  const transfers = steps.filter(s => s.kind !== 'remove')
  if (transfers.length > 1) context.progress.startOverall(transfers.reduce((sum, s) => sum + sizeOf(s), 0), transfers.length)
  let next = 0
  const worker = async (): Promise<void> => {
    // Stopping (Ctrl-C), the steps in flight are being undone: none may start, nor create an upload the undo never hears of.
    while (!isStopping() && next < transfers.length) {
      const step = transfers[next++]
      let failure: { err: unknown } | null = null
      try {
        await runTransfer(context, step, options, tuning)
      } catch (err) {
        failure = { err }
      }
      itemsToDo(-1)
      if (failure === null) context.say(describeStep(step))
      else context.report(targetOf(step), failure.err)
    }
  }
  await Promise.all(Array.from({ length: Math.min(tuning.parallel, transfers.length) }, worker))
  context.progress.stop()
  // Stopping, the workers return at once, the undos still running: a mirror's removals must not follow (they remove what the stop leaves).
  if (isStopping()) return

  const removals = steps.filter((s): s is Extract<Step, { kind: 'remove' }> => s.kind === 'remove')
  const byBucket = new Map<string, string[]>()
  for (const step of removals) {
    const keys = byBucket.get(step.bucket) ?? []
    keys.push(step.key)
    byBucket.set(step.bucket, keys)
  }
  for (const [bucket, keys] of byBucket) {
    for (let i = 0; i < keys.length && !isStopping(); i += MAX_DELETE_KEYS) await removeBatch(context, bucket, keys.slice(i, i + MAX_DELETE_KEYS))
  }
}

/**
 * Removes keys of one bucket in one call: a line for each key removed, a
 * failure for each key kept. A lock rule that retains some keys fails the
 * call after the others are removed, and its error names only the first it
 * kept: each key is then removed alone, so that the store's answer for it
 * says which it kept (removing a key already gone is no error). Any other
 * failure (a refused token, a server gone) is the whole call's: every key
 * of the batch is reported with it, for none is known to be removed.
 */
async function removeBatch (context: CommandContext, bucket: string, keys: string[]): Promise<void> {
  try {
    await context.transport.delete(bucket, keys)
  } catch (err) {
    if (keys.length > 1 && (err as { code?: unknown }).code === BucketErrors.ObjectLocked.code) {
      for (const key of keys) if (!isStopping()) await removeBatch(context, bucket, [key])
    } else {
      itemsToDo(-keys.length)
      for (const key of keys) context.report(remoteUrl(bucket, key), err)
    }
    return
  }
  itemsToDo(-keys.length)
  for (const key of keys) context.say(describeStep({ kind: 'remove', bucket, key }))
}
