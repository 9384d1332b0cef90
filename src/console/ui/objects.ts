/**
 * The object browser of one bucket: breadcrumbs of the prefix, folders
 * (common prefixes of `/`), a page of objects with a cursor to the next
 * (and a stack of cursors back), search by prefix, selection and delete with
 * confirmation, upload by picker or drag-and-drop, and the details panel.
 */
import { ApiError, askForTokenAgain, gateway, isPublic, jsonBody, listObjects, needsToken, type Listing, type ListedObject } from './api.js'
import { renderDetails, downloadLink } from './details.js'
import { confirmDialog, formatDate, formatSize, h, replace, showStatus, type Current } from './dom.js'
import { nameUnder, shownName } from './names.js'
import { can } from './scope.js'
import { uploadLinkSection } from './share.js'
import { uploadFiles } from './upload.js'

export const pageSize = 100

export function objectsHash (bucket: string, prefix: string): string {
  return `#/objects?${new URLSearchParams({ bucket, prefix }).toString()}`
}

function breadcrumbs (bucket: string, prefix: string): HTMLElement {
  const parts = prefix.split('/').slice(0, -1)
  const items: HTMLElement[] = [h('li', {}, h('a', { href: '#/' }, 'Buckets'))]
  const current = (last: boolean): Record<string, string | undefined> => last ? { 'aria-current': 'page' } : {}
  items.push(h('li', {}, h('a', { href: objectsHash(bucket, ''), ...current(parts.length === 0) }, bucket)))
  parts.forEach((part, i) => {
    const upTo = parts.slice(0, i + 1).join('/') + '/'
    items.push(h('li', {}, h('a', { href: objectsHash(bucket, upTo), ...current(i === parts.length - 1) }, part === '' ? '(empty)' : shownName(part))))
  })
  return h('nav', { 'aria-label': 'Breadcrumb', class: 'breadcrumbs' }, h('ol', {}, ...items))
}

/** A page of a listing: the search typed (after the prefix), and the cursors to it (the first null), a stack to go back by. */
interface Page {
  search: string
  cursors: Array<string | null>
}

/** One bucket's browser as its pieces share it: the elements, the selection, the cursors back, the listing shown. */
interface Browser {
  bucket: string
  prefix: string
  publicBucket: boolean
  status: HTMLElement
  search: HTMLInputElement
  table: HTMLElement
  pager: HTMLElement
  detailsSlot: HTMLElement
  uploads: HTMLElement
  selectAll: HTMLInputElement
  deleteSelected: HTMLButtonElement
  picker: HTMLInputElement
  /** The page shown: replaced (never changed in place) once a listing of another is drawn. */
  shown: Page
  /** The page last asked for: the one shown, or one still loading (a search typed, a page clicked), which Refresh, a delete and an upload list again. */
  asked: Page
  selected: Set<string>
  listing: Listing | null
  /** Listings asked for: only the latest one asked draws (a search typed on, a page clicked while another loads). */
  loads: number
}

function updateSelection (view: Browser): void {
  const { deleteSelected, selected, selectAll, listing } = view
  deleteSelected.disabled = selected.size === 0
  deleteSelected.textContent = selected.size === 0 ? 'Delete selected' : `Delete selected (${selected.size})`
  selectAll.checked = listing !== null && listing.objects.length > 0 && listing.objects.every(o => selected.has(o.key))
}

/** Escape closes the details panel (unless a dialog is open: Escape is the dialog's). */
let closeOnEscape: ((event: KeyboardEvent) => void) | null = null

function closeDetails (view: Browser): void {
  replace(view.detailsSlot)
  if (closeOnEscape !== null) document.removeEventListener('keydown', closeOnEscape)
  closeOnEscape = null
}

/**
 * Closes the details at the user's word (Escape, ×) and gives the focus back
 * to the name that opened them (or to its row drawn since), so a keyboard
 * user goes on where they were rather than from the top of the page.
 */
