/**
 * `startServer` serves metrics as `serve` does by default: `GET
 * {url}/_metrics` answers the Prometheus text, counting the requests this
 * server answered (never a 404 naming a `--metrics off` the embedder never
 * gave). With a token, the token is needed, as for `serve`.
 */
import t from 'tap'
import { connect } from 'node:net'
import { startServer } from '../../src/index.js'
import { testdir } from '../testdir.js'

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

t.test('catalog commits are the process\'s: every open server counts them, a closed one stops', async t => {
  const commits = async (url: string): Promise<number> => {
    const text = await (await fetch(`${url}/_metrics`)).text()
    return Number(/^fsbucket_catalog_commit_duration_seconds_count\{catalog="sqlite"\} (\d+)$/m.exec(text)?.[1] ?? 0)
  }
  const a = await startServer({ dataDir: testdir(t) })
  t.teardown(a.close)
  const b = await startServer({ dataDir: testdir(t) })
  const put = async (url: string, key: string): Promise<void> => { t.equal((await fetch(`${url}/default/${key}`, { method: 'PUT', body: key })).status, 200) }
  const [a0, b0] = [await commits(a.url), await commits(b.url)]
  await put(a.url, 'one')
  t.ok(await commits(a.url) > a0, 'the first server counts its own commit')
  t.ok(await commits(b.url) > b0, 'and so does the second (process figures)')
  await b.close()
  const a1 = await commits(a.url)
  await put(a.url, 'two')
  t.ok(await commits(a.url) > a1, 'the first still counts after the second closed')
})

t.test('an upload whose client ends its side mid-body is one request, counted aborted, and answered nothing', async t => {
  const server = await startServer({ memory: true })
  t.teardown(server.close)
  const { port } = new URL(server.url)
  const counts = async (): Promise<{ aborted: number, refused: number }> => {
    const text = await (await fetch(`${server.url}/_metrics`)).text()
    const sum = (pattern: RegExp): number => text.split('\n').filter(line => pattern.test(line)).reduce((total, line) => total + Number(line.slice(line.lastIndexOf(' ') + 1)), 0)
    return { aborted: sum(/^fsbucket_requests_total\{.*operation="PutObject".*status="aborted"/), refused: sum(/^fsbucket_requests_total\{.*operation="other"/) }
  }
  const before = await counts()
  const received = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(`PUT /default/cut HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 100000\r\n\r\n${'x'.repeat(10)}`)
      setTimeout(() => socket.end(), 200)
    })
    let bytes = ''
    socket.on('data', chunk => { bytes += chunk.toString() })
    socket.on('close', () => resolve(bytes))
    socket.on('error', reject)
  })
  t.equal(received, '', 'no answer to a request the client gave up on')
  let after = await counts()
  for (let tries = 0; after.aborted === before.aborted && tries < 40; tries++) {
    await new Promise(resolve => setTimeout(resolve, 25))
    after = await counts()
  }
  t.equal(after.aborted, before.aborted + 1, 'counted once, as aborted')
  t.equal(after.refused, before.refused, 'not again as a malformed request')
  t.equal((await fetch(`${server.url}/default/cut`)).status, 404, 'nothing stored')
})
