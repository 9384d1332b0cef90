/**
 * The README's "Object commands" section and the commands agree: every
 * object command is in its table, and every flag of every object command
 * (and its variable, if it has one) is documented there.
 */
import t from 'tap'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { buildCli } from '../../src/cli.js'
import { root } from './fixture.js'

const objectCommands = ['cp', 'ls', 'cat', 'stat', 'rm', 'mb', 'rb', 'mirror']

t.test('the README documents every object command and flag', async t => {
  const text = await readFile(path.join(root, 'README.md'), 'utf8')
  const section = text.split('\n## Object commands\n')[1]?.split(/\n## /)[0] ?? ''
  t.ok(section.length > 0, 'the section exists')
  const program = buildCli()
  for (const name of objectCommands) {
    const command = program.commands.find(c => c.name() === name)
    if (command === undefined) {
      t.fail(`${name} is registered`)
      continue
    }
    t.match(section, new RegExp(`^\\| \`${name}[ \`]`, 'm'), `${name} is in the table`)
    for (const option of command.options) {
      t.ok(section.includes(`\`${option.flags.split(' <')[0]}`) || section.includes(option.long ?? '-'), `${name} ${option.flags} is documented`)
      if (option.envVar !== undefined) t.ok(section.includes(`\`${option.envVar}\``), `${option.envVar} is documented`)
    }
  }
  t.match(section, /--version/, '--version is documented')
})
