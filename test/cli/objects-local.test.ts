/** Every object command over the local transport (--data), in a child process. */
import t from 'tap'
import { localCli } from './fixture.js'
import { objectCommands } from './objects.js'

t.test('object commands on a data directory', async t => { await objectCommands(t, await localCli(t)) })
