/**
 * The URL a request log line names (doors/request-log.ts), on every door:
 * the values of the query parameters that carry credentials are hidden,
 * their names and every other parameter kept, however a name is cased or
 * percent-encoded.
 */
import t from 'tap'
import { redactedUrl } from '../../src/doors/redacted-url.js'
import { createLogger } from '../../src/server/logger.js'

t.test('the values of credential parameters are hidden, their names kept', async t => {
  const cases: Array<[string, string]> = [
    ['/b/k', '/b/k'],
    ['/b/k?list-type=2&prefix=a', '/b/k?list-type=2&prefix=a'],
    ['/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F2026&X-Amz-Signature=feed&X-Amz-Security-Token=tok',
      '/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=[redacted]&X-Amz-Signature=[redacted]&X-Amz-Security-Token=[redacted]'],
    ['/b/k?x-amz-server-side-encryption-customer-algorithm=AES256&x-amz-server-side-encryption-customer-key=S0VZ&x-amz-server-side-encryption-customer-key-MD5=TUQ1',
      '/b/k?x-amz-server-side-encryption-customer-algorithm=AES256&x-amz-server-side-encryption-customer-key=[redacted]&x-amz-server-side-encryption-customer-key-MD5=[redacted]'],
    ['/b/k?x-amz-copy-source-server-side-encryption-customer-key=S0VZ&X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key-MD5=TUQ1',
      '/b/k?x-amz-copy-source-server-side-encryption-customer-key=[redacted]&X-Amz-Copy-Source-Server-Side-Encryption-Customer-Key-MD5=[redacted]'],
    ['/x?token=t1&access_token=t2&sig=t3&signature=t4&Token=t5&SIG=t6', '/x?token=[redacted]&access_token=[redacted]&sig=[redacted]&signature=[redacted]&Token=[redacted]&SIG=[redacted]'],
    ['/x?X-Amz-Signatur%65=feed&%74oken=t1', '/x?X-Amz-Signatur%65=[redacted]&%74oken=[redacted]'],
    ['/x?tokens=keep&mysig=keep&token', '/x?tokens=keep&mysig=keep&token'],
    ['/x?a=%zz&token=t1', '/x?a=%zz&token=[redacted]'],
    ['/x?X-Amz-Signature%=feed&%zz=v&ok=1', '/x?X-Amz-Signature%=[redacted]&%zz=[redacted]&ok=1']
  ]
  for (const [url, expected] of cases) t.equal(redactedUrl(url), expected, url)
})

t.test('a request Fastify logs itself (a fault at an app\'s root) shows its URL redacted, on the process\'s logger', async t => {
  const lines: string[] = []
  const log = createLogger({ level: 'info', destination: { write: (line: string) => { lines.push(line) } }, pretty: false })
  log.child({ reqId: 'r1' }).error({ req: { method: 'GET', url: '/b/k?token=secret-in-url&x=1', hostname: 'h', headers: { authorization: 'Bearer b' } } }, 'request failed')
  const line = JSON.parse(lines[0] ?? '{}') as { req?: Record<string, unknown> }
  t.same(line.req, { method: 'GET', url: '/b/k?token=[redacted]&x=1', host: 'h' }, 'method, URL without its credentials and host: no headers')
  t.notOk(lines.join('').includes('secret-in-url'))
})
