/**
 * Every command's help: a default is said once, in words where the value
 * would say nothing (`(default: false)`, `[]`, `{}`), never twice (the
 * description's words and Commander's value side by side).
 */
import t from 'tap'
import type { Command } from 'commander'
import { buildCli } from '../../src/main.js'
import { hidesDefault } from '../../src/doors/command-help.js'

function everyCommand (command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)]
}

t.test('no help text repeats a default or shows one that says nothing', async t => {
  const program = buildCli()
  for (const command of everyCommand(program)) {
    // Unwrapped, so one option's description is one line.
    const help = command.configureHelp({ ...command.configureHelp(), helpWidth: 10_000 }).helpInformation()
    const name = command.name()
    t.notMatch(help, /\(default: (false|\[\]|\{\})[,)]/, `${name}: no empty default`)
    for (const line of help.split('\n')) {
      t.ok((line.match(/default: /g) ?? []).length <= 1, `${name}: one default per option: ${line.trim()}`)
    }
  }
  const serve = program.commands.find(c => c.name() === 'serve')
  const help = serve?.configureHelp({ ...serve.configureHelp(), helpWidth: 10_000 }).helpInformation() ?? ''
  t.match(help, /--fsync <on\|off> +fsync every write before answering \(default: on, env: FSBUCKET_FSYNC\)/)
  t.match(help, /--workers <n> +worker processes sharing the port \(default: one per core, env: FSBUCKET_WORKERS\)/)
})

t.test('hidesDefault', async t => {
  const cases: Array<[{ defaultValue: unknown, defaultValueDescription?: string, description: string }, boolean]> = [
    [{ defaultValue: false, description: 'a flag' }, true],
    [{ defaultValue: [], description: 'a list' }, true],
    [{ defaultValue: {}, description: 'a map' }, true],
    [{ defaultValue: 4, description: 'a number' }, false],
    [{ defaultValue: true, defaultValueDescription: 'on', description: 'a switch' }, false],
    [{ defaultValue: 2, description: 'workers (default: one per core)' }, true],
    [{ defaultValue: ['a'], description: 'a list' }, false]
  ]
  for (const [option, hidden] of cases) t.equal(hidesDefault(option), hidden, JSON.stringify(option))
})