function dismissDetails (view: Browser, key: string, opener: HTMLElement): void {
  closeDetails(view)
  const row = Array.from(view.table.querySelectorAll<HTMLElement>('tr.object')).find(tr => tr.dataset.key === key)
  const target = opener.isConnected ? opener : row?.querySelector<HTMLElement>('button.link')
  target?.focus()
}

function showDetails (view: Browser, object: ListedObject, opener: HTMLElement): void {
  const { detailsSlot } = view
  closeDetails(view)
  replace(detailsSlot, renderDetails(view.bucket, object, view.publicBucket, () => {
    closeDetails(view)
    // A deleted key is no longer selected: a later bulk delete would count it, and ask to delete it again.
    view.selected.delete(object.key)
    void reload(view, { text: `Deleted ${shownName(object.key)}.`, failed: false })
  }, () => { dismissDetails(view, object.key, opener) }))
  closeOnEscape = event => {
    if (event.key !== 'Escape' || document.querySelector('dialog[open]') !== null || !detailsSlot.isConnected) return
    dismissDetails(view, object.key, opener)
  }
  document.addEventListener('keydown', closeOnEscape)
  detailsSlot.querySelector<HTMLElement>('h2')?.focus()
}

function objectRow (view: Browser, object: ListedObject): HTMLElement {
  const name = nameUnder(view.prefix, object.key)
  const box = h('input', { type: 'checkbox', 'aria-label': `Select ${shownName(object.key)}` })
  box.checked = view.selected.has(object.key)
  box.addEventListener('change', () => {
    if (box.checked) view.selected.add(object.key)
    else view.selected.delete(object.key)
    updateSelection(view)
  })
  const open = h('button', { type: 'button', class: 'link' }, name === '' ? '(this folder\'s own object)' : shownName(name))
  open.addEventListener('click', () => { showDetails(view, object, open) })
  return h('tr', { class: 'object', 'data-key': object.key },
    h('td', {}, can('object:write', view.bucket) ? box : null),
    h('td', {}, open),
    h('td', { class: 'size' }, formatSize(object.size)),
    h('td', {}, formatDate(object.uploaded)),
    h('td', {}, downloadLink(view.bucket, object.key, view.publicBucket, 'Download', text => { showStatus(view.status, text, true) })))
}

function folderRow (bucket: string, prefix: string, folder: string): HTMLElement {
  const name = nameUnder(prefix, folder)
  return h('tr', { class: 'folder' },
    h('td', {}),
    h('td', {}, h('a', { href: objectsHash(bucket, folder), class: 'folder-link' }, shownName(name))),
    h('td', { class: 'size' }, '—'), h('td', {}), h('td', {}))
}

/**
 * The page's previous and next buttons, and its number. Each names the
 * cursors of the page it goes to, from those of the page shown: a second
 * click before the page arrives (a double click) asks for the same page,
 * not the one after; and the buttons are disabled while a listing loads.
 */
function renderPager (view: Browser, listing: Listing): void {
  const { search, cursors } = view.shown
  const previous = h('button', { type: 'button', disabled: cursors.length === 1 }, 'Previous page')
  previous.addEventListener('click', () => { void reload(view, undefined, { search, cursors: cursors.slice(0, -1) }) })
  const next = h('button', { type: 'button', disabled: !listing.truncated }, 'Next page')
  next.addEventListener('click', () => { if (listing.cursor != null) void reload(view, undefined, { search, cursors: [...cursors, listing.cursor] }) })
  replace(view.pager, previous, h('span', {}, `Page ${cursors.length}`), next)
}

/** What the page says once drawn again, in place of its counts: the outcome of what the user just did. */
interface Outcome { text: string, failed: boolean }

function countOf (count: number, noun = 'object'): string {
  return `${count.toLocaleString('en')} ${noun}${count === 1 ? '' : 's'}`
}

/**
 * Lists `page` (by default the one last asked for: shown, or still loading) and shows it, with `outcome` as
 * its status until the user's next action. Only the latest listing asked
 * for draws: one overtaken (a search typed on, another page asked for)
 * draws nothing, nor its failure. A refused token is
 * thrown, for the caller to ask for one (as the bucket list does); any
 * other failure shows as an alert, the page shown left as it was.
 */
