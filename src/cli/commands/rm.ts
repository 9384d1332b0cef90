/**
 * `fsbucket rm [-r] [--dry-run] fsb://bucket/key...`.
 *
 * Without `-r` each location is one key, and a key that does not exist is
 * an error (`mc rm` and `rm` say so; the store's delete alone would succeed
 * silently, hiding a typo). With `-r` each location is a prefix treated as a
 * directory (`photos` removes the keys under `photos/`; `fsb://b` every key
 * of the bucket, which stays), removed in batches of 1,000 keys.
 */
import type { Command } from 'commander'
import { CliError, cliError } from '../errors.js'
import { addCommonOptions, runCommand, type ObjectCommandWiring } from '../context.js'
import { directoryPrefix, parseLocation } from '../paths.js'
import { runSteps, type Step } from '../steps.js'
import { listAll } from '../transport.js'

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
    for (const arg of args) {
      await runCommand('rm', arg, cmd, wiring, async context => {
        const location = parseLocation(arg)
        if (location.kind !== 'remote') throw new CliError('rm removes fsb:// objects')
        const steps: Step[] = []
        if (options.recursive) {
          for await (const object of listAll(context.transport, location.bucket, directoryPrefix(location.key))) {
            steps.push({ kind: 'remove', bucket: location.bucket, key: object.key })
          }
        } else {
          if (location.key === '') throw new CliError('names a bucket, not a key (rm -r removes its objects, rb the bucket)')
          const object = await context.transport.head(location.bucket, location.key)
          if (object === null) throw cliError('NoSuchKey')
          steps.push({ kind: 'remove', bucket: location.bucket, key: object.key })
        }
        await runSteps(context, steps, { dryRun: options.dryRun })
      })
    }
  })
}
