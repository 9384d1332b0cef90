/** Large objects and mirrors over the http transport, in child processes. */
import t from 'tap'
import { httpCli } from './fixture.js'
import { largeObjects, mirrors } from './transfers.js'

// Dozens of child processes, each starting Node and the program: on a loaded
// machine that can outlast tap's default 300 s per file.
t.setTimeout(15 * 60 * 1000)

t.test('large objects', async t => { await largeObjects(t, await httpCli(t)) })
t.test('mirror', async t => { await mirrors(t, await httpCli(t)) })
