/**
 * Uploads, one progress bar per file. A file up to `multipartThreshold` is
 * one PUT; a bigger one is a multipart upload through the gateway's
 * `?action=mpu-*` routes, `parallelParts` parts in flight at once, parts of
 * one size (the last may be smaller) as the binding requires. Progress comes
 * from XMLHttpRequest's upload events (fetch reports none). A failed or
 * cancelled multipart upload is aborted so no staged parts linger: a part
 * that fails stops the others first, and Cancel lets a create in flight
 * answer (cut off, it could leave an upload whose id the console never
 * learnt) and then aborts it. Once the complete is sent, Cancel is gone:
 * the object may already exist, and "cancelled" would not be true.
 */
import { authHeaders, ApiError, jsonBody, objectPath, type ApiAnswer } from './api.js'
import { formatSize, h } from './dom.js'
import { shownName } from './names.js'

const MiB = 1024 * 1024
export const multipartThreshold = 8 * MiB
/** The binding's smallest part but the last. */
const minPartSize = 5 * MiB
const maxParts = 10_000
const parallelParts = 4
const parallelFiles = 2
/** The binding's longest key, in UTF-8 bytes: said before sending rather than as the server's 10020. */
const maxKeyBytes = 1024

/** The requests of one file in flight, so that Cancel (or a failed part) can stop them. */
class Transfer {
  /** By the user's Cancel, as opposed to stopped by a failure. */
  cancelled = false
  #stopped = false
  #committing = false
  readonly #active = new Set<XMLHttpRequest>()
  /** Called when the upload can no longer be cancelled. */
  onCommit = (): void => {}

