/**
 * `npm run test:clients`, part two: S3 clients of other languages and kinds,
 * from Debian's packages, against a server on 127.0.0.1 over a fresh data
 * directory, as their users drive them:
 *
 *   - restic (Go, package restic): init, backup, check --read-data, restore,
 *     forget --prune, on a repository in a bucket;
 *   - duplicity with its boto3 backend (duplicity, python3-boto3): a full
 *     backup in multipart volumes, verify, restore;
 *   - the minio-go v7 library (golang-go, golang-github-minio-minio-go-v7-dev):
 *     test/clients/programs/minio-go, built offline in GOPATH mode;
 *   - Ruby's aws-sdk-s3 (ruby-aws-sdk-s3): programs/aws-sdk-s3.rb;
 *   - Perl's Net::Amazon::S3 (libnet-amazon-s3-perl): programs/net-amazon-s3.pl;
 *   - the `minio` npm package, installed beside the project in
 *     FSBUCKET_CLIENTS_NPM (default ~/.cache/fsbucket-clients):
 *     programs/minio-js.mjs.
 *
 * Each prints what it saw; the test checks that and the stored bytes. A
 * client that is not installed is skipped with a note naming its package
 * and scripts/install-clients.sh. Not part of `npm test`.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { openRegistry } from '../../src/index.js'
import { buildS3App, DEVELOPMENT_CREDENTIAL, s3AccessPolicy } from '../../src/s3/index.js'
import { testdir } from '../testdir.js'

const run = promisify(execFile)
const { accessKeyId, secretAccessKey } = DEVELOPMENT_CREDENTIAL
// The programs stay in the source tree (tsc copies no .go, .rb or .pl): dist/test/clients -> test/clients/programs.
const programs = path.resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../test/clients/programs')

async function succeeds (command: string, args: string[]): Promise<boolean> {
  try {
    await run(command, args)
    return true
  } catch {
    return false
  }
}

function missing (found: boolean, what: string, pkg: string): string | false {
  return found ? false : `${what} is not installed: run scripts/install-clients.sh (or apt-get install ${pkg})`
}

async function firstLine (command: string, args: string[]): Promise<string> {
  const { stdout } = await run(command, args)
  return stdout.trim().split('\n')[0]
}

function sha256 (data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

t.test('S3 clients of other languages', async t => {
  const root = testdir(t)
  const work = path.join(root, 'work')
  await mkdir(work, { recursive: true })
  const registry = await openRegistry(path.join(root, 'data'), { fsync: false })
  await registry.create('clients')
  const app = await buildS3App({ registry, policy: s3AccessPolicy({ accessKeyId, secretAccessKey }, null, true), domains: [], logLevel: false })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close(); await registry.close() })
  const host = `127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const endpoint = `http://${host}`
  const bucket = (await registry.open('clients'))!
  const { AWS_CA_BUNDLE: _caBundle, ...inherited } = process.env
  const env = { ...inherited, HOME: work, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_CONFIG_FILE: path.join(work, 'none'), AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'none') }
  const keysUnder = async (prefix: string): Promise<string[]> => (await bucket.list({ prefix })).objects.map(o => o.key)

  const restic = await succeeds('restic', ['version'])
  if (restic) t.comment(`restic: ${await firstLine('restic', ['version'])}`)
  t.test('restic: init, backup, check, restore, forget --prune', { skip: missing(restic, 'restic', 'restic') }, async t => {
    const source = path.join(work, 'restic-src')
    await mkdir(path.join(source, 'sub dir'), { recursive: true })
    const big = randomBytes(24 * 1024 * 1024)
    await writeFile(path.join(source, 'big.bin'), big)
    await writeFile(path.join(source, 'sub dir', 'b+c.txt'), 'beta gamma\n')
    const resticEnv = { ...env, RESTIC_REPOSITORY: `s3:${endpoint}/clients/restic`, RESTIC_PASSWORD: 'fsbucket', RESTIC_CACHE_DIR: path.join(work, 'restic-cache') }
    const r = async (...args: string[]): Promise<string> => (await run('restic', args, { env: resticEnv, cwd: work, maxBuffer: 1 << 24 })).stdout
    await r('init')
    t.ok((await keysUnder('restic/')).includes('restic/config'), 'the repository config is an object')
    await r('backup', 'restic-src')
    t.match(await r('check', '--read-data'), /no errors were found/)
    await r('restore', 'latest', '--target', path.join(work, 'restic-out'))
    t.equal(sha256(await readFile(path.join(work, 'restic-out', 'restic-src', 'big.bin'))), sha256(big), 'restored the same bytes')
    t.equal(await readFile(path.join(work, 'restic-out', 'restic-src', 'sub dir', 'b+c.txt'), 'utf8'), 'beta gamma\n')
    await r('forget', '--prune', '--keep-last', '1')
    t.equal((await keysUnder('restic/locks/')).length, 0, 'no lock left behind')
    const snapshots = JSON.parse(await r('snapshots', '--json')) as unknown[]
    t.equal(snapshots.length, 1)
  })

  // duplicity runs Debian's python3, which needs Debian's boto3 (one in another Python does not count).
  const duplicity = await succeeds('duplicity', ['--version']) && await succeeds('/usr/bin/python3', ['-c', 'import boto3'])
  if (duplicity) t.comment(`duplicity: ${await firstLine('duplicity', ['--version'])}`)
  t.test('duplicity (boto3 backend): full backup in multipart volumes, verify, restore', { skip: missing(duplicity, 'duplicity (with Debian\'s python3-boto3)', 'duplicity python3-boto3') }, async t => {
    const source = path.join(work, 'dup-src')
    await mkdir(path.join(source, 'sub'), { recursive: true })
    const big = randomBytes(9_000_000)
    await writeFile(path.join(source, 'big.bin'), big)
    await writeFile(path.join(source, 'sub', 'a.txt'), 'alpha\n')
    const target = 'boto3+s3://clients/duplicity'
    // Unencrypted: gpg's agent cannot start with its socket under a test directory's long path, and S3 sees bytes either way.
    const d = async (...args: string[]): Promise<string> => (await run('duplicity', [...args, '--no-encryption', '--s3-endpoint-url', endpoint, '--num-retries', '1'], { env, maxBuffer: 1 << 24 })).stdout
    // 7 MB volumes over 5 MB chunks: each full volume is a multipart upload.
    t.match(await d('full', '--volsize', '7', '--s3-multipart-chunk-size', '5', source, target), /Errors 0/)
    t.ok((await keysUnder('duplicity/')).some(key => key.endsWith('.vol1.difftar.gz')), 'the first volume is stored')
    t.match(await d('verify', target, source), /0 differences found/)
    await d('restore', target, path.join(work, 'dup-out'))
    t.equal(sha256(await readFile(path.join(work, 'dup-out', 'big.bin'))), sha256(big), 'restored the same bytes')
  })

  // The `minio` npm package is installed beside the project (scripts/install-clients.sh), not as one of its dependencies.
  const npmPrefix = process.env.FSBUCKET_CLIENTS_NPM ?? path.join(os.homedir(), '.cache', 'fsbucket-clients')
  let minioJs: string | null
  try {
    minioJs = createRequire(path.join(npmPrefix, 'package.json')).resolve('minio')
  } catch {
    minioJs = null
  }
  if (minioJs !== null) t.comment(`minio (npm): ${(JSON.parse(await readFile(path.join(npmPrefix, 'node_modules', 'minio', 'package.json'), 'utf8')) as { version: string }).version}`)
  t.test('minio (npm): put (stream, multipart), stat, get, partial get, copy, list v2 and v1, presigned GET and PUT, remove', {
    skip: minioJs === null ? `the minio npm package is not installed in ${npmPrefix}: run scripts/install-clients.sh (or npm install --prefix ${npmPrefix} minio@8)` : false
  }, async t => {
    const { stdout } = await run(process.execPath, [path.join(programs, 'minio-js.mjs'), minioJs as string, host, 'clients'], { env, maxBuffer: 1 << 24 })
    t.match(stdout, /^stat: 14 text\/plain minio-js$/m, 'metadata round trip')
    t.match(stdout, /^big etag: [0-9a-f]{32}-\d+$/m, 'a stream of unknown length goes up as a multipart upload')
    t.match(stdout, /^big same: true$/m)
    t.match(stdout, /^partial: minio$/m)
    t.match(stdout, /^listed: mjs\/big\.bin:12582912 mjs\/copy\.txt:14 mjs\/small\.txt:14$/m)
    t.match(stdout, /^listed v1: 3$/m)
    t.match(stdout, /^presigned get: hello minio js$/m)
    t.match(stdout, /^presigned put: 200$/m)
    t.match(stdout, /^left: 0$/m)
    t.equal(await registry.info('minio-js-made'), null, 'the bucket it made is removed')
  })

  const go = await succeeds('go', ['version']) && await succeeds('test', ['-d', '/usr/share/gocode/src/github.com/minio/minio-go/v7'])
  if (go) t.comment(`minio-go: ${(await firstLine('sh', ['-c', "dpkg-query -W -f='${Version}' golang-github-minio-minio-go-v7-dev"]))}, ${await firstLine('go', ['version'])}`)
  t.test('minio-go: make bucket, put (multipart), get, range, compose, copy, list, remove', { skip: missing(go, 'minio-go (or go)', 'golang-go golang-github-minio-minio-go-v7-dev'), timeout: 600_000 }, async t => {
    const binary = path.join(work, 'minio-go')
    // Debian's Go libraries are a GOPATH; the build cache is kept between runs (a first build takes a minute).
    const goEnv = { ...env, GO111MODULE: 'off', GOPATH: '/usr/share/gocode', GOFLAGS: '', GOCACHE: path.join(os.tmpdir(), 'fsbucket-clients-go-cache') }
    await run('go', ['build', '-o', binary, '.'], { env: goEnv, cwd: path.join(programs, 'minio-go') })
    const { stdout } = await run(binary, [host, 'clients'], { env, maxBuffer: 1 << 24 })
    t.match(stdout, /^stat: 11 text\/plain minio-go$/m, 'metadata round trip')
    t.match(stdout, /^big etag: [0-9a-f]{32}-5$/m, 'five parts of 5 MiB')
    t.match(stdout, /^big same: true$/m)
    t.match(stdout, /^range: " mini"$/m)
    t.match(stdout, /^composed same: true$/m, 'ComposeObject through UploadPartCopy with a source range')
    t.match(stdout, /^listed: minio\/composed\.bin 5242891$/m)
    t.match(stdout, /^left after remove: 0$/m)
    t.match(stdout, /^OK$/m)
    t.equal(await registry.info('minio-made'), null, 'the bucket it made is removed')
  })

  const ruby = await succeeds('ruby', ['-e', 'require "aws-sdk-s3"'])
  if (ruby) t.comment(`aws-sdk-s3 (Ruby): ${await firstLine('ruby', ['-e', 'require "aws-sdk-s3"; puts "#{Aws::S3::GEM_VERSION}, ruby #{RUBY_VERSION}"'])}`)
  t.test('Ruby aws-sdk-s3: put, get, upload_file (multipart), part read, list, delete', { skip: missing(ruby, 'Ruby\'s aws-sdk-s3', 'ruby-aws-sdk-s3') }, async t => {
    const { stdout } = await run('ruby', [path.join(programs, 'aws-sdk-s3.rb'), endpoint, 'clients', path.join(work, 'ruby.bin')], { env, maxBuffer: 1 << 24 })
    t.match(stdout, /^get: hello ruby text\/plain \{"from"=>"ruby"\}$/m)
    t.match(stdout, /^big etag: "[0-9a-f]{32}-3" size 13631488$/m, 'three parts')
    t.match(stdout, /^big same: true$/m)
    t.match(stdout, /^part 2: 5242880 3 bytes 5242880-10485759\/13631488$/m, 'GetObject with part_number')
    t.match(stdout, /^left: 0$/m)
  })

  const perl = await succeeds('perl', ['-MNet::Amazon::S3', '-e', '1'])
  if (perl) t.comment(`Net::Amazon::S3 (Perl): ${await firstLine('perl', ['-MNet::Amazon::S3', '-e', 'print "$Net::Amazon::S3::VERSION, perl $^V"'])}`)
  t.test('Perl Net::Amazon::S3: add_key, get_key, add_key_filename, head_key, list_all, delete_key, buckets', { skip: missing(perl, 'Net::Amazon::S3', 'libnet-amazon-s3-perl') }, async t => {
    const file = path.join(work, 'perl.bin')
    const bytes = randomBytes(7_000_000)
    await writeFile(file, bytes)
    const { stdout } = await run('perl', [path.join(programs, 'net-amazon-s3.pl'), host, 'clients', file], { env, maxBuffer: 1 << 24 })
    t.match(stdout, /^get: hello perl text\/plain$/m)
    t.match(stdout, new RegExp(`^big etag: ${createHash('md5').update(bytes).digest('hex')} size 7000000$`, 'm'))
    t.match(stdout, /^listed: perl\/big\.bin:7000000 perl\/small\.txt:10$/m)
    t.match(stdout, /^left: 0$/m)
    t.match(stdout, /^buckets: clients$/m)
  })
})