async function load (view: Browser, outcome?: Outcome, page = view.asked): Promise<void> {
  const { bucket, prefix, status } = view
  const { search, cursors } = page
  const mine = ++view.loads
  view.asked = page
  if (outcome === undefined) showStatus(status, 'Loading…')
  else showStatus(status, outcome.text, outcome.failed)
  view.pager.querySelectorAll('button').forEach(button => { button.disabled = true })
  let listing: Listing
  try {
    listing = await listObjects(bucket, prefix + search, cursors[cursors.length - 1], pageSize)
  } catch (err) {
    if (mine !== view.loads) return
    if (needsToken(err)) throw err
    showStatus(status, `${outcome === undefined ? '' : `${outcome.text} `}Listing failed: ${(err as Error).message}`, true)
    if (view.listing !== null) renderPager(view, view.listing)
    return
  }
  if (mine !== view.loads) return
  view.shown = page
  view.listing = listing
  const rows = [...listing.folders.map(folder => folderRow(bucket, prefix, folder)), ...listing.objects.map(object => objectRow(view, object))]
  if (rows.length === 0) rows.push(h('tr', {}, h('td', { colspan: 5, class: 'empty' }, search !== '' ? 'Nothing matches.' : can('object:write', bucket) ? 'No objects here yet: drop files to upload.' : 'No objects here.')))
  replace(view.table, ...rows)
  renderPager(view, listing)
  if (outcome === undefined) showStatus(status, `${countOf(listing.folders.length, 'folder')}, ${countOf(listing.objects.length)}${listing.truncated ? ' (more on the next page)' : ''}.`)
  updateSelection(view)
}

/** `load` after a click (a page, a search, a delete, an upload): a token refused since the page was drawn is asked for again. */
async function reload (view: Browser, outcome?: Outcome, page?: Page): Promise<void> {
  await load(view, outcome, page).catch(err => {
    if (!askForTokenAgain(err, view.table)) throw err
  })
}

/** Whether `key` is still stored: asked by listing from it, since a URL cannot name every key (`.`, `..`). */
async function stillStored (bucket: string, key: string): Promise<boolean> {
  const query = new URLSearchParams({ prefix: key, limit: '1' })
  const answer = await gateway<ListedObject[]>(`/${encodeURIComponent(bucket)}?${query.toString()}`)
  // The gateway matches keys by their NFC form, and lists each as last written.
  return answer.result[0]?.key.normalize('NFC') === key.normalize('NFC')
}

/** Those of `keys` no longer stored, asked a few at a time; one that cannot be asked counts as kept. */
async function goneOf (bucket: string, keys: string[]): Promise<string[]> {
  const gone: string[] = []
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < keys.length) {
      const key = keys[next++]
      if (!await stillStored(bucket, key).catch(() => true)) gone.push(key)
    }
  }
  await Promise.all(Array.from({ length: Math.min(8, keys.length) }, worker))
  return gone
}

/** The keys a refused delete says it deleted (`result.deleted`), or null when its answer does not say. */
function deletedBy (err: unknown): string[] | null {
  const told = err instanceof ApiError ? (err.result as { deleted?: unknown } | null)?.deleted : undefined
  return Array.isArray(told) && told.every((k): k is string => typeof k === 'string') ? told : null
}

/**
 * Deletes `keys`, 1,000 to a request (the route's limit), stopping at the
 * first refusal. A refused request may still have deleted some of its keys:
 * a bucket lock's refusal names those it deleted (the others it kept), so
 * only a failure that does not say (no answer, a server error) has which of
 * them are gone asked afresh, key by key.
 */
