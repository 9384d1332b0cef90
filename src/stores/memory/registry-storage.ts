/**
 * The registry's storage in this process's memory: bucket places, their
 * settings documents and the state documents (the management API's), all
 * gone when the process ends. It backs `fsbucket serve --memory` and
 * `startServer({ memory: true })`, where a test suite wants a server that
 * leaves nothing behind, and it runs the RegistryStorage conformance suite.
 *
 * What "every process" means for the other storages means "every handle"
 * here: `another()` opens a second handle on the same buckets, and handles
 * share places, documents, locks and the stores of buckets. No other
 * process can share them (hence one process only: no `--workers`).
 *
 * Documents are kept as JSON text, so a reader gets its own copy and never
 * sees a later change made to an object it was handed. Settings versions
 * and the change token are counters that move with every write.
 */
import { BucketError, bucketRetired, parseSettingsDocument, type BucketStore, type DocumentTransaction, type RegistryStorage, type SettingsDocument, type StateDocuments } from '../../bucket/port.js'
import { DocumentChanges } from '../document-changes.js'
import { MemoryStore } from './store.js'

/** Runs critical sections one at a time, in the order they asked; a throwing one releases the next. */
class Lock {
  #tail: Promise<unknown> = Promise.resolve()

  async run<T> (critical: () => Promise<T>): Promise<T> {
    const turn = this.#tail.then(async () => await critical())
    this.#tail = turn.catch(() => {})
    return await turn
  }
}

/** One change of a set of documents: what it loaded and changed is written back at commit, whole. */
class MemoryTransaction implements DocumentTransaction {
  readonly #documents: Map<string, string>
  readonly #changes = new DocumentChanges()

  constructor (documents: Map<string, string>) {
    this.#documents = documents
  }

  async load<T> (name: string, fallback: T): Promise<T> {
    return await this.#changes.load(name, fallback, async () => {
      const text = this.#documents.get(name)
      return text === undefined ? undefined : JSON.parse(text) as T
    })
  }

  remove (name: string): void {
    this.#changes.remove(name)
  }

  commit (): void {
    for (const [name, value] of this.#changes.changed()) this.#documents.set(name, JSON.stringify(value))
    for (const name of this.#changes.removed()) this.#documents.delete(name)
  }
}

class MemoryDocuments implements StateDocuments {
  readonly #area: string
  readonly #documents = new Map<string, string>()
  readonly #lock = new Lock()
  /** Moves with every change of the set: a document's version is coarser than it need be (any change reads it again), never finer. */
  #changes = 0

  constructor (area: string) {
    this.#area = area
  }

  async read<T> (name: string, fallback: T): Promise<T> {
    const text = this.#documents.get(name)
    return text === undefined ? fallback : JSON.parse(text) as T
  }

  async version (name: string): Promise<string | null> {
    return this.#documents.has(name) ? String(this.#changes) : null
  }

  where (name: string): string {
    return `the document ${name} of state area ${this.#area}`
  }

  async transaction<R> (change: (tx: DocumentTransaction) => Promise<R>): Promise<R> {
    return await this.#lock.run(async () => {
      const tx = new MemoryTransaction(this.#documents)
      const result = await change(tx)
      tx.commit()
      this.#changes++
      return result
    })
  }
}

interface Place {
  store: MemoryStore
  settings: { text: string, version: number } | null
  lock: Lock
}

/** What the handles on one set of buckets share. */
class Space {
  readonly places = new Map<string, Place>()
  readonly areas = new Map<string, MemoryDocuments>()
  /** Moves with every settings write, so a version is never taken twice. */
  versions = 0
  /** Moves when a place comes or goes, and on touch. */
  changes = 0
}

export class MemoryRegistryStorage implements RegistryStorage {
  /** Not a path: nothing is kept on disk. */
  readonly location = ':memory:'
  #space: Space

  /** New, empty storage; `another()` opens more handles on it. */
  constructor () {
    this.#space = new Space()
  }

  /** A second handle on the same buckets, as a second gateway in this process would hold. */
  another (): MemoryRegistryStorage {
    const handle = new MemoryRegistryStorage()
    handle.#space = this.#space
    return handle
  }

  async names (): Promise<string[]> {
    return [...this.#space.places.keys()]
  }

  placeExists (name: string): boolean {
    return this.#space.places.has(name)
  }

  settingsVersionNow (name: string): string | null {
    return this.settingsVersion(name)
  }

  settingsVersion (name: string): string | null {
    const settings = this.#space.places.get(name)?.settings
    return settings == null ? null : String(settings.version)
  }

  async readSettings (name: string): Promise<SettingsDocument | null> {
    const settings = this.#space.places.get(name)?.settings
    return settings == null ? null : parseSettingsDocument(settings.text, `the settings of bucket ${name}`)
  }

  #place (name: string): Place {
    const place = this.#space.places.get(name)
    if (place === undefined) throw new BucketError('NoSuchBucket', 'settings')
    return place
  }

  async writeSettings (name: string, document: SettingsDocument): Promise<void> {
    this.#place(name).settings = { text: JSON.stringify(document), version: ++this.#space.versions }
  }

  async withSettingsLock<T> (name: string, critical: () => Promise<T>): Promise<T> {
    return await this.#place(name).lock.run(critical)
  }

  async createPlace (name: string): Promise<boolean> {
    if (this.#space.places.has(name)) return false
    this.#space.places.set(name, { store: new MemoryStore(), settings: null, lock: new Lock() })
    this.#space.changes++
    return true
  }

  async removePlace (name: string): Promise<boolean> {
    if (!this.#space.places.delete(name)) return false
    this.#space.changes++
    return true
  }

  changeTokenNow (): string | null {
    return this.changeToken()
  }

  changeToken (): string {
    return String(this.#space.changes)
  }

  async touch (): Promise<void> {
    this.#space.changes++
  }

  /** The place's one store, shared by every handle (closing it releases nothing: there is nothing to release). */
  async openStore (name: string): Promise<BucketStore> {
    const place = this.#space.places.get(name)
    if (place === undefined) throw bucketRetired('open')
    return place.store
  }

  state (area: string): StateDocuments {
    if (!/^[a-z]+$/.test(area)) throw new TypeError(`state: the area must be lowercase letters (got ${JSON.stringify(area)}).`)
    let documents = this.#space.areas.get(area)
    if (documents === undefined) {
      documents = new MemoryDocuments(area)
      this.#space.areas.set(area, documents)
    }
    return documents
  }
}
