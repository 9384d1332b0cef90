/**
 * The details of one object: size, etag, upload time, HTTP and custom
 * metadata, checksums, a download link, the public link when the bucket is
 * public, and delete. Everything shown is text (untrusted); links are built
 * with `objectPath`.
 */
import { ApiError, authHeaders, failure, gateway, hasObjectUrl, jsonBody, objectPath, tokens, type ListedObject } from './api.js'
import { confirmDialog, formatDate, formatSize, h, showStatus } from './dom.js'
import { shownName } from './names.js'
import { can } from './scope.js'
import { shareLinkSection } from './share.js'

function lastSegment (key: string): string {
  return key.slice(key.lastIndexOf('/') + 1) || 'download'
}

/** Said where a link of a key that is `.` or `..` would be (`hasObjectUrl`). */
const noUrl = 'A browser cannot name this key in a link (URLs remove "." and ".."): read it with the CLI, the S3 port or curl --path-as-is.'

/**
 * A download link. A plain link streams the object straight to disk; when
 * the read needs the bearer token (a private bucket on a server with a
 * token), the click fetches it with the header and hands the browser a blob
 * instead, since a link cannot carry a header. A plain link's failure is the
 * browser's to show (its downloads list); a fetched one's would show
 * nowhere, so it goes to `report` with the server's words.
 */
export function downloadLink (bucket: string, key: string, publicBucket: boolean, label: string, report: (failure: string) => void): HTMLElement {
  if (!hasObjectUrl(key)) return h('span', { class: 'download unavailable', title: noUrl }, 'no link')
  const link = h('a', { href: objectPath(bucket, key), download: lastSegment(key), class: 'download' }, label)
  link.addEventListener('click', event => {
    if (publicBucket || tokens.get() === null || link.dataset.blob === 'yes') return
    event.preventDefault()
    fetchDownload(bucket, key).catch((err: Error) => {
      const code = err instanceof ApiError && err.code !== null ? ` (${err.code})` : ''
      report(`Download of ${shownName(key)} failed: ${err.message}${code}`)
    })
  })
  return link
}

/** Reads the object with the token and saves it through a link to its bytes. */
async function fetchDownload (bucket: string, key: string): Promise<void> {
  const response = await fetch(objectPath(bucket, key), { headers: authHeaders() })
  if (!response.ok) throw await failure(response)
  const url = URL.createObjectURL(await response.blob())
  const blobLink = h('a', { href: url, download: lastSegment(key), 'data-blob': 'yes' })
  document.body.appendChild(blobLink)
  blobLink.click()
  blobLink.remove()
  setTimeout(() => { URL.revokeObjectURL(url) }, 60_000)
}

/**
 * The stored Content-Type, or else the one the gateway serves the object
 * with (guessed from the key's extension, which only the server knows):
 * asked with a HEAD and filled in when it answers. A HEAD refused or never
 * answered says so: that is not an object without a type.
 */
function contentType (bucket: string, key: string, stored: string | undefined): HTMLElement {
  const cell = h('dd', { 'data-testid': 'details-type' }, stored ?? '…')
  if (stored !== undefined) return cell
  if (!hasObjectUrl(key)) {
    cell.textContent = 'none stored'
    return cell
  }
  void fetch(objectPath(bucket, key), { method: 'HEAD', headers: authHeaders() }).then(response => {
    if (!response.ok) {
      cell.textContent = `could not be read (${response.status}${response.statusText === '' ? '' : ` ${response.statusText}`})`
      return
    }
    const served = response.headers.get('content-type')
    cell.textContent = served === null ? 'none stored' : `${served} (from the key's extension)`
  }, () => { cell.textContent = 'could not be read (no answer)' })
  return cell
}

function entries (title: string, values: Record<string, string | undefined>): HTMLElement | null {
  const shown = Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')
  if (shown.length === 0) return null
  return h('section', { class: 'meta' }, h('h3', {}, title),
    h('dl', {}, ...shown.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)])))
}

export function renderDetails (bucket: string, object: ListedObject, publicBucket: boolean, onDeleted: () => void, onClose: () => void): HTMLElement {
  const publicUrl = `${location.origin}${objectPath(bucket, object.key)}`
  const status = h('p', { role: 'status', class: 'status' })
  const copy = h('button', { type: 'button' }, 'Copy link')
  const publicInput = h('input', { type: 'text', readonly: true, value: publicUrl, id: 'public-link', class: 'public-link' })
  copy.addEventListener('click', () => {
    publicInput.select()
    // The Clipboard API exists only in secure contexts (https, localhost); elsewhere the link stays selected.
    if (navigator.clipboard === undefined) {
      showStatus(status, 'The link is selected: copy it with Ctrl+C.')
      return
    }
    navigator.clipboard.writeText(publicUrl).then(() => { showStatus(status, 'Link copied.') },
      () => { showStatus(status, 'The link is selected: copy it with Ctrl+C.') })
  })
  const remove = h('button', { type: 'button', class: 'danger' }, 'Delete')
  remove.addEventListener('click', () => {
    void (async () => {
      if (!await confirmDialog('Delete this object?', [shownName(object.key)], 'Delete')) return
      try {
        // By the keys of a POST, which names every key (a URL path cannot name "." or "..").
        await gateway(`/${encodeURIComponent(bucket)}?delete`, { method: 'POST', ...jsonBody({ keys: [object.key] }) })
        onDeleted()
      } catch (err) {
        showStatus(status, `Delete failed: ${(err as Error).message}`, true)
      }
    })()
  })
  const http = object.httpMetadata ?? {}
  return h('aside', { class: 'details', 'aria-labelledby': 'details-title' },
    h('div', { class: 'details-head' },
      h('h2', { id: 'details-title', tabindex: -1 }, 'Object details'),
      h('button', { type: 'button', class: 'close', 'aria-label': 'Close details', onclick: onClose }, '×')),
    h('p', { class: 'key', 'data-testid': 'details-key' }, shownName(object.key)),
    h('dl', {},
      h('dt', {}, 'Size'), h('dd', { 'data-testid': 'details-size' }, `${formatSize(object.size)} (${object.size.toLocaleString('en')} bytes)`),
      h('dt', {}, 'ETag'), h('dd', { 'data-testid': 'details-etag' }, object.etag),
      h('dt', {}, 'Uploaded'), h('dd', {}, formatDate(object.uploaded)),
      h('dt', {}, 'Content type'), contentType(bucket, object.key, http.contentType),
      h('dt', {}, 'Storage class'), h('dd', {}, object.storageClass)),
    entries('HTTP metadata', { 'Content-Language': http.contentLanguage, 'Content-Disposition': http.contentDisposition, 'Content-Encoding': http.contentEncoding, 'Cache-Control': http.cacheControl, Expires: http.cacheExpiry }),
    entries('Custom metadata', object.customMetadata ?? {}),
    entries('Checksums', object.checksums ?? {}),
    h('div', { class: 'actions' }, downloadLink(bucket, object.key, publicBucket, 'Download', text => { showStatus(status, text, true) }), can('object:write', bucket) ? remove : null),
    shareLinkSection(bucket, object.key),
    !hasObjectUrl(object.key)
      ? h('p', { class: 'hint' }, noUrl)
      : publicBucket
      ? h('div', { class: 'field' }, h('label', { for: 'public-link' }, 'Public link'), h('div', { class: 'inline' }, publicInput, copy))
      : h('p', { class: 'hint' }, 'The bucket is private: its links work only for clients allowed to read it. Make it public in the bucket settings to share links.'),
    status)
}
