/**
 * `fsbucket rm [-r] [--dry-run] fsb://bucket/key...`.
 *
 * Without `-r` each location is one key, and a key that does not exist is
 * an error (`mc rm` and `rm` say so; the store's delete alone would succeed
 * silently, hiding a typo). With `-r` each location is a prefix treated as a
 * directory (`photos` removes the keys under `photos/`; `fsb://b` every key
 * of the bucket, which stays), removed in batches of 1,000 keys. A prefix
 * under which nothing is stored, when its own name is a key, was meant as
 * that key: `rm -r` says so and fails, rather than succeed having removed
 * nothing (a prefix matching nothing at all removes nothing, as `rm -rf`).
 */
import type { Command } from 'commander'
import { CliError, cliError } from '../errors.js'
import { addCommonOptions, itemsToDo, runCommand, type ObjectCommandWiring } from '../context.js'
import { directoryPrefix, parseLocation } from '../paths.js'
import { runSteps, type Step } from '../steps.js'
import { listAll, type ObjectTransport } from '../transport.js'

interface RmOptions {
  recursive: boolean
  dryRun: boolean
}

export function registerRm (program: Command, wiring: ObjectCommandWiring): void {
  const command = program.command('rm')
    .description('remove objects')
    .argument('<locations...>', 'fsb://bucket/key, or fsb://bucket/prefix with -r')
    .option('-r, --recursive', 'remove every key under the prefix', false)
    .option('--dry-run', 'print what would be removed, remove nothing', false)
  addCommonOptions(command)
  command.action(async (args: string[], options: RmOptions, cmd: Command) => {
    // Each location is an item left to do until its keys are (runSteps counts those): a reader gone before then stops rm, exit 1.
    if (!options.dryRun) itemsToDo(args.length)
    for (const arg of args) {
      await runCommand('rm', arg, cmd, wiring, async context => {
        let steps: Step[]
        try {
          steps = await planRemoval(context.transport, arg, options.recursive)
        } finally {
          if (!options.dryRun) itemsToDo(-1)
        }
        await runSteps(context, steps, { dryRun: options.dryRun })
      })
    }
  })
}

/** The removals `arg` asks for. */
async function planRemoval (transport: ObjectTransport, arg: string, recursive: boolean): Promise<Step[]> {
  const location = parseLocation(arg)
  if (location.kind !== 'remote') throw new CliError('rm removes fsb:// objects')
  if (recursive) {
    const prefix = directoryPrefix(location.key)
    const steps: Step[] = []
    for await (const object of listAll(transport, location.bucket, prefix)) {
      steps.push({ kind: 'remove', bucket: location.bucket, key: object.key })
    }
    if (steps.length === 0 && prefix !== location.key && await transport.head(location.bucket, location.key) !== null) {
      throw new CliError('is an object, not a prefix: rm without -r removes it')
    }
    return steps
  }
  if (location.key === '') throw new CliError('names a bucket, not a key (rm -r removes its objects, rb the bucket)')
  const object = await transport.head(location.bucket, location.key)
  if (object === null) throw cliError('NoSuchKey')
  return [{ kind: 'remove', bucket: location.bucket, key: object.key }]
}

