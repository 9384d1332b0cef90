/**
 * The local transport: the buckets of a data directory, through the engine's
 * public surface (the registry and the binding of src/bucket/index.ts), like
 * every other door. It is safe beside a running server: the store is
 * multi-process.
 *
 * A data directory that does not exist is an error for every command but
 * `mb` (the registry would otherwise create it, and a mistyped `--data`
 * would leave an empty directory behind).
 */
import type { Readable } from 'node:stream'
import { bodyStream, isBucketError, isValidBucketName, type Bucket, type BucketListedObject, type BucketRegistry } from '../bucket/index.js'
import { CliError, cliError, fromBucketError } from './errors.js'
import { requireDataDirectory } from './local-files.js'
import type { BucketSummary, ListedPage, ObjectTransport, PartUpload, RemoteObject, WriteMetadata } from './transport.js'

function remoteObject (object: BucketListedObject): RemoteObject {
  const { contentType, contentLanguage, contentDisposition, contentEncoding, cacheControl, cacheExpiry } = object.httpMetadata ?? {}
  const httpMetadata = Object.fromEntries(Object.entries({ contentType, contentLanguage, contentDisposition, contentEncoding, cacheControl, cacheExpiry })
    .filter(([, v]) => v !== undefined))
  return {
    key: object.key,
    size: object.size,
    etag: object.etag,
    uploaded: object.uploaded,
    storageClass: object.storageClass,
    httpMetadata,
    customMetadata: { ...object.customMetadata }
  }
}

/** Engine errors → CliErrors with the catalogue's code; anything else as it is. */
async function translated<T> (work: () => Promise<T>, bucket?: string): Promise<T> {
  try {
    return await work()
  } catch (err) {
    if (isBucketError(err)) throw fromBucketError(err, bucket)
    throw err
  }
}

export class LocalTransport implements ObjectTransport {
  readonly #dataDir: string
  readonly #openRegistry: (dataDir: string) => Promise<BucketRegistry>
  /** One registry per transport, however many commands ask for it at once (cp -r puts in parallel). */
  #registry: Promise<BucketRegistry> | null = null

  /** `openRegistry` comes from the composition root (the door never picks a store). */
  constructor (dataDir: string, openRegistry: (dataDir: string) => Promise<BucketRegistry>) {
    this.#dataDir = dataDir
    this.#openRegistry = openRegistry
  }

  async #open (create = false): Promise<BucketRegistry> {
    if (this.#registry === null) {
      const opening = this.#registry = (async () => {
        if (!create) await requireDataDirectory(this.#dataDir, ', or --endpoint for a server')
        return await this.#openRegistry(this.#dataDir)
      })()
      opening.catch(() => { if (this.#registry === opening) this.#registry = null })
    }
    return await this.#registry
  }

  async #bucket (name: string): Promise<{ bucket: Bucket, storageClass: 'Standard' | 'InfrequentAccess' }> {
    // The engine's refusal of the name, not "no such bucket" for a name no bucket can have.
    if (!isValidBucketName(name)) throw cliError('InvalidBucketName', name)
    const registry = await this.#open()
    const info = await registry.info(name)
    const bucket = info === null ? null : await registry.open(name, info)
    if (info === null || bucket === null) throw cliError('NoSuchBucket', name)
    return { bucket, storageClass: info.settings.storageClass }
  }

  async listBuckets (): Promise<BucketSummary[]> {
    const registry = await this.#open()
    return (await registry.list()).map(info => ({ name: info.name, creationDate: info.creationDate }))
  }

  async createBucket (name: string): Promise<void> {
    const registry = await this.#open(true)
    await translated(async () => await registry.create(name), name)
  }

  async deleteBucket (name: string): Promise<void> {
    const registry = await this.#open()
    await translated(async () => { await registry.delete(name) }, name)
  }

  async list (bucketName: string, options: { prefix?: string, delimiter?: string, cursor?: string }): Promise<ListedPage> {
    const { bucket } = await this.#bucket(bucketName)
    const page = await translated(async () => await bucket.list({
      prefix: options.prefix === '' ? undefined : options.prefix,
      delimiter: options.delimiter,
      cursor: options.cursor,
      include: ['httpMetadata', 'customMetadata']
    }))
    return {
      objects: page.objects.map(remoteObject),
      prefixes: page.delimitedPrefixes,
      cursor: page.truncated ? page.cursor : undefined
    }
  }

  async head (bucketName: string, key: string): Promise<RemoteObject | null> {
    const { bucket } = await this.#bucket(bucketName)
    const object = await translated(async () => await bucket.head(key))
    return object === null ? null : remoteObject(object)
  }

  async get (bucketName: string, key: string, range?: { offset: number, length: number }): Promise<{ size: number, body: Readable }> {
    const { bucket } = await this.#bucket(bucketName)
    const object = await translated(async () => await bucket.get(key, range === undefined ? {} : { range }))
    if (object === null || !('body' in object)) throw cliError('NoSuchKey')
    return { size: object.range?.length ?? object.size, body: bodyStream(object) }
  }

  async put (bucketName: string, key: string, body: Readable, _size: number | undefined, metadata: WriteMetadata): Promise<RemoteObject> {
    const { bucket, storageClass } = await this.#bucket(bucketName)
    const object = await translated(async () => await bucket.put(key, body, { ...metadata, storageClass }))
    if (object === null) throw new CliError('the store refused the write') // only a failed onlyIf returns null, and none is sent
    return remoteObject(object)
  }

  async createUpload (bucketName: string, key: string, metadata: WriteMetadata): Promise<PartUpload> {
    const { bucket, storageClass } = await this.#bucket(bucketName)
    const upload = await translated(async () => await bucket.createMultipartUpload(key, { ...metadata, storageClass }))
    return {
      uploadPart: async (partNumber, body) => await translated(async () => await upload.uploadPart(partNumber, body)),
      complete: async parts => remoteObject(await translated(async () => await upload.complete(parts))),
      abort: async () => { await translated(async () => { await upload.abort() }) }
    }
  }

  async delete (bucketName: string, keys: string[]): Promise<void> {
    const { bucket } = await this.#bucket(bucketName)
    await translated(async () => { await bucket.delete(keys) })
  }

  async close (): Promise<void> {
    const registry = this.#registry
    this.#registry = null
    await (await registry?.catch(() => null))?.close()
  }
}
