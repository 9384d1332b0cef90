/**
 * `startServer` serves metrics as `serve` does by default: `GET
 * {url}/_metrics` answers the Prometheus text, counting the requests this
 * server answered (never a 404 naming a `--metrics off` the embedder never
 * gave). With a token, the token is needed, as for `serve`.
 */
import t from 'tap'
import { startServer } from '../../src/index.js'

t.test('GET /_metrics answers on an embedded server', async t => {
  const server = await startServer({ memory: true })
  t.teardown(server.close)
  t.equal((await fetch(`${server.url}/default/missing`)).status, 404)
  const response = await fetch(`${server.url}/_metrics`)
  const text = await response.text()
  t.equal(response.status, 200, text.slice(0, 200))
  t.match(response.headers.get('content-type'), /^text\/plain/)
  t.match(text, /^fsbucket_requests_total\{/m, 'the requests are counted')
  t.notMatch(text, /--metrics/)
})

t.test('with a token, the token reads them', async t => {
  const server = await startServer({ memory: true, token: 'secret-token' })
  t.teardown(server.close)
  t.equal((await fetch(`${server.url}/_metrics`)).status, 401)
  const response = await fetch(`${server.url}/_metrics`, { headers: { authorization: 'Bearer secret-token' } })
  t.equal(response.status, 200)
  await response.arrayBuffer()
})
