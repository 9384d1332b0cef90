/**
 * The doors' translation of errors: catalogue errors keep their code and
 * status, storage failures are logged at warn with their path, argument
 * errors the engine marked are 400, and any other exception (a TypeError
 * from a bug included) is a 500 logged as a fault.
 */
import t from 'tap'
import {
  ArgumentRangeError, ArgumentTypeError, BucketError, BucketErrors, isArgumentError, storageFailureNames
} from '../../src/bucket/index.js'
import { storageFailure, storageFailureOf } from '../../src/bucket/port.js'
import { DoorError, errorReply } from '../../src/http/errors.js'
import { ManagementError, toManagementError } from '../../src/mgmt/errors.js'

t.test('the HTTP door', async t => {
  const cases: Array<[string, unknown, number, number, string | null]> = [
    ['a catalogue error', new BucketError('NoSuchUpload', 'get'), 404, 10024, null],
    ['a door error', new DoorError('InvalidJson'), 400, 40002, null],
    ['an argument TypeError of the engine', new ArgumentTypeError('put: bad'), 400, 40000, null],
    ['an argument RangeError of the engine', new ArgumentRangeError('uploadPart: bad'), 400, 40000, null],
    ['a TypeError from anywhere else', new TypeError("Cannot read properties of undefined (reading 'x')"), 500, 10001, 'error'],
    ['a RangeError from anywhere else', new RangeError('Maximum call stack size exceeded'), 500, 10001, 'error'],
    ['any other exception', new Error('boom'), 500, 10001, 'error'],
    ['a full disk', storageFailure('NoSpaceLeft', 'storing a body', { path: '/data/b/.fsbucket/blobs/ab/x' }), 507, 10901, 'warn'],
    ['a read-only disk', storageFailure('ReadOnlyStorage', 'committing a write'), 503, 10903, 'warn'],
    ['an I/O error', storageFailure('StorageIoError', 'reading an object'), 500, 10906, 'warn'],
    ['a copy whose source kept changing: try again later, not a fault', new BucketError('CopySourceContended', 'copy'), 503, 10909, 'warn']
  ]
  for (const [label, err, status, code, log] of cases) {
    const answer = errorReply(err)
    t.same([answer.status, answer.code, answer.log], [status, code, log], label)
  }
  const full = errorReply(storageFailure('NoSpaceLeft', 'storing a body', { path: '/data/b/file' }))
  t.equal(full.path, '/data/b/file', 'the path goes to the log')
  t.notMatch(full.message, /\/data/, 'and never to the client')
  t.equal(full.message, `storing a body: ${BucketErrors.NoSpaceLeft.message} (10901)`)
})

t.test('operating-system errors become storage failures of the catalogue', async t => {
  const expected: Record<string, [string, number]> = {
    ENOSPC: ['NoSpaceLeft', 507],
    EDQUOT: ['QuotaExceeded', 507],
    EROFS: ['ReadOnlyStorage', 503],
    EACCES: ['StoragePermissionDenied', 503],
    EPERM: ['StorageNotPermitted', 503],
    EIO: ['StorageIoError', 500],
    EMFILE: ['TooManyOpenFiles', 503]
  }
  for (const [errno, [name, status]] of Object.entries(expected)) {
    const err = storageFailureOf(Object.assign(new Error(`${errno}: oops, open '/x/y'`), { code: errno, path: '/x/y' }), 'storing a body') as BucketError
    t.same([err.errorName, err.status, err.path], [name, status, '/x/y'], errno)
  }
  const other = Object.assign(new Error('gone'), { code: 'ENOENT' })
  t.equal(storageFailureOf(other, 'reading'), other, 'other errors pass through')
  t.equal(new Set(storageFailureNames.map(n => BucketErrors[n].code)).size, storageFailureNames.length, 'each failure its own code')
  t.notOk(isArgumentError(new TypeError('x')))
})

t.test('the management door', async t => {
  const cases: Array<[string, unknown, number, number]> = [
    ['a bucket error it names', new BucketError('BucketNotEmpty', 'deleteBucket'), 409, 10008],
    ['an argument error of the engine', new ArgumentTypeError('settings.public must be a boolean'), 400, 10040],
    ['a TypeError from a bug', new TypeError('x is not a function'), 500, 10001],
    ['a full disk', storageFailure('NoSpaceLeft', 'writing settings.json'), 507, 10901],
    ['a read-only disk', storageFailure('ReadOnlyStorage', 'writing zones.json'), 503, 10903],
    ['a copy whose source kept changing: try again later, as the catalogue says', new BucketError('CopySourceContended', 'copy'), 503, 10909],
    ['its own error', new ManagementError('NoRoute'), 400, 7000]
  ]
  for (const [label, err, status, code] of cases) {
    const answer = toManagementError(err)
    t.same([answer.status, answer.code], [status, code], label)
  }
})
