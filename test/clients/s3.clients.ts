/**
 * `npm run test:clients`: the S3 API driven by the real command-line clients
 * from Debian's packages (awscli, rclone, s3cmd) and boto3
 * (python3-boto3), each against a server on 127.0.0.1 over a fresh data
 * directory, with the real 5 MiB smallest part. A client that is not
 * installed is skipped with a note naming its package and
 * `scripts/install-clients.sh` (which installs all four); the version of each
 * client found is printed. Not part of `npm test`: it needs those packages
 * and moves tens of MiB.
 */
import t, { type Test } from 'tap'
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { cp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { openRegistry } from '../../src/index.js'
import { buildS3App, DEVELOPMENT_CREDENTIAL, s3AccessPolicy } from '../../src/s3/index.js'
import { hasOpenssl, selfSignedCertificate } from '../certificate.js'
import { testdir } from '../testdir.js'

const run = promisify(execFile)
const { accessKeyId, secretAccessKey } = DEVELOPMENT_CREDENTIAL

async function installed (command: string): Promise<boolean> {
  try {
    await run('sh', ['-c', `command -v ${command}`])
    return true
  } catch {
    return false
  }
}

/** Why a client's test is skipped, or false when it is installed. */
function missing (found: boolean, what: string, pkg: string): string | false {
  return found ? false : `${what} is not installed: run scripts/install-clients.sh (or apt-get install ${pkg})`
}

/** The first line a version command prints, or why there is none. */
async function versionOf (command: string, args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(command, args)
    return (stdout.trim() === '' ? stderr : stdout).trim().split('\n')[0]
  } catch (err) {
    return `unknown (${(err as Error).message.split('\n')[0]})`
  }
}

function sha256 (data: Buffer): string {
  return createHash('sha256').update(data).digest('hex')
}

