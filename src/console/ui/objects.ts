/**
 * The object browser of one bucket: breadcrumbs of the prefix, folders
 * (common prefixes of `/`), a page of objects with a cursor to the next
 * (and a stack of cursors back), search by prefix, selection and delete with
 * confirmation, upload by picker or drag-and-drop, and the details panel.
 */
import { gateway, isPublic, jsonBody, listObjects, type Listing, type ListedObject } from './api.js'
import { renderDetails, downloadLink } from './details.js'
import { confirmDialog, formatDate, formatSize, h, replace, showStatus } from './dom.js'
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
  cursors: Array<string | null>
  selected: Set<string>
  listing: Listing | null
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

function showDetails (view: Browser, object: ListedObject): void {
  const { detailsSlot } = view
  closeDetails(view)
  replace(detailsSlot, renderDetails(view.bucket, object, view.publicBucket, () => {
    closeDetails(view)
    showStatus(view.status, `Deleted ${shownName(object.key)}.`)
    void load(view)
  }, () => { closeDetails(view) }))
  closeOnEscape = event => {
    if (event.key !== 'Escape' || document.querySelector('dialog[open]') !== null || !detailsSlot.isConnected) return
    closeDetails(view)
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
  return h('tr', { class: 'object', 'data-key': object.key },
    h('td', {}, can('object:write', view.bucket) ? box : null),
    h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => { showDetails(view, object) } }, name === '' ? '(this folder\'s own object)' : shownName(name))),
    h('td', { class: 'size' }, formatSize(object.size)),
    h('td', {}, formatDate(object.uploaded)),
    h('td', {}, downloadLink(view.bucket, object.key, view.publicBucket, 'Download')))
}

function folderRow (bucket: string, prefix: string, folder: string): HTMLElement {
  const name = nameUnder(prefix, folder)
  return h('tr', { class: 'folder' },
    h('td', {}),
    h('td', {}, h('a', { href: objectsHash(bucket, folder), class: 'folder-link' }, shownName(name))),
    h('td', { class: 'size' }, '—'), h('td', {}), h('td', {}))
}

/** The page's previous and next buttons, and its number. */
function renderPager (view: Browser, listing: Listing): void {
  const { cursors } = view
  const previous = h('button', { type: 'button', disabled: cursors.length === 1 }, 'Previous page')
  previous.addEventListener('click', () => { cursors.pop(); void load(view) })
  const next = h('button', { type: 'button', disabled: !listing.truncated }, 'Next page')
  next.addEventListener('click', () => { if (listing.cursor != null) { cursors.push(listing.cursor); void load(view) } })
  replace(view.pager, previous, h('span', {}, `Page ${cursors.length}`), next)
}

/** Lists the page the cursors point at and shows it. */
async function load (view: Browser): Promise<void> {
  const { bucket, prefix, search, cursors, status } = view
  showStatus(status, 'Loading…')
  let listing: Listing
  try {
    listing = await listObjects(bucket, prefix + search.value, cursors[cursors.length - 1], pageSize)
  } catch (err) {
    showStatus(status, `Listing failed: ${(err as Error).message}`, true)
    return
  }
  view.listing = listing
  const rows = [...listing.folders.map(folder => folderRow(bucket, prefix, folder)), ...listing.objects.map(object => objectRow(view, object))]
  if (rows.length === 0) rows.push(h('tr', {}, h('td', { colspan: 5, class: 'empty' }, search.value !== '' ? 'Nothing matches.' : can('object:write', bucket) ? 'No objects here yet: drop files to upload.' : 'No objects here.')))
  replace(view.table, ...rows)
  renderPager(view, listing)
  showStatus(status, `${listing.folders.length} folders, ${listing.objects.length} objects${listing.truncated ? ' (more on the next page)' : ''}.`)
  updateSelection(view)
}

/** Deletes the selected keys, 1,000 to a request, once confirmed. */
async function deleteSelection (view: Browser): Promise<void> {
  const keys = [...view.selected]
  if (!await confirmDialog(`Delete ${keys.length} object${keys.length === 1 ? '' : 's'}?`, keys.map(shownName), 'Delete')) return
  try {
    for (let i = 0; i < keys.length; i += 1000) {
      await gateway(`/${encodeURIComponent(view.bucket)}?delete`, { method: 'POST', ...jsonBody({ keys: keys.slice(i, i + 1000) }) })
    }
    view.selected.clear()
    showStatus(view.status, `Deleted ${keys.length} object${keys.length === 1 ? '' : 's'}.`)
    replace(view.detailsSlot)
    await load(view)
  } catch (err) {
    showStatus(view.status, `Delete failed: ${(err as Error).message}`, true)
  }
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
  showStatus(view.status, failed === 0 ? `Uploaded ${files.length} file${files.length === 1 ? '' : 's'}.` : `${failed} of ${files.length} uploads failed.`, failed > 0)
  await load(view)
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
  const { bucket, prefix, search, cursors } = view
  let typing: ReturnType<typeof setTimeout> | undefined
  search.addEventListener('input', () => {
    clearTimeout(typing)
    typing = setTimeout(() => { cursors.splice(1); void load(view) }, 250)
  })
  return h('div', { class: 'toolbar' },
    h('form', { role: 'search', class: 'search', onsubmit: (event: Event) => { event.preventDefault(); cursors.splice(1); void load(view) } },
      h('label', { for: 'search' }, `Search in ${prefix === '' ? bucket : shownName(prefix)}`), search),
    can('object:write', bucket) ? view.deleteSelected : null,
    can('bucket:read', bucket) ? h('a', { href: `#/settings?${new URLSearchParams({ bucket }).toString()}`, class: 'button' }, 'Bucket settings') : null,
    view.publicBucket ? h('span', { class: 'badge' }, 'public') : h('span', { class: 'badge private' }, 'private'))
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

export async function renderObjects (root: HTMLElement, bucket: string, prefix: string): Promise<void> {
  const view: Browser = {
    bucket,
    prefix,
    // Only decides how links are offered; the listing reports real access errors.
    publicBucket: can('bucket:read', bucket) && await isPublic(bucket).catch(() => false),
    status: h('p', { role: 'status', class: 'status', 'aria-live': 'polite' }),
    search: h('input', { type: 'search', id: 'search', placeholder: 'name starts with…', autocomplete: 'off' }),
    table: h('tbody'),
    pager: h('div', { class: 'pager' }),
    detailsSlot: h('div', { class: 'details-slot' }),
    uploads: h('ul', { class: 'uploads', 'aria-label': 'Uploads' }),
    selectAll: h('input', { type: 'checkbox', 'aria-label': 'Select all objects on this page' }),
    deleteSelected: h('button', { type: 'button', class: 'danger', disabled: true }, 'Delete selected'),
    picker: h('input', { type: 'file', id: 'file-picker', multiple: true, class: 'visually-hidden', tabindex: -1 }),
    cursors: [null],
    selected: new Set<string>(),
    listing: null
  }
  wireSelection(view)
  const writes = can('object:write', bucket)
  replace(root, breadcrumbs(bucket, prefix), toolbar(view), writes ? dropzone(view) : null, writes ? uploadLinkSection(bucket, prefix) : null,
    objectsTable(view), view.pager, view.status)
  await load(view)
}
