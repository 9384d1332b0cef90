/** Large objects and mirrors over the http transport, in child processes. */
import t from 'tap'
import { httpCli } from './fixture.js'
import { largeObjects, mirrors } from './transfers.js'

t.test('large objects', async t => { await largeObjects(t, await httpCli(t)) })
t.test('mirror', async t => { await mirrors(t, await httpCli(t)) })
