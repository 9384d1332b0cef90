/**
 * An S3 listener on 127.0.0.1 (port 0) over a fresh data directory, and an
 * AWS SDK client pointed at it. Bucket `photos` exists; multipart parts may
 * be as small as 5 bytes.
 */
import http from 'node:http'
import { createHash, createHmac } from 'node:crypto'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { S3Client, type S3ClientConfig, type S3ServiceException } from '@aws-sdk/client-s3'
import { SignatureV4 } from '@smithy/signature-v4'
import type { SourceData } from '@smithy/types'
import { openRegistry, type BucketRegistry } from '../../src/index.js'
import { buildS3App, DEVELOPMENT_CREDENTIAL, s3AccessPolicy, type S3AccessPolicy, type S3Connections } from '../../src/s3/index.js'
import type { S3AppConfig } from '../../src/s3/app.js'
import { testdir } from '../testdir.js'

export interface S3Server {
  app: FastifyInstance
  registry: BucketRegistry
  dataDir: string
  endpoint: string
  port: number
  client: (config?: Partial<S3ClientConfig>) => S3Client
}

export const devCredentials = { accessKeyId: DEVELOPMENT_CREDENTIAL.accessKeyId, secretAccessKey: DEVELOPMENT_CREDENTIAL.secretAccessKey }

export async function s3Server (t: Test, options: { policy?: S3AccessPolicy, domains?: string[], connections?: S3Connections, readsBeside?: S3AppConfig['readsBeside'], logger?: S3AppConfig['logger'], meter?: S3AppConfig['meter'], operator?: S3AppConfig['operator'] } = {}): Promise<S3Server> {
  const dataDir = testdir(t)
  const registry = await openRegistry(dataDir, { fsync: false, minPartSize: 5 })
  await registry.create('photos')
  const app = await buildS3App({
    registry,
    policy: options.policy ?? s3AccessPolicy(null, null, true),
    domains: options.domains ?? [],
    logLevel: false,
    ...(options.connections === undefined ? {} : { connections: options.connections }),
    ...(options.readsBeside === undefined ? {} : { readsBeside: options.readsBeside }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.meter === undefined ? {} : { meter: options.meter }),
    ...(options.operator === undefined ? {} : { operator: options.operator })
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const port = (app.server.address() as AddressInfo).port
  const endpoint = `http://127.0.0.1:${port}`
  const clients: S3Client[] = []
  t.teardown(async () => {
    for (const c of clients) c.destroy()
    await app.close()
    await registry.close()
  })
  const client = (config: Partial<S3ClientConfig> = {}): S3Client => {
    const c = new S3Client({ endpoint, region: 'auto', forcePathStyle: true, credentials: devCredentials, maxAttempts: 1, ...config })
    clients.push(c)
    return c
  }
  return { app, registry, dataDir, endpoint, port, client }
}

/** The S3 error a request fails with; throws when it succeeds. */
export async function rejection (promise: Promise<unknown>): Promise<S3ServiceException> {
  try {
    await promise
  } catch (err) {
    return err as S3ServiceException
  }
  throw new Error('expected a rejection')
}

export interface RawAnswer { status: number, headers: http.IncomingHttpHeaders, body: string }

/** One request over a socket of its own, headers as given (nothing signed or added); `body` may come in chunks. */
export async function raw (server: S3Server, method: string, path: string, headers: Record<string, string> = {}, body: string | Buffer | Array<string | Buffer> = []): Promise<RawAnswer> {
  return await new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: server.port, method, path, headers }, response => {
      const chunks: Buffer[] = []
      response.on('data', chunk => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks).toString() }))
    })
    request.on('error', reject)
    for (const chunk of Array.isArray(body) ? body : [body]) request.write(chunk)
    request.end()
  })
}

function bytes (data: SourceData): Buffer {
  return typeof data === 'string' ? Buffer.from(data) : ArrayBuffer.isView(data) ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : Buffer.from(data)
}

/** SHA-256 / HMAC for the smithy signer, over node:crypto. */
class Sha256 {
  readonly #hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>
  constructor (secret?: SourceData) {
    this.#hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret))
  }

  update (data: SourceData): void { this.#hash.update(bytes(data)) }
  async digest (): Promise<Uint8Array> { return this.#hash.digest() }
  reset (): void {}
}

/** The AWS SDK's own signer (@smithy/signature-v4) with the development pair, region `auto`. */
export function devSigner (): SignatureV4 {
  return new SignatureV4({ service: 's3', region: 'auto', credentials: devCredentials, sha256: Sha256, uriEscapePath: false })
}

/**
 * The path and query of a URL presigned by the SDK's signer for `server`:
 * `headers` as the signer takes them (its `x-amz-*` move into the query;
 * `X-Amz-Content-Sha256: UNSIGNED-PAYLOAD` unless given, as the S3
 * presigner adds it). `expiresIn` is written into the URL as given, so a
 * string that is not a plain number can be signed too.
 */
export async function presignedPath (server: S3Server, method: string, path: string, options: { headers?: Record<string, string>, expiresIn?: number | string, signingDate?: Date } = {}): Promise<string> {
  const headers = options.headers ?? { 'X-Amz-Content-Sha256': 'UNSIGNED-PAYLOAD' }
  const presigned = await devSigner().presign(
    { method, protocol: 'http:', hostname: '127.0.0.1', port: server.port, path, query: {}, headers: { host: `127.0.0.1:${server.port}`, ...headers } },
    { expiresIn: (options.expiresIn ?? 60) as number, signingDate: options.signingDate ?? new Date() })
  const query = Object.entries(presigned.query as Record<string, string>).map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
  return `${path}?${query}`
}
