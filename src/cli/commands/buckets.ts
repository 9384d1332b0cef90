/**
 * `fsbucket mb fsb://name...` and `fsbucket rb [--force] fsb://name...`:
 * make and remove buckets. `mb -p` is quiet about a bucket that exists;
 * `rb --force` first removes every object of the bucket (as `mc rb
 * --force` does), otherwise a bucket that holds objects is refused.
 */
import type { Command } from 'commander'
import { BucketErrors } from '../../bucket/index.js'
import { CliError } from '../errors.js'
import { addCommonOptions, itemsToDo, runCommand, type ObjectCommandWiring } from '../context.js'
import { parseLocation, remoteUrl } from '../paths.js'
import { runSteps, type Step } from '../steps.js'
import { listAll, type ObjectTransport } from '../transport.js'

function bucketOf (arg: string): string {
  const location = parseLocation(arg.endsWith('/') ? arg.slice(0, -1) : arg)
  if (location.kind !== 'remote' || location.key !== '') throw new CliError('expected fsb://<bucket>')
  return location.bucket
}

/**
 * Whether the bucket `name` exists: listed, or not listed because its
 * settings are damaged (its own requests answer 10915, not 10006, as a
 * name a file holds does).
 */
async function bucketExists (transport: ObjectTransport, name: string): Promise<boolean> {
  if ((await transport.listBuckets()).some(bucket => bucket.name === name)) return true
  return await transport.list(name, {}).then(() => true, (err: unknown) => (err as { code?: unknown }).code !== BucketErrors.NoSuchBucket.code)
}

/** Does one bucket's work, counted done (or failed) before its line is printed (context.ts's `itemsToDo`). */
async function asItem<T> (work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } finally {
    itemsToDo(-1)
  }
}

export function registerBuckets (program: Command, wiring: ObjectCommandWiring): void {
  const mb = program.command('mb')
    .description('make buckets')
    .argument('<buckets...>', 'fsb://name')
    .option('-p, --ignore-existing', 'no error when the bucket exists', false)
  addCommonOptions(mb)
  mb.action(async (args: string[], options: { ignoreExisting: boolean }, cmd: Command) => {
    // Each bucket is an item left to do until made: a reader gone before then stops mb, exit 1.
    itemsToDo(args.length)
    for (const arg of args) {
      await runCommand('mb', arg, cmd, wiring, async context => {
        const made = await asItem(async () => {
          const name = bucketOf(arg)
          try {
            await context.transport.createBucket(name)
          } catch (err) {
            // Both transports carry the catalogue's code: the local one from the engine, the HTTP one from the answer.
            // A name a file holds in the data directory is refused with that code too, though no bucket of it exists.
            if (options.ignoreExisting && (err as { code?: unknown }).code === BucketErrors.BucketAlreadyExists.code && await bucketExists(context.transport, name)) return null
            throw err
          }
          return name
        })
        if (made !== null) context.say(`created bucket ${remoteUrl(made)}`)
      })
    }
  })

  const rb = program.command('rb')
    .description('remove empty buckets (--force: remove their objects first)')
    .argument('<buckets...>', 'fsb://name')
    .option('--force', 'remove every object of the bucket first', false)
  addCommonOptions(rb)
  rb.action(async (args: string[], options: { force: boolean }, cmd: Command) => {
    // Each bucket is an item left to do until removed (its objects are runSteps' items): a reader gone before then stops rb, exit 1.
    itemsToDo(args.length)
    for (const arg of args) {
      await runCommand('rb', arg, cmd, wiring, async context => {
        const removed = await asItem(async () => {
          const name = bucketOf(arg)
          if (options.force) {
            const steps: Step[] = []
            for await (const object of listAll(context.transport, name, '')) steps.push({ kind: 'remove', bucket: name, key: object.key })
            let failed = false
            await runSteps({ ...context, report: (target, err) => { failed = true; context.report(target, err) } }, steps)
            if (failed) return null
          }
          await context.transport.deleteBucket(name)
          return name
        })
        if (removed !== null) context.say(`removed bucket ${remoteUrl(removed)}`)
      })
    }
  })
}