async function deleteKeys (bucket: string, keys: string[]): Promise<{ deleted: string[], failure: Error | null }> {
  const deleted: string[] = []
  for (let i = 0; i < keys.length; i += 1000) {
    const batch = keys.slice(i, i + 1000)
    try {
      await gateway(`/${encodeURIComponent(bucket)}?delete`, { method: 'POST', ...jsonBody({ keys: batch }) })
      deleted.push(...batch)
    } catch (err) {
      deleted.push(...deletedBy(err) ?? await goneOf(bucket, batch))
      return { deleted, failure: err as Error }
    }
  }
  return { deleted, failure: null }
}

/** Deletes the selected keys once confirmed, then lists the page again, whatever came of it. */
async function deleteSelection (view: Browser): Promise<void> {
  const keys = [...view.selected]
  if (!await confirmDialog(`Delete ${countOf(keys.length)}?`, keys.map(shownName), 'Delete')) return
  const { deleted, failure } = await deleteKeys(view.bucket, keys)
  for (const key of deleted) view.selected.delete(key)
  closeDetails(view)
  const kept = keys.length - deleted.length
  await reload(view, failure === null
    ? { text: `Deleted ${countOf(deleted.length)}.`, failed: false }
    : { text: `Deleted ${deleted.length.toLocaleString('en')} of ${countOf(keys.length)}; ${kept.toLocaleString('en')} ${kept === 1 ? 'was' : 'were'} kept: ${failure.message}`, failed: true })
}

function wireSelection (view: Browser): void {
  const { selectAll } = view
  selectAll.addEventListener('change', () => {
    for (const object of view.listing?.objects ?? []) {
      if (selectAll.checked) view.selected.add(object.key)
      else view.selected.delete(object.key)
    }
    view.table.querySelectorAll<HTMLInputElement>('tr.object input[type=checkbox]').forEach(box => { box.checked = selectAll.checked })
    updateSelection(view)
  })
  view.deleteSelected.addEventListener('click', () => { void deleteSelection(view) })
}

async function upload (view: Browser, files: File[]): Promise<void> {
  if (files.length === 0) return
  const { failed } = await uploadFiles(view.bucket, view.prefix, files, view.uploads)
  await reload(view, failed === 0
    ? { text: `Uploaded ${files.length} file${files.length === 1 ? '' : 's'}.`, failed: false }
    : { text: `${failed} of ${files.length} uploads failed.`, failed: true })
}

/** Where files are dropped or picked for upload. */
function dropzone (view: Browser): HTMLElement {
  const { picker } = view
  picker.addEventListener('change', () => {
    const files = Array.from(picker.files ?? [])
    picker.value = ''
    void upload(view, files)
  })
  const zone = h('section', { class: 'dropzone', 'aria-label': 'Drop files here to upload' },
    h('p', {}, 'Drop files here to upload them to ', h('strong', {}, `${view.bucket}/${shownName(view.prefix)}`), ', or ',
      h('label', { for: 'file-picker', class: 'button', tabindex: 0 }, 'choose files'), '.'),
    picker, view.uploads)
  const pickerLabel = zone.querySelector<HTMLLabelElement>('label.button')
  pickerLabel?.addEventListener('keydown', event => {
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); picker.click() }
  })
  zone.addEventListener('dragover', event => { event.preventDefault(); zone.classList.add('over') })
  zone.addEventListener('dragleave', () => { zone.classList.remove('over') })
  zone.addEventListener('drop', event => {
    event.preventDefault()
    zone.classList.remove('over')
    void upload(view, Array.from(event.dataTransfer?.files ?? []))
  })
  return zone
}