t.test('real S3 clients', async t => {
  const root = testdir(t)
  const dataDir = path.join(root, 'data')
  const work = path.join(root, 'work')
  await mkdir(work, { recursive: true })
  const registry = await openRegistry(dataDir, { fsync: false })
  await registry.create('clients')
  const app = await buildS3App({ registry, policy: s3AccessPolicy({ accessKeyId, secretAccessKey }, null, true), domains: [], logLevel: false })
  await app.listen({ host: '127.0.0.1', port: 0 })
  t.teardown(async () => { await app.close(); await registry.close() })
  const endpoint = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
  const bucket = (await registry.open('clients'))!

  // 21 MiB: multipart for every client (awscli 8 MiB parts, boto3 and rclone 5 MiB ones).
  const big = randomBytes(21 * 1024 * 1024)
  const bigFile = path.join(work, 'big.bin')
  await writeFile(bigFile, big)
  const tree = path.join(work, 'tree')
  await mkdir(path.join(tree, 'sub dir'), { recursive: true })
  await writeFile(path.join(tree, 'a.txt'), 'alpha\n')
  await writeFile(path.join(tree, 'sub dir', 'b+c.txt'), 'beta gamma\n')
  await writeFile(path.join(tree, 'big.bin'), big)

  // The server speaks plain HTTP; a CA bundle from the environment only trips rclone's AWS SDK.
  const { AWS_CA_BUNDLE: _caBundle, ...inherited } = process.env
  const env = { ...inherited, HOME: work, AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey, AWS_DEFAULT_REGION: 'us-east-1', AWS_CONFIG_FILE: path.join(work, 'none'), AWS_SHARED_CREDENTIALS_FILE: path.join(work, 'none') }
  const storedSha = async (key: string): Promise<string | null> => {
    const object = await bucket.get(key)
    return object === null || !('body' in object) ? null : sha256(Buffer.from(await object.arrayBuffer()))
  }

  if (await installed('aws')) t.comment(`awscli: ${await versionOf('aws', ['--version'])}`)
  if (await installed('rclone')) t.comment(`rclone: ${await versionOf('rclone', ['version'])}`)
  if (await installed('s3cmd')) t.comment(`s3cmd: ${await versionOf('s3cmd', ['--version'])}`)

  t.test('awscli: s3 cp, ls, sync', { skip: missing(await installed('aws'), 'awscli', 'awscli') }, async t => {
    const aws = async (...args: string[]): Promise<string> => (await run('aws', ['--endpoint-url', endpoint, ...args], { env, maxBuffer: 1 << 24 })).stdout
    await aws('s3', 'cp', bigFile, 's3://clients/aws/big.bin')
    t.equal(await storedSha('aws/big.bin'), sha256(big), 'multipart upload stored the bytes')
    t.match((await bucket.head('aws/big.bin'))?.etag, /-3$/, 'three parts of 8 MiB')
    await aws('s3', 'cp', 's3://clients/aws/big.bin', path.join(work, 'aws-back.bin'))
    t.equal(sha256(await readFile(path.join(work, 'aws-back.bin'))), sha256(big), 'downloaded the same bytes')
    await aws('s3', 'sync', tree, 's3://clients/aws/tree/')
    const listing = await aws('s3', 'ls', '--recursive', 's3://clients/aws/tree/')
    t.match(listing, /aws\/tree\/a\.txt/)
    t.match(listing, /aws\/tree\/sub dir\/b\+c\.txt/)
    const again = await aws('s3', 'sync', tree, 's3://clients/aws/tree/')
    t.equal(again.trim(), '', 'a second sync has nothing to do')
  })

  const rcloneEnv = {
    ...env,
    RCLONE_CONFIG: path.join(work, 'rclone.conf'),
    RCLONE_CONFIG_FSB_TYPE: 's3',
    RCLONE_CONFIG_FSB_PROVIDER: 'Other',
    RCLONE_CONFIG_FSB_ACCESS_KEY_ID: accessKeyId,
    RCLONE_CONFIG_FSB_SECRET_ACCESS_KEY: secretAccessKey,
    RCLONE_CONFIG_FSB_ENDPOINT: endpoint,
    RCLONE_CONFIG_FSB_REGION: 'us-east-1',
    RCLONE_CONFIG_FSB_FORCE_PATH_STYLE: 'true'
  }
  await writeFile(rcloneEnv.RCLONE_CONFIG, '')
  const rclone = async (...args: string[]): Promise<{ stdout: string, stderr: string }> => await run('rclone', args, { env: rcloneEnv, maxBuffer: 1 << 24 })
  const host = endpoint.replace('http://', '')
  /** An s3cmd configuration file in `work` (`settings` beside the keys, plain HTTP, V4 and 5 MiB parts), returning its path. */
  const s3cmdConfigFile = async (name: string, settings: string[]): Promise<string> => {
    const file = path.join(work, name)
    await writeFile(file, [
      '[default]', `access_key = ${accessKeyId}`, `secret_key = ${secretAccessKey}`, ...settings,
      'use_https = False', 'signature_v2 = False', 'bucket_location = us-east-1', 'multipart_chunk_size_mb = 5', 'multipart_copy_chunk_size_mb = 5', ''
    ].join('\n'))
    return file
  }
  const s3cmdConfig = await s3cmdConfigFile('s3cfg', [`host_base = ${host}`, `host_bucket = ${host}`])
  const s3cmd = async (...args: string[]): Promise<string> => (await run('s3cmd', ['-c', s3cmdConfig, ...args], { env, maxBuffer: 1 << 24 })).stdout

  // Names users' files have: spaces, non-ASCII, +, %, URL punctuation, a deep path, an empty file; and a multipart one.
  const keys = path.join(work, 'keys')
  const deep = `${Array.from({ length: 30 }, (_, i) => `d${i + 1}`).join('/')}/leaf.txt`
  const names = ['with space.txt', 'Zürich ☃ 日本.txt', 'a+b.txt', '100%.txt', 'a%20b.txt', 'dir with space/sub+plus/f&=?#.txt', deep, 'empty.txt', 'big.bin']
  for (const name of names) {
    await mkdir(path.dirname(path.join(keys, name)), { recursive: true })
    await writeFile(path.join(keys, name), name === 'big.bin' ? big : name === 'empty.txt' ? '' : `${name}\n`)
  }
  const sameAsLocal = async (t: Test, dir: string, prefix: string, list: string[]): Promise<void> => {
    for (const name of list) t.equal(await storedSha(`${prefix}${name}`), sha256(await readFile(path.join(dir, name))), name)
  }

  t.test('rclone: copy and check', { skip: missing(await installed('rclone'), 'rclone', 'rclone') }, async t => {
    await run('rclone', ['copy', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', tree, 'fsb:clients/rclone'], { env: rcloneEnv })
    t.equal(await storedSha('rclone/big.bin'), sha256(big))
    const checked = await run('rclone', ['check', tree, 'fsb:clients/rclone'], { env: rcloneEnv })
    t.match(checked.stderr, /0 differences found/)
  })

  t.test('s3cmd: put, get, ls', { skip: missing(await installed('s3cmd'), 's3cmd', 's3cmd') }, async t => {
    await s3cmd('put', bigFile, 's3://clients/s3cmd/big.bin')
    t.equal(await storedSha('s3cmd/big.bin'), sha256(big))
    await s3cmd('put', path.join(tree, 'a.txt'), 's3://clients/s3cmd/a.txt')
    await s3cmd('get', '--force', 's3://clients/s3cmd/big.bin', path.join(work, 's3cmd-back.bin'))
    t.equal(sha256(await readFile(path.join(work, 's3cmd-back.bin'))), sha256(big))
    const listing = await s3cmd('ls', 's3://clients/s3cmd/')
    t.match(listing, /s3:\/\/clients\/s3cmd\/a\.txt/)
    t.match(listing, /s3:\/\/clients\/s3cmd\/big\.bin/)
  })

  t.test('rclone: sync both ways with deletes, server-side copyto (UploadPartCopy) and moveto, check --checksum, --metadata, link', { skip: missing(await installed('rclone'), 'rclone', 'rclone') }, async t => {
    const up = path.join(work, 'rclone-up')
    await cp(keys, up, { recursive: true })
    await rclone('sync', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', up, 'fsb:clients/rsync')
    await sameAsLocal(t, up, 'rsync/', names)
    t.match((await rclone('check', '--checksum', up, 'fsb:clients/rsync')).stderr, /0 differences found/, 'MD5s agree, the multipart one\'s by rclone\'s own metadata')
    await rm(path.join(up, 'a+b.txt'))
    await writeFile(path.join(up, 'new one.txt'), 'new\n')
    await rclone('sync', up, 'fsb:clients/rsync')
    t.equal(await bucket.head('rsync/a+b.txt'), null, 'deleted on the server by the sync')
    t.not(await bucket.head('rsync/new one.txt'), null)
    await bucket.put('rsync/remote only+.txt', 'remote\n')
    const down = path.join(work, 'rclone-down')
    await rclone('sync', 'fsb:clients/rsync', down)
    t.same((await readdir(down)).sort(), (await readdir(up)).concat('remote only+.txt').sort(), 'downloaded, and nothing else there')
    t.match((await rclone('check', '--checksum', down, 'fsb:clients/rsync')).stderr, /0 differences found/)

    await rclone('copyto', '--s3-copy-cutoff', '5M', 'fsb:clients/rsync/big.bin', 'fsb:clients/rcopy/big copy+ü.bin')
    t.equal(await storedSha('rcopy/big copy+ü.bin'), sha256(big), 'copied in 5 MiB parts on the server')
    await rclone('moveto', 'fsb:clients/rcopy/big copy+ü.bin', 'fsb:clients/rcopy/moved 100%.bin')
    t.equal(await bucket.head('rcopy/big copy+ü.bin'), null, 'moved away')
    t.equal(await storedSha('rcopy/moved 100%.bin'), sha256(big))

    await rclone('copyto', '--metadata', '--metadata-set', 'color=blue', '--metadata-set', 'content-type=text/x-note', path.join(up, 'new one.txt'), 'fsb:clients/rmeta/new.txt')
    const meta = await bucket.head('rmeta/new.txt')
    t.equal(meta?.customMetadata?.color, 'blue')
    t.equal((meta?.httpMetadata as { contentType?: string } | undefined)?.contentType, 'text/x-note')

    for (const name of ['Zürich ☃ 日本.txt', 'dir with space/sub+plus/f&=?#.txt', 'empty.txt']) {
      const link = (await rclone('link', '--expire', '1h', `fsb:clients/rsync/${name}`)).stdout.trim()
      t.match(link, /X-Amz-Algorithm=AWS4-HMAC-SHA256/)
      const answer = await fetch(link)
      t.equal(answer.status, 200, `rclone link of ${name}`)
      t.equal(await answer.text(), await readFile(path.join(up, name), 'utf8'))
    }
  })

  t.test('rclone: a remote without keys on a development server sends unsigned requests, with + for the spaces of a listing\'s prefix', { skip: missing(await installed('rclone'), 'rclone', 'rclone') }, async t => {
    const development = await buildS3App({ registry, policy: s3AccessPolicy(null, null, true), domains: [], logLevel: false })
    await development.listen({ host: '127.0.0.1', port: 0 })
    t.teardown(async () => { await development.close() })
    const anonymous = { ...rcloneEnv, RCLONE_CONFIG_ANON_TYPE: 's3', RCLONE_CONFIG_ANON_PROVIDER: 'Other', RCLONE_CONFIG_ANON_ENDPOINT: `http://127.0.0.1:${(development.server.address() as AddressInfo).port}`, RCLONE_CONFIG_ANON_FORCE_PATH_STYLE: 'true' }
    const small = names.filter(name => name !== 'big.bin')
    await run('rclone', ['sync', '--exclude', 'big.bin', keys, 'anon:clients/anon'], { env: anonymous })
    await sameAsLocal(t, keys, 'anon/', small)
    const checked = await run('rclone', ['check', '--checksum', '--exclude', 'big.bin', keys, 'anon:clients/anon'], { env: anonymous })
    t.match(checked.stderr, /0 differences found/, 'the directory with spaces is listed')
    const listed = (await run('rclone', ['lsf', 'anon:clients/anon/dir with space/sub+plus'], { env: anonymous })).stdout
    t.equal(listed.trim(), 'f&=?#.txt')
  })

  t.test('rclone over HTTPS with SSE-C: multipart upload, download, check --download, server-side copy with the key; the wrong key or none refused', { skip: missing(await installed('rclone') && hasOpenssl, 'rclone and openssl', 'rclone openssl') }, async t => {
    // A customer key travels only over TLS: a self-signed certificate that rclone is told to trust.
    const { cert, key } = selfSignedCertificate(work, 'fsbucket-clients')
    const secure = await buildS3App({ registry, policy: s3AccessPolicy({ accessKeyId, secretAccessKey }, null, true), domains: [], logLevel: false, https: { cert: await readFile(cert), key: await readFile(key) } })
    await secure.listen({ host: '127.0.0.1', port: 0 })
    t.teardown(async () => { await secure.close() })
    const secureEnv = { ...rcloneEnv, RCLONE_CONFIG_FSB_ENDPOINT: `https://127.0.0.1:${(secure.server.address() as AddressInfo).port}` }
    const sse = (customerKey: string): string[] => ['--ca-cert', cert, '--s3-sse-customer-algorithm', 'AES256', '--s3-sse-customer-key', customerKey]
    const rightKey = sse('0123456789abcdef0123456789ABCDEF')
    const ssec = async (...args: string[]): Promise<{ stdout: string, stderr: string }> => await run('rclone', args, { env: secureEnv, maxBuffer: 1 << 26 })

    await ssec('copy', ...rightKey, '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', tree, 'fsb:clients/ssec')
    const head = await bucket.head('ssec/big.bin')
    t.match(head?.etag, /-5$/, 'five parts of 5 MiB')
    t.ok(head?.ssecKeyMd5, 'stored under the customer key')
    await ssec('copyto', ...rightKey, 'fsb:clients/ssec/big.bin', path.join(work, 'ssec-back.bin'))
    t.equal(sha256(await readFile(path.join(work, 'ssec-back.bin'))), sha256(big), 'downloaded with the key: the same bytes')
    t.match((await ssec('check', ...rightKey, '--download', tree, 'fsb:clients/ssec')).stderr, /0 differences found/)
    const ranged = await run('rclone', ['cat', ...rightKey, '--offset', String(5 * 1024 * 1024 - 3), '--count', '6', 'fsb:clients/ssec/big.bin'], { env: secureEnv, encoding: 'buffer' })
    t.equal(ranged.stdout.toString('hex'), big.subarray(5 * 1024 * 1024 - 3, 5 * 1024 * 1024 + 3).toString('hex'), 'a range across a part boundary')

    await ssec('copyto', ...rightKey, '--s3-copy-cutoff', '5M', 'fsb:clients/ssec/big.bin', 'fsb:clients/ssec-copy/big copy.bin')
    await ssec('copyto', ...rightKey, 'fsb:clients/ssec-copy/big copy.bin', path.join(work, 'ssec-copy.bin'))
    t.equal(sha256(await readFile(path.join(work, 'ssec-copy.bin'))), sha256(big), 'copied in parts on the server, under the same key')

    // rclone takes a failed HEAD of a file's path for "not a file": the directory form shows the server's refusal.
    const refused = async (args: string[]): Promise<string> => {
      try {
        await ssec('cat', ...args, '--include', 'a.txt', 'fsb:clients/ssec')
        return 'read'
      } catch (err) {
        return (err as { stderr: string }).stderr
      }
    }
    t.match(await refused(sse('ffffffffffffffffffffffffffffffff')), /403/, 'another key: 403, no bytes')
    t.match(await refused(['--ca-cert', cert]), /400/, 'no key: 400, no bytes')
  })

  t.test('s3cmd: sync both ways with --delete-removed, cp and mv (multipart copies), --add-header, du', { skip: missing(await installed('s3cmd'), 's3cmd', 's3cmd') }, async t => {
    const up = path.join(work, 's3cmd-up')
    await cp(keys, up, { recursive: true })
    await s3cmd('sync', `${up}/`, 's3://clients/ssync/')
    await sameAsLocal(t, up, 'ssync/', names)
    t.notMatch(await s3cmd('sync', `${up}/`, 's3://clients/ssync/'), /upload:/, 'a second sync uploads nothing')
    await rm(path.join(up, 'a+b.txt'))
    await s3cmd('sync', '--delete-removed', `${up}/`, 's3://clients/ssync/')
    t.equal(await bucket.head('ssync/a+b.txt'), null, 'deleted on the server by the sync')
    await bucket.put('ssync/remote only+.txt', 'remote\n')
    const down = path.join(work, 's3cmd-down')
    await mkdir(down)
    await writeFile(path.join(down, 'stale.txt'), 'stale')
    await s3cmd('sync', '--delete-removed', 's3://clients/ssync/', `${down}/`)
    t.same((await readdir(down)).sort(), (await readdir(up)).concat('remote only+.txt').sort(), 'downloaded, and the stale file deleted')
    t.equal(sha256(await readFile(path.join(down, 'big.bin'))), sha256(big))
    t.match(await s3cmd('du', 's3://clients/ssync/'), new RegExp(`${names.length} objects`))

    await s3cmd('cp', 's3://clients/ssync/big.bin', 's3://clients/scopy/big copy+ü.bin')
    t.equal(await storedSha('scopy/big copy+ü.bin'), sha256(big), 'copied in 5 MiB parts on the server')
    await s3cmd('mv', 's3://clients/ssync/Zürich ☃ 日本.txt', 's3://clients/scopy/moved 100%.txt')
    t.equal(await bucket.head('ssync/Zürich ☃ 日本.txt'), null, 'moved away')
    t.equal(await storedSha('scopy/moved 100%.txt'), sha256(Buffer.from('Zürich ☃ 日本.txt\n')))

    await s3cmd('put', '--add-header=x-amz-meta-color: red', '--add-header=Cache-Control: max-age=60', '--mime-type=text/x-note', path.join(up, 'with space.txt'), 's3://clients/smeta/a.txt')
    const meta = await bucket.head('smeta/a.txt')
    t.equal(meta?.customMetadata?.color, 'red')
    t.match(meta?.httpMetadata, { cacheControl: 'max-age=60', contentType: 'text/x-note' })
    await s3cmd('modify', '--add-header=x-amz-meta-shape: round', '--remove-header=x-amz-meta-color', 's3://clients/smeta/a.txt')
    const modified = await bucket.head('smeta/a.txt')
    t.equal(modified?.customMetadata?.shape, 'round', 'modify: a copy onto itself with the new metadata')
    t.equal(modified?.customMetadata?.color, undefined)
  })

  t.test('s3cmd with virtual-host addressing (Host: clients.localhost), sent through its proxy setting so that no name must resolve: put (multipart), get, ls, sync, cp, mv, del', { skip: missing(await installed('s3cmd'), 's3cmd', 's3cmd') }, async t => {
    // glibc resolves no `<bucket>.localhost`: s3cmd is told the server is its proxy, and sends it absolute-form targets with the bucket's Host.
    const port = host.split(':')[1]
    const vhostConfig = await s3cmdConfigFile('s3cfg-vhost', [`host_base = localhost:${port}`, `host_bucket = %(bucket)s.localhost:${port}`, 'proxy_host = 127.0.0.1', `proxy_port = ${port}`])
    const vhost = async (...args: string[]): Promise<string> => (await run('s3cmd', ['-c', vhostConfig, ...args], { env, maxBuffer: 1 << 24 })).stdout
    t.match((await run('s3cmd', ['-c', vhostConfig, '-d', 'ls', 's3://clients/'], { env, maxBuffer: 1 << 24 })).stderr, /host:clients\.localhost:/, 'the bucket travels in the Host')

    await vhost('put', bigFile, 's3://clients/vhost/big 21+ü.bin')
    t.match((await bucket.head('vhost/big 21+ü.bin'))?.etag, /-5$/, 'five parts of 5 MiB')
    t.equal(await storedSha('vhost/big 21+ü.bin'), sha256(big))
    await vhost('get', '--force', 's3://clients/vhost/big 21+ü.bin', path.join(work, 'vhost-back.bin'))
    t.equal(sha256(await readFile(path.join(work, 'vhost-back.bin'))), sha256(big), 'downloaded the same bytes')

    const up = path.join(work, 'vhost-up')
    await cp(keys, up, { recursive: true })
    await vhost('sync', `${up}/`, 's3://clients/vsync/')
    await sameAsLocal(t, up, 'vsync/', names)
    t.match(await vhost('ls', 's3://clients/vsync/dir with space/sub+plus/'), /vsync\/dir with space\/sub\+plus\/f&=\?#\.txt/)
    const down = path.join(work, 'vhost-down')
    await mkdir(down)
    await vhost('sync', 's3://clients/vsync/', `${down}/`)
    t.same((await readdir(down)).sort(), (await readdir(up)).sort(), 'synced back')

    await vhost('cp', 's3://clients/vsync/big.bin', 's3://clients/vcopy/big copy.bin')
    t.equal(await storedSha('vcopy/big copy.bin'), sha256(big), 'copied in 5 MiB parts on the server')
    await vhost('mv', 's3://clients/vsync/Zürich ☃ 日本.txt', 's3://clients/vcopy/moved.txt')
    t.equal(await bucket.head('vsync/Zürich ☃ 日本.txt'), null, 'moved away')
    await vhost('del', 's3://clients/vcopy/moved.txt')
    t.equal(await bucket.head('vcopy/moved.txt'), null, 'deleted')
  })

  t.test('s3cmd: Signature Version 2 is refused with the message s3cmd knows, so --signature-v2 falls back to V4; a signurl URL (V2) is refused clearly', { skip: missing(await installed('s3cmd'), 's3cmd', 's3cmd') }, async t => {
    await s3cmd('--signature-v2', 'put', path.join(keys, 'a+b.txt'), 's3://clients/sv2/a+b.txt')
    t.equal(await storedSha('sv2/a+b.txt'), sha256(Buffer.from('a+b.txt\n')), 'stored after the fallback')
    const url = (await s3cmd('signurl', 's3://clients/sv2/a+b.txt', '+600')).trim()
    t.match(url, /AWSAccessKeyId=.*Signature=/, 's3cmd 2.3 signs URLs with V2 only')
    const answer = await fetch(url)
    t.equal(answer.status, 400)
    t.match(await answer.text(), '<Code>InvalidRequest</Code><Message>The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.</Message>')
  })

  let boto3 = true
  try {
    await run('python3', ['-c', 'import boto3'])
  } catch {
    boto3 = false
  }
  if (boto3) t.comment(`boto3: ${await versionOf('python3', ['-c', 'import boto3, sys; print(boto3.__version__, sys.executable)'])}`)
  t.test('boto3: upload_fileobj and download_fileobj with multipart', { skip: missing(boto3, 'boto3 (for python3)', 'python3-boto3') }, async t => {
    const script = `
import boto3, hashlib, io, sys
from boto3.s3.transfer import TransferConfig
s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1', aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
config = TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024)
with open(sys.argv[4], 'rb') as f:
    s3.upload_fileobj(f, 'clients', 'boto3/big.bin', Config=config)
out = io.BytesIO()
s3.download_fileobj('clients', 'boto3/big.bin', out, Config=config)
print(hashlib.sha256(out.getvalue()).hexdigest())
print(s3.head_object(Bucket='clients', Key='boto3/big.bin')['ETag'])
`
    const { stdout } = await run('python3', ['-c', script, endpoint, accessKeyId, secretAccessKey, bigFile], { env })
    const [digest, etag] = stdout.trim().split('\n')
    t.equal(digest, sha256(big), 'downloaded the same bytes')
    t.match(etag, /-5"$/, 'five parts of 5 MiB')
    t.equal(await storedSha('boto3/big.bin'), sha256(big))
  })
  t.test('boto3: non-ASCII metadata as RFC 2047 (botocore sends ASCII only), stored decoded, answered encoded', { skip: missing(boto3, 'boto3 (for python3)', 'python3-boto3') }, async t => {
    const script = `
import boto3, sys
from email.header import decode_header
s3 = boto3.client('s3', endpoint_url=sys.argv[1], region_name='us-east-1', aws_access_key_id=sys.argv[2], aws_secret_access_key=sys.argv[3])
s3.put_object(Bucket='clients', Key='boto3/meta', Body=b'x', Metadata={'city': '=?UTF-8?Q?Z=C3=BCrich_=E2=98=83?='})
value = s3.head_object(Bucket='clients', Key='boto3/meta')['Metadata']['city']
print(value)
print(''.join(part.decode(charset) if isinstance(part, bytes) else part for part, charset in decode_header(value)))
`
    const { stdout } = await run('python3', ['-c', script, endpoint, accessKeyId, secretAccessKey], { env })
    const [answered, decoded] = stdout.trim().split('\n')
    t.equal(answered, `=?UTF-8?B?${Buffer.from('Zürich ☃').toString('base64')}?=`, 'answered as an encoded word')
    t.equal(decoded, 'Zürich ☃', 'which decodes to what was meant')
  })
})
