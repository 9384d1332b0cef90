/**
 * `serve --queue-push`: a flag's value is one `<queue>=<url>`, taken whole
 * (a comma in a webhook's query is part of its URL); FSBUCKET_QUEUE_PUSH
 * holds several, comma-separated. A refusal names the push by its queue or
 * its place, never by any of its text.
 */
import t from 'tap'
import { parseServe } from './serve-flags.js'

/** Parses `serve args` (with `env` set) in this process: the pushes, or the refusal's text. */
async function parse (args: string[], env: Record<string, string> = {}): Promise<{ pushes?: unknown, error?: string }> {
  const { value, error } = await parseServe('queuePush', args, env)
  return error === undefined ? { pushes: value } : { error }
}

t.test('a --queue-push value is one push: a comma in its URL stays in the URL', async t => {
  t.same(await parse(['--queue-push', 'q=http://127.0.0.1:1/h?sig=abc,QPUSHFRAGsecret_X=1']),
    { pushes: [{ queue: 'q', url: 'http://127.0.0.1:1/h?sig=abc,QPUSHFRAGsecret_X=1' }] })
  t.same(await parse(['--queue-push', 'a=http://127.0.0.1:1/x?k=1,2', '--queue-push', 'b=http://127.0.0.1:2/y']),
    { pushes: [{ queue: 'a', url: 'http://127.0.0.1:1/x?k=1,2' }, { queue: 'b', url: 'http://127.0.0.1:2/y' }] }, 'repeatable')
})

t.test('two pushes in one --queue-push are refused, naming neither', async t => {
  const { error } = await parse(['--queue-push', 'a=http://127.0.0.1:1/x?t=SECRETA,b=https://127.0.0.1:2/y'])
  t.match(error, /the 1st --queue-push holds a second <queue>=<url> after a comma: give each push a --queue-push of its own/)
  t.notMatch(error, /SECRETA|127\.0\.0\.1/, 'nothing of the value')
})

t.test('FSBUCKET_QUEUE_PUSH holds several, comma-separated', async t => {
  t.same(await parse([], { FSBUCKET_QUEUE_PUSH: 'a=http://127.0.0.1:1/x,b=http://127.0.0.1:2/y' }),
    { pushes: [{ queue: 'a', url: 'http://127.0.0.1:1/x' }, { queue: 'b', url: 'http://127.0.0.1:2/y' }] })
})

t.test('a refused push is named by its place, never by its text', async t => {
  const cases: Array<[string[], Record<string, string>, string]> = [
    [['--queue-push', 'a=http://127.0.0.1:1/x', '--queue-push', 'QPUSHSECRET_X'], {}, 'the 2nd --queue-push: expected <queue>=<url>'],
    [['--queue-push', 'QPUSHSECRET.y=http://127.0.0.1:1/x'], {}, 'the 1st --queue-push: expected <queue>=<url>'],
    [[], { FSBUCKET_QUEUE_PUSH: 'a=http://127.0.0.1:1/h?sig=abc,QPUSHSECRET_X=1' }, 'the 2nd item of FSBUCKET_QUEUE_PUSH: expected <queue>=<url>'],
    [[], { FSBUCKET_QUEUE_PUSH: 'a=http://127.0.0.1:1/h?sig=abc QPUSHSECRET3' }, 'the 2nd item of FSBUCKET_QUEUE_PUSH: expected <queue>=<url>']
  ]
  for (const [args, env, message] of cases) {
    const { error } = await parse(args, env)
    t.match(error, `option '--queue-push' (or FSBUCKET_QUEUE_PUSH) is invalid: ${message}`, message)
    t.notMatch(error, /QPUSHSECRET/, 'no piece of the value is repeated')
  }
  const { error } = await parse(['--queue-push', 'evq=http://127.0.0.1:1/h?QPUSHSECRET', '--queue-push', 'evq2=ftp://x/QPUSHSECRET'])
  t.match(error, 'queue "evq2": the URL must be http: or https:', 'a push with a queue name is named by it')
  t.notMatch(error, /QPUSHSECRET/)
})
