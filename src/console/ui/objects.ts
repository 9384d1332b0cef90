/**
 * The object browser of one bucket: breadcrumbs of the prefix, folders
 * (common prefixes of `/`), a page of objects with a cursor to the next
 * (and a stack of cursors back), search by prefix, selection and delete with
 * confirmation, upload by picker or drag-and-drop, and the details panel.
 */
import { gateway, isPublic, jsonBody, listObjects, type Listing, type StoredObject } from './api.js'
import { renderDetails, downloadLink } from './details.js'
import { confirmDialog, formatDate, formatSize, h, replace, showStatus } from './dom.js'
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
    items.push(h('li', {}, h('a', { href: objectsHash(bucket, upTo), ...current(i === parts.length - 1) }, part === '' ? '(empty)' : part)))
  })
  return h('nav', { 'aria-label': 'Breadcrumb', class: 'breadcrumbs' }, h('ol', {}, ...items))
}

export async function renderObjects (root: HTMLElement, bucket: string, prefix: string): Promise<void> {
  // Only decides how links are offered; the listing below reports real access errors.
  const publicBucket = await isPublic(bucket).catch(() => false)
  const status = h('p', { role: 'status', class: 'status', 'aria-live': 'polite' })
  const search = h('input', { type: 'search', id: 'search', placeholder: 'name starts with…', autocomplete: 'off' })
  const table = h('tbody')
  const pager = h('div', { class: 'pager' })
  const detailsSlot = h('div', { class: 'details-slot' })
  const uploads = h('ul', { class: 'uploads', 'aria-label': 'Uploads' })
  const selectAll = h('input', { type: 'checkbox', 'aria-label': 'Select all objects on this page' })
  const deleteSelected = h('button', { type: 'button', class: 'danger', disabled: true }, 'Delete selected')
  const picker = h('input', { type: 'file', id: 'file-picker', multiple: true, class: 'visually-hidden', tabindex: -1 })
  const cursors: Array<string | null> = [null]
  let listing: Listing | null = null
  const selected = new Set<string>()

  const updateSelection = (): void => {
    deleteSelected.disabled = selected.size === 0
    deleteSelected.textContent = selected.size === 0 ? 'Delete selected' : `Delete selected (${selected.size})`
    selectAll.checked = listing !== null && listing.objects.length > 0 && listing.objects.every(o => selected.has(o.key))
  }

  /** Escape closes the details panel (unless a dialog is open: Escape is the dialog's). */
  let closeOnEscape: ((event: KeyboardEvent) => void) | null = null
  const closeDetails = (): void => {
    replace(detailsSlot)
    if (closeOnEscape !== null) document.removeEventListener('keydown', closeOnEscape)
    closeOnEscape = null
  }
  const showDetails = (object: StoredObject): void => {
    closeDetails()
    replace(detailsSlot, renderDetails(bucket, object, publicBucket, () => {
      closeDetails()
      showStatus(status, `Deleted ${object.key}.`)
      void load()
    }, closeDetails))
    closeOnEscape = event => {
      if (event.key !== 'Escape' || document.querySelector('dialog[open]') !== null || !detailsSlot.isConnected) return
      closeDetails()
    }
    document.addEventListener('keydown', closeOnEscape)
    detailsSlot.querySelector<HTMLElement>('h2')?.focus()
  }

  const objectRow = (object: StoredObject): HTMLElement => {
    const name = object.key.slice(prefix.length)
    const box = h('input', { type: 'checkbox', 'aria-label': `Select ${object.key}` })
    box.checked = selected.has(object.key)
    box.addEventListener('change', () => {
      if (box.checked) selected.add(object.key)
      else selected.delete(object.key)
      updateSelection()
    })
    return h('tr', { class: 'object', 'data-key': object.key },
      h('td', {}, box),
      h('td', {}, h('button', { type: 'button', class: 'link', onclick: () => { showDetails(object) } }, name === '' ? '(this folder\'s own object)' : name)),
      h('td', { class: 'size' }, formatSize(object.size)),
      h('td', {}, formatDate(object.uploaded)),
      h('td', {}, downloadLink(bucket, object.key, publicBucket, 'Download')))
  }

  const folderRow = (folder: string): HTMLElement => {
    const name = folder.slice(prefix.length)
    return h('tr', { class: 'folder' },
      h('td', {}),
      h('td', {}, h('a', { href: objectsHash(bucket, folder), class: 'folder-link' }, name)),
      h('td', { class: 'size' }, '—'), h('td', {}), h('td', {}))
  }

  async function load (): Promise<void> {
    showStatus(status, 'Loading…')
    try {
      listing = await listObjects(bucket, prefix + search.value, cursors[cursors.length - 1], pageSize)
    } catch (err) {
      showStatus(status, `Listing failed: ${(err as Error).message}`, true)
      return
    }
    const rows = [...listing.folders.map(folderRow), ...listing.objects.map(objectRow)]
    if (rows.length === 0) rows.push(h('tr', {}, h('td', { colspan: 5, class: 'empty' }, search.value === '' ? 'No objects here yet: drop files to upload.' : 'Nothing matches.')))
    replace(table, ...rows)
    const previous = h('button', { type: 'button', disabled: cursors.length === 1 }, 'Previous page')
    previous.addEventListener('click', () => { cursors.pop(); void load() })
    const next = h('button', { type: 'button', disabled: !listing.truncated }, 'Next page')
    next.addEventListener('click', () => { if (listing?.cursor != null) { cursors.push(listing.cursor); void load() } })
    replace(pager, previous, h('span', {}, `Page ${cursors.length}`), next)
    showStatus(status, `${listing.folders.length} folders, ${listing.objects.length} objects${listing.truncated ? ' (more on the next page)' : ''}.`)
    updateSelection()
  }

  selectAll.addEventListener('change', () => {
    for (const object of listing?.objects ?? []) {
      if (selectAll.checked) selected.add(object.key)
      else selected.delete(object.key)
    }
    table.querySelectorAll<HTMLInputElement>('tr.object input[type=checkbox]').forEach(box => { box.checked = selectAll.checked })
    updateSelection()
  })

  deleteSelected.addEventListener('click', () => {
    void (async () => {
      const keys = [...selected]
      if (!await confirmDialog(`Delete ${keys.length} object${keys.length === 1 ? '' : 's'}?`, keys, 'Delete')) return
      try {
        for (let i = 0; i < keys.length; i += 1000) {
          await gateway(`/${encodeURIComponent(bucket)}?delete`, { method: 'POST', ...jsonBody({ keys: keys.slice(i, i + 1000) }) })
        }
        selected.clear()
        showStatus(status, `Deleted ${keys.length} object${keys.length === 1 ? '' : 's'}.`)
        replace(detailsSlot)
        await load()
      } catch (err) {
        showStatus(status, `Delete failed: ${(err as Error).message}`, true)
      }
    })()
  })

  const upload = async (files: File[]): Promise<void> => {
    if (files.length === 0) return
    const { failed } = await uploadFiles(bucket, prefix, files, uploads)
    showStatus(status, failed === 0 ? `Uploaded ${files.length} file${files.length === 1 ? '' : 's'}.` : `${failed} of ${files.length} uploads failed.`, failed > 0)
    await load()
  }
  picker.addEventListener('change', () => {
    const files = Array.from(picker.files ?? [])
    picker.value = ''
    void upload(files)
  })

  const dropzone = h('section', { class: 'dropzone', 'aria-label': 'Drop files here to upload' },
    h('p', {}, 'Drop files here to upload them to ', h('strong', {}, `${bucket}/${prefix}`), ', or ',
      h('label', { for: 'file-picker', class: 'button', tabindex: 0 }, 'choose files'), '.'),
    picker, uploads)
  const pickerLabel = dropzone.querySelector<HTMLLabelElement>('label.button')
  pickerLabel?.addEventListener('keydown', event => {
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); picker.click() }
  })
  dropzone.addEventListener('dragover', event => { event.preventDefault(); dropzone.classList.add('over') })
  dropzone.addEventListener('dragleave', () => { dropzone.classList.remove('over') })
  dropzone.addEventListener('drop', event => {
    event.preventDefault()
    dropzone.classList.remove('over')
    void upload(Array.from(event.dataTransfer?.files ?? []))
  })

  let typing: ReturnType<typeof setTimeout> | undefined
  search.addEventListener('input', () => {
    clearTimeout(typing)
    typing = setTimeout(() => { cursors.splice(1); void load() }, 250)
  })

  replace(root,
    breadcrumbs(bucket, prefix),
    h('div', { class: 'toolbar' },
      h('form', { role: 'search', class: 'search', onsubmit: (event: Event) => { event.preventDefault(); cursors.splice(1); void load() } },
        h('label', { for: 'search' }, `Search in ${prefix === '' ? bucket : prefix}`), search),
      deleteSelected,
      h('a', { href: `#/settings?${new URLSearchParams({ bucket }).toString()}`, class: 'button' }, 'Bucket settings'),
      publicBucket ? h('span', { class: 'badge' }, 'public') : h('span', { class: 'badge private' }, 'private')),
    dropzone,
    h('div', { class: 'browser' },
      h('table', { class: 'objects' },
        h('caption', { class: 'visually-hidden' }, `Objects in ${bucket}/${prefix}`),
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, selectAll), h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Size'),
          h('th', { scope: 'col' }, 'Uploaded'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Download')))),
        table),
      detailsSlot),
    pager,
    status)
  await load()
}
