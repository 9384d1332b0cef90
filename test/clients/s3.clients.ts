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
import t from 'tap'
import { execFile } from 'node:child_process'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { promisify } from 'node:util'
import { openRegistry } from '../../src/index.js'
import { buildS3App, DEVELOPMENT_CREDENTIAL, s3AccessPolicy } from '../../src/s3/index.js'
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

  t.test('rclone: copy and check', { skip: missing(await installed('rclone'), 'rclone', 'rclone') }, async t => {
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
    await run('rclone', ['copy', '--s3-upload-cutoff', '5M', '--s3-chunk-size', '5M', tree, 'fsb:clients/rclone'], { env: rcloneEnv })
    t.equal(await storedSha('rclone/big.bin'), sha256(big))
    const checked = await run('rclone', ['check', tree, 'fsb:clients/rclone'], { env: rcloneEnv })
    t.match(checked.stderr, /0 differences found/)
  })

  t.test('s3cmd: put, get, ls', { skip: missing(await installed('s3cmd'), 's3cmd', 's3cmd') }, async t => {
    const host = endpoint.replace('http://', '')
    const config = path.join(work, 's3cfg')
    await writeFile(config, [
      '[default]', `access_key = ${accessKeyId}`, `secret_key = ${secretAccessKey}`, `host_base = ${host}`, `host_bucket = ${host}`,
      'use_https = False', 'signature_v2 = False', 'bucket_location = us-east-1', 'multipart_chunk_size_mb = 5', ''
    ].join('\n'))
    const s3cmd = async (...args: string[]): Promise<string> => (await run('s3cmd', ['-c', config, ...args], { env, maxBuffer: 1 << 24 })).stdout
    await s3cmd('put', bigFile, 's3://clients/s3cmd/big.bin')
    t.equal(await storedSha('s3cmd/big.bin'), sha256(big))
    await s3cmd('put', path.join(tree, 'a.txt'), 's3://clients/s3cmd/a.txt')
    await s3cmd('get', '--force', 's3://clients/s3cmd/big.bin', path.join(work, 's3cmd-back.bin'))
    t.equal(sha256(await readFile(path.join(work, 's3cmd-back.bin'))), sha256(big))
    const listing = await s3cmd('ls', 's3://clients/s3cmd/')
    t.match(listing, /s3:\/\/clients\/s3cmd\/a\.txt/)
    t.match(listing, /s3:\/\/clients\/s3cmd\/big\.bin/)
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
