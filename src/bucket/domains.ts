/**
 * Custom domains: which bucket serves a Host, from every bucket's settings
 * (`domains`). The map is made from a pass over the buckets' settings and
 * kept while the storage's change token (which moves whenever a bucket
 * appears, goes, or has its settings changed) has not moved.
 */
import type { BucketInfos } from './bucket-infos.js'
import type { RegistryStorage } from './port.js'
import { hostName } from './settings.js'

export class DomainMap {
  readonly #storage: RegistryStorage
  readonly #infos: BucketInfos
  readonly #names: () => Promise<string[]>
  #kept: { token: string, map: Map<string, string> } | null = null

  constructor (storage: RegistryStorage, infos: BucketInfos, names: () => Promise<string[]>) {
    this.#storage = storage
    this.#infos = infos
    this.#names = names
  }

  /** The bucket whose settings name `host` among its domains, or null. */
  async bucketFor (host: string): Promise<string | null> {
    const token = await this.#storage.changeToken()
    if (token === null) return null
    let domains = this.#kept?.token === token ? this.#kept.map : null
    if (domains === null) {
      domains = new Map<string, string>()
      const damaged: string[] = []
      for (const info of await this.#infos.readable(await this.#names(), damaged)) {
        for (const domain of info.settings.domains) if (!domains.has(domain)) domains.set(domain, info.name)
      }
      // Kept only when every bucket was read: one mended by hand moves no token, and its domains must come back.
      this.#kept = damaged.length === 0 ? { token, map: domains } : null
    }
    return domains.get(hostName(host)) ?? null
  }

  /** `bucketFor` at once, when the storage's token is known without waiting and the map made for it is kept; undefined otherwise. */
  bucketForNow (host: string): string | null | undefined {
    const token = this.#storage.changeTokenNow?.()
    if (token === undefined) return undefined
    if (token === null) return null
    return this.#kept?.token === token ? this.#kept.map.get(hostName(host)) ?? null : undefined
  }
}
