/**
 * The object commands' error texts, keyed by name: an engine error reads the
 * same from the library and from a server's answer, and the codes the
 * commands name for what only a server answers are the doors' own.
 */
import t from 'tap'
import { BucketError, BucketErrors } from '../../src/bucket/index.js'
import { storageFailure } from '../../src/bucket/port.js'
import { cliError, describeError, fromBucketError, fromCode, serverErrors } from '../../src/cli/errors.js'
import { DoorErrors } from '../../src/http/errors.js'
import { ManagementErrors } from '../../src/mgmt/errors.js'

t.test('the codes of the servers\' answers are the doors\' own, by name', async t => {
  const tables: Record<string, { code: number }> = { ...ManagementErrors, ...DoorErrors }
  for (const [name, { code }] of Object.entries(serverErrors)) t.equal(code, tables[name]?.code, name)
})

t.test('an engine error reads the same from the library and from an answer', async t => {
  const cases: Array<[string, BucketError, string]> = [
    ['a missing bucket', new BucketError('NoSuchBucket', 'get'), 'no such bucket'],
    ['a bad key', new BucketError('InvalidObjectName', 'put'), 'invalid key (1 to 1,024 bytes of UTF-8)'],
    ['a large put', new BucketError('EntityTooLarge', 'put'), 'object too large for one put (5 GiB minus 5 MiB)']
  ]
  for (const [label, err, text] of cases) {
    t.equal(fromBucketError(err).message, text, `${label}, from the library`)
    t.equal(fromCode(err.code, err.message).message, text, `${label}, from an answer`)
    t.equal(describeError(err), text, `${label}, as thrown`)
    t.equal(fromBucketError(err).code, err.code, 'the code is kept')
  }
  const full = storageFailure('NoSpaceLeft', 'storing a body')
  t.equal(fromBucketError(full).message, full.message, 'an error without a text keeps its message')
  t.equal(fromCode(BucketErrors.InternalError.code, 'the server said so').message, 'the server said so')
})

t.test('what the commands find themselves reads as a server would answer it', async t => {
  t.same([cliError('NoSuchKey').message, cliError('NoSuchKey').code], ['no such key', DoorErrors.NoSuchKey.code])
  t.same([cliError('NoSuchBucket').message, cliError('NoSuchBucket').code], ['no such bucket', BucketErrors.NoSuchBucket.code])
  t.equal(fromCode(DoorErrors.MissingToken.code, 'x').message, 'the server needs a token (--token or FSBUCKET_TOKEN)')
  t.equal(fromCode(ManagementErrors.AuthenticationError.code, 'x').message, 'the server refused the credentials')
})
