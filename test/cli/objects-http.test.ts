/** Every object command over the HTTP transport (--endpoint, --token), in a child process. */
import t from 'tap'
import { httpCli } from './fixture.js'
import { objectCommands } from './objects.js'

t.test('object commands on a gateway', async t => { await objectCommands(t, await httpCli(t)) })
