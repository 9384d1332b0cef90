/**
 * Answer headers kept by object version, for a door's whole reads: a
 * version's key, metadata, checksums and size never change (a change of any
 * is a new version), so the headers describing it are made once and copied
 * for each answer, to which the door adds what depends on the request. A
 * few hundred bytes each; past `max` versions the oldest goes first.
 */
import type { BucketObject } from '../bucket/index.js'

interface Kept { key: string, etag: string, headers: Readonly<Record<string, string>> }

export class VersionHeaders {
  readonly #kept = new Map<string, Kept>()
  readonly #max: number

  constructor (max = 1000) {
    this.#max = max
  }

  /** A copy of the headers kept for `object`'s version, or undefined. */
  copy (object: BucketObject): Record<string, string> | undefined {
    const kept = this.#kept.get(object.version)
    return kept !== undefined && kept.key === object.key && kept.etag === object.etag ? Object.assign({}, kept.headers) : undefined
  }

  /** Keeps a copy of `headers` for `object`'s version. */
  keep (object: BucketObject, headers: Record<string, string>): void {
    if (this.#kept.size >= this.#max) this.#kept.delete(this.#kept.keys().next().value as string)
    this.#kept.set(object.version, { key: object.key, etag: object.etag, headers: Object.freeze(Object.assign({}, headers)) })
  }
}
