/**
 * `fsbucket cat fsb://bucket/key...`: the objects' bytes, one after the
 * other, streamed to stdout. A reader that goes away (`| head`) ends the
 * command quietly.
 */
import type { Command } from 'commander'
import { CliError, cliError } from '../errors.js'
import { addCommonOptions, runCommand, type ObjectCommandWiring } from '../context.js'
import { parseLocation } from '../paths.js'
import { downloadToStream } from '../transfer.js'

export function registerCat (program: Command, wiring: ObjectCommandWiring): void {
  const command = program.command('cat')
    .description('write objects to stdout')
    .argument('<locations...>', 'fsb://bucket/key')
  addCommonOptions(command)
  command.action(async (args: string[], _options: unknown, cmd: Command) => {
    for (const arg of args) {
      let stop = false
      await runCommand('cat', arg, cmd, wiring, async context => {
        const location = parseLocation(arg)
        if (location.kind !== 'remote' || location.key === '') throw new CliError('cat reads fsb://bucket/key')
        const object = await context.transport.head(location.bucket, location.key)
        if (object === null) throw cliError('NoSuchKey')
        try {
          await downloadToStream(context.transport, location.bucket, object.key, process.stdout, { add () {}, end () {} })
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'EPIPE') throw err
          stop = true
        }
      })
      if (stop) return
    }
  })
}