  track (xhr: XMLHttpRequest): void {
    if (this.#stopped) throw new ApiError(0, null, 'cancelled')
    this.#active.add(xhr)
    xhr.addEventListener('loadend', () => { this.#active.delete(xhr) })
  }

  /** Aborts the requests in flight and refuses new ones. */
  stop (): void {
    this.#stopped = true
    for (const xhr of this.#active) xhr.abort()
  }

  /** The user's Cancel: nothing once the outcome is the server's, or once a failure stopped the transfer (its reason is the one to show). */
  cancel (): void {
    if (this.#committing || this.#stopped) return
    this.cancelled = true
    this.stop()
  }

  /** From here the outcome is the server's: Cancel no longer applies. False when the transfer was stopped first. */
  commit (): boolean {
    if (this.#stopped) return false
    this.#committing = true
    this.onCommit()
    return true
  }
}

/** One request with upload progress; resolves with the parsed envelope. */
async function send<T> (method: string, url: string, body: Blob | string | null, headers: Record<string, string>, onProgress: (loaded: number) => void, transfer?: Transfer, onSent?: () => void): Promise<ApiAnswer<T>> {
  return await new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    transfer?.track(xhr)
    xhr.open(method, url)
    for (const [name, value] of Object.entries({ ...authHeaders(), ...headers })) xhr.setRequestHeader(name, value)
    xhr.upload.addEventListener('progress', event => { onProgress(event.loaded) })
    if (onSent !== undefined) xhr.upload.addEventListener('load', onSent)
    xhr.addEventListener('load', () => {
      let parsed: ApiAnswer<T> | null = null
      try { parsed = JSON.parse(xhr.responseText) } catch {}
      if (xhr.status >= 200 && xhr.status < 300 && parsed !== null) return resolve(parsed)
      const error = parsed?.errors?.[0]
      reject(new ApiError(xhr.status, error?.code ?? null, error?.message ?? `${xhr.status} ${xhr.statusText}`))
    })
    xhr.addEventListener('error', () => { reject(new ApiError(0, null, 'network error')) })
    xhr.addEventListener('abort', () => { reject(new ApiError(0, null, 'cancelled')) })
    xhr.send(body)
  })
}

function partSizeFor (size: number): number {
  return Math.max(minPartSize, Math.ceil(size / maxParts / MiB) * MiB)
}

async function putWhole (bucket: string, key: string, file: File, onProgress: (loaded: number) => void, transfer: Transfer): Promise<void> {
  const headers: Record<string, string> = file.type === '' ? {} : { 'content-type': file.type }
  // Once the whole body is sent the server may already be storing it: Cancel goes, lest "cancelled" stand beside a stored object.
  await send('PUT', objectPath(bucket, key), file, headers, onProgress, transfer, () => { transfer.commit() })
}

async function putMultipart (bucket: string, key: string, file: File, onProgress: (loaded: number) => void, transfer: Transfer): Promise<void> {
  const path = objectPath(bucket, key)
  const headers: Record<string, string> = file.type === '' ? {} : { 'content-type': file.type }
  // Not tracked: a Cancel now is seen by the first part's `track`, which then aborts the upload.
  const created = await send<{ uploadId: string }>('POST', `${path}?action=mpu-create`, null, headers, () => {})
  const uploadId = encodeURIComponent(created.result.uploadId)
  const partSize = partSizeFor(file.size)
  const count = Math.ceil(file.size / partSize)
  const loaded = new Array<number>(count).fill(0)
  const parts: Array<{ partNumber: number, etag: string }> = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++
      const blob = file.slice(index * partSize, Math.min(file.size, (index + 1) * partSize))
      const answer = await send<{ partNumber: number, etag: string }>('PUT', `${path}?action=mpu-uploadpart&uploadId=${uploadId}&partNumber=${index + 1}`, blob, {}, bytes => {
        loaded[index] = bytes
        onProgress(loaded.reduce((a, b) => a + b, 0))
      }, transfer)
      parts[index] = { partNumber: index + 1, etag: answer.result.etag }
    }
  }
  try {
    // The first part to fail stops the others, rather than leave them sending into an upload about to be aborted.
    await Promise.all(Array.from({ length: Math.min(parallelParts, count) }, async () => { await worker().catch(err => { transfer.stop(); throw err }) }))
    if (!transfer.commit()) throw new ApiError(0, null, 'cancelled')
    const complete = jsonBody({ parts })
    await send('POST', `${path}?action=mpu-complete&uploadId=${uploadId}`, complete.body as string, { 'content-type': 'application/json' }, () => {})
  } catch (err) {
    await send('DELETE', `${path}?action=mpu-abort&uploadId=${uploadId}`, null, {}, () => {}).catch(() => {})
    throw err
  }
}

/** Uploads `files` under `prefix`, drawing one row per file into `list`; resolves when all are done. */
export async function uploadFiles (bucket: string, prefix: string, files: File[], list: HTMLElement): Promise<{ failed: number }> {
  let failed = 0
  const queue = files.map(file => {
    const key = prefix + file.name
    // A file name is anyone's text: its bidirectional controls are written as \uHHHH, as keys are.
    const shown = shownName(key)
    const bar = h('progress', { max: file.size === 0 ? 1 : file.size, value: 0, 'aria-label': `Upload of ${shown}` })
    const state = h('span', { class: 'upload-state', role: 'status' }, 'waiting')
    const transfer = new Transfer()
    const cancel = h('button', { type: 'button', 'aria-label': `Cancel the upload of ${shown}` }, 'Cancel')
    cancel.addEventListener('click', () => { transfer.cancel(); cancel.disabled = true })
    transfer.onCommit = () => { state.textContent = 'completing'; cancel.remove() }
    const row = h('li', { class: 'upload' },
      h('span', { class: 'upload-name' }, shown), h('span', { class: 'upload-size' }, formatSize(file.size)), bar, state, cancel)
    list.appendChild(row)
    return { file, key, bar, state, row, transfer, cancel }
  })
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < queue.length) {
      const item = queue[next++]
      if (item.transfer.cancelled) {
        failed++
        item.state.textContent = 'cancelled'
        item.row.classList.add('failed')
        item.cancel.remove()
        continue
      }
      const multipart = item.file.size > multipartThreshold
      item.state.textContent = multipart ? 'uploading (multipart)' : 'uploading'
      const progress = (loaded: number): void => { item.bar.value = Math.min(loaded, item.file.size) }
      try {
        if (new TextEncoder().encode(item.key).length > maxKeyBytes) throw new Error(`the key is longer than ${maxKeyBytes.toLocaleString('en')} bytes (UTF-8), the longest an object name may be`)
        if (multipart) await putMultipart(bucket, item.key, item.file, progress, item.transfer)
        else await putWhole(bucket, item.key, item.file, progress, item.transfer)
        item.bar.value = item.bar.max
        item.state.textContent = 'done'
        item.row.classList.add('done')
      } catch (err) {
        failed++
        item.state.textContent = item.transfer.cancelled ? 'cancelled' : `failed: ${(err as Error).message}`
        item.row.classList.add('failed')
      }
      // Nothing left to cancel: the button goes rather than stay greyed out.
      item.cancel.remove()
    }
  }
  await Promise.all(Array.from({ length: Math.min(parallelFiles, queue.length) }, worker))
  return { failed }
}