/** Search by prefix (as one types, or on submit), delete, settings, and whether the bucket is public. */
function toolbar (view: Browser): HTMLElement {
  const { bucket, prefix, search } = view
  let typing: ReturnType<typeof setTimeout> | undefined
  // A search lists its own first page: the cursors of the page shown belong to another prefix.
  search.addEventListener('input', () => {
    clearTimeout(typing)
    typing = setTimeout(() => { void reload(view, undefined, { search: search.value, cursors: [null] }) }, 250)
  })
  // What other clients wrote since (an upload link's files, a program's) shows without reloading the whole page.
  const refresh = h('button', { type: 'button' }, 'Refresh')
  refresh.addEventListener('click', () => { void reload(view) })
  return h('div', { class: 'toolbar' },
    h('form', { role: 'search', class: 'search', onsubmit: (event: Event) => { event.preventDefault(); clearTimeout(typing); void reload(view, undefined, { search: search.value, cursors: [null] }) } },
      h('label', { for: 'search' }, `Search in ${prefix === '' ? bucket : shownName(prefix)}`), search),
    refresh,
    can('object:write', bucket) ? newFolder(view) : null,
    can('object:write', bucket) ? view.deleteSelected : null,
    can('bucket:read', bucket) ? h('a', { href: `#/settings?${new URLSearchParams({ bucket }).toString()}`, class: 'button' }, 'Bucket settings') : null,
    view.publicBucket ? h('span', { class: 'badge' }, 'public') : h('span', { class: 'badge private' }, 'private'))
}

/**
 * Opens a folder that holds nothing yet, to upload into: a folder is only
 * the common prefix of its keys, so it is listed once a file is in it.
 */
function newFolder (view: Browser): HTMLElement {
  // Not blank, no `/`, no space at either end (a folder `   /` would show as nothing in the breadcrumbs).
  const name = h('input', { id: 'new-folder', placeholder: 'folder name', autocomplete: 'off', required: true, pattern: '[^\\/\\s]|[^\\/\\s][^\\/]*[^\\/\\s]' })
  const form = h('form', { class: 'inline' }, h('label', { for: 'new-folder', class: 'visually-hidden' }, 'New folder'), name, h('button', { type: 'submit' }, 'New folder'))
  form.addEventListener('submit', event => {
    event.preventDefault()
    location.hash = objectsHash(view.bucket, `${view.prefix}${name.value}/`)
  })
  return form
}

function objectsTable (view: Browser): HTMLElement {
  return h('div', { class: 'browser' },
    h('table', { class: 'objects' },
      h('caption', { class: 'visually-hidden' }, `Objects in ${view.bucket}/${shownName(view.prefix)}`),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, can('object:write', view.bucket) ? view.selectAll : null), h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Size'),
        h('th', { scope: 'col' }, 'Uploaded'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Download')))),
      view.table),
    view.detailsSlot)
}

/** Draws the browser of `bucket` under `prefix` into `root`, unless the user has gone elsewhere (`current`) by the time it can. */
export async function renderObjects (root: HTMLElement, bucket: string, prefix: string, current: Current): Promise<void> {
  // Only decides how links are offered; the listing reports real access errors.
  const publicBucket = can('bucket:read', bucket) && await isPublic(bucket).catch(() => false)
  if (!current()) return
  const view: Browser = {
    bucket,
    prefix,
    publicBucket,
    status: h('p', { role: 'status', class: 'status', 'aria-live': 'polite' }),
    search: h('input', { type: 'search', id: 'search', placeholder: 'name starts with…', autocomplete: 'off' }),
    table: h('tbody'),
    pager: h('div', { class: 'pager' }),
    detailsSlot: h('div', { class: 'details-slot' }),
    uploads: h('ul', { class: 'uploads', 'aria-label': 'Uploads' }),
    selectAll: h('input', { type: 'checkbox', 'aria-label': 'Select all objects on this page' }),
    deleteSelected: h('button', { type: 'button', class: 'danger', disabled: true }, 'Delete selected'),
    picker: h('input', { type: 'file', id: 'file-picker', multiple: true, class: 'visually-hidden', tabindex: -1 }),
    shown: { search: '', cursors: [null] },
    asked: { search: '', cursors: [null] },
    selected: new Set<string>(),
    listing: null,
    loads: 0
  }
  wireSelection(view)
  const writes = can('object:write', bucket)
  // The status goes above the table, where a failure is seen without scrolling past a page of rows.
  replace(root, breadcrumbs(bucket, prefix), toolbar(view), writes ? dropzone(view) : null, writes ? uploadLinkSection(bucket, prefix) : null,
    view.status, objectsTable(view), view.pager)
  await load(view)
}
