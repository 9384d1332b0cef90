/**
 * docs/cli.md and the object commands agree: every object command is in its
 * table, and every flag of every object command (and its variable, if it
 * has one) is documented there.
 */
import t from 'tap'
import { buildCli } from '../../src/main.js'
import { docsPage } from '../docs.js'

const objectCommands = ['cp', 'ls', 'cat', 'stat', 'rm', 'mb', 'rb', 'mirror']

t.test('docs/cli.md documents every object command and flag', async t => {
  const page = await docsPage('cli.md')
  t.ok(page.startsWith('# Object commands\n'), 'the page is the object commands\' reference')
  const program = buildCli()
  for (const name of objectCommands) {
    const command = program.commands.find(c => c.name() === name)
    if (command === undefined) {
      t.fail(`${name} is registered`)
      continue
    }
    t.match(page, new RegExp(`^\\| \`${name}[ \`]`, 'm'), `${name} is in the table`)
    for (const option of command.options) {
      t.ok(page.includes(`\`${option.flags.split(' <')[0]}`) || page.includes(option.long ?? '-'), `${name} ${option.flags} is documented`)
      if (option.envVar !== undefined) t.ok(page.includes(`\`${option.envVar}\``), `${option.envVar} is documented`)
    }
  }
})
