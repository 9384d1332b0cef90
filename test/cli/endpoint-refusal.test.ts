/**
 * A malformed `--endpoint` (or FSBUCKET_ENDPOINT), or one with a path, a
 * query or a fragment, is refused without being repeated: it may carry a
 * password or a token, as --s3-endpoint may.
 */
import t from 'tap'
import { HttpTransport } from '../../src/cli/transport-http.js'

t.test('a malformed --endpoint is refused, never repeated', async t => {
  const cases: Array<[string, string]> = [
    ['http//CLIMALFORMEDsecret@x', '--endpoint (or FSBUCKET_ENDPOINT) is not a URL (e.g. http://127.0.0.1:8787)'],
    ['http://user:CLIMALFORMEDsecret@[bad', '--endpoint (or FSBUCKET_ENDPOINT) is not a URL'],
    ['ftp://user:CLIMALFORMEDsecret@host/', '--endpoint (or FSBUCKET_ENDPOINT) is not an http(s) URL'],
    ['CLIMALFORMEDsecret:x', '--endpoint (or FSBUCKET_ENDPOINT) is not an http(s) URL'],
    // A path was put before every route's: uploads to fsb://default/a.txt landed in the bucket photos, as default/a.txt.
    ['http://127.0.0.1:8787/photos', 'must be a gateway\'s origin, with no path, query or fragment'],
    ['http://127.0.0.1:8787/?token=CLIMALFORMEDsecret', 'must be a gateway\'s origin'],
    ['http://127.0.0.1:8787#CLIMALFORMEDsecret', 'must be a gateway\'s origin']
  ]
  for (const [endpoint, message] of cases) {
    let text = ''
    try { void new HttpTransport(endpoint, undefined) } catch (err) { text = (err as Error).message }
    t.match(text, message, message)
    t.notMatch(text, /CLIMALFORMEDsecret/, 'the value is not repeated')
  }
  for (const endpoint of ['http://127.0.0.1:8787', 'http://127.0.0.1:8787/', 'https://gateway.example.test']) {
    t.doesNotThrow(() => new HttpTransport(endpoint, undefined), `${endpoint} is an origin`)
  }
})
