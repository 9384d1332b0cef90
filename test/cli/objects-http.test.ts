/** Every object command over the HTTP transport (--endpoint, --token), in a child process. */
import t from 'tap'
import { httpCli } from './fixture.js'
import { objectCommands } from './objects.js'

// Dozens of child processes, each starting Node and the program: on a loaded
// machine that can outlast tap's default 300 s per file.
t.setTimeout(15 * 60 * 1000)

t.test('object commands on a gateway', async t => { await objectCommands(t, await httpCli(t)) })
