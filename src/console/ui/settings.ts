/**
 * Settings of one bucket, read and changed through the management API:
 * public access (the managed-domain switch), default storage class and
 * CORS rules (as the API's JSON, edited in place); then the sections of
 * lifecycle rules, locks and event notifications (their own modules).
 */
import { ApiError, askForTokenAgain, jsonBody, management } from './api.js'
import { h, replace, showStatus, type Current } from './dom.js'
import { lifecycleSection } from './lifecycle.js'
import { lockSection } from './locks.js'
import { notificationSection } from './notifications.js'
import { objectsHash } from './objects.js'
import { can } from './scope.js'

function jsonEditor (id: string, label: string, value: unknown): { field: HTMLElement, area: HTMLTextAreaElement } {
  const area = h('textarea', { id, rows: 10, spellcheck: 'false', class: 'json' })
  area.value = JSON.stringify(value, null, 2)
  return { field: h('div', { class: 'field' }, h('label', { for: id }, label), area), area }
}

/** Draws the settings of `bucket` into `root`, unless the user has gone elsewhere (`current`) by the time they are read. */
export async function renderSettings (root: HTMLElement, bucket: string, current: Current): Promise<void> {
  const path = `/${encodeURIComponent(bucket)}`
  // Each setting's outcome shows beside its control, where the eye is when it is changed.
  const statusLine = (id: string): HTMLElement => h('p', { id, role: 'status', class: 'status', 'aria-live': 'polite' })
  const publicStatus = statusLine('public-status')
  const classStatus = statusLine('storage-class-status')
  const corsStatus = statusLine('cors-status')
  const [info, managed, cors, ...sections] = await Promise.all([
    management<{ storage_class: string }>(path),
    management<{ enabled: boolean }>(`${path}/domains/managed`),
    management<unknown>(`${path}/cors`).then(a => a.result, (err: unknown) => {
      if (err instanceof ApiError && err.status === 404) return { rules: [] }
      throw err
    }),
    lifecycleSection(bucket), lockSection(bucket), notificationSection(bucket)
  ])
  if (!current()) return
  /**
   * Saves a change and says how it went in `status`; a refused one calls
   * `undo`, which puts its control back to the value stored, and one
   * refused for want of a token asks for it, as the other pages do.
   */
  const run = (status: HTMLElement, what: string, action: () => Promise<unknown>, saved = (): void => {}, undo = (): void => {}): void => {
    void action().then(() => { saved(); showStatus(status, `${what}: saved.`) },
      (err: unknown) => {
        undo()
        if (!askForTokenAgain(err, status)) showStatus(status, `${what}: ${(err as Error).message}`, true)
      })
  }

  const publicBox = h('input', { type: 'checkbox', id: 'public', 'aria-describedby': 'public-status' })
  let storedPublic = managed.result.enabled
  publicBox.checked = storedPublic
  publicBox.addEventListener('change', () => {
    const enabled = publicBox.checked
    run(publicStatus, 'Public access', async () => await management(`${path}/domains/managed`, { method: 'PUT', ...jsonBody({ enabled }) }),
      () => { storedPublic = enabled }, () => { publicBox.checked = storedPublic })
  })

  const storageClass = h('select', { id: 'storage-class', 'aria-describedby': 'storage-class-status' },
    h('option', { value: 'Standard' }, 'Standard'), h('option', { value: 'InfrequentAccess' }, 'Infrequent Access'))
  let storedClass = info.result.storage_class
  storageClass.value = storedClass
  storageClass.addEventListener('change', () => {
    const chosen = storageClass.value
    run(classStatus, 'Storage class', async () => await management(path, { method: 'PATCH', headers: { 'cf-r2-storage-class': chosen } }),
      () => { storedClass = chosen }, () => { storageClass.value = storedClass })
  })

  const corsEditor = jsonEditor('cors', 'CORS rules (JSON)', cors)
  const saveCors = h('button', { type: 'button', 'aria-describedby': 'cors-status' }, 'Save CORS rules')
  saveCors.addEventListener('click', () => {
    run(corsStatus, 'CORS rules', async () => {
      const value = JSON.parse(corsEditor.area.value) as { rules?: unknown[] }
      if (Array.isArray(value.rules) && value.rules.length === 0) return await management(`${path}/cors`, { method: 'DELETE' })
      return await management(`${path}/cors`, { method: 'PUT', ...jsonBody(value) })
    })
  })

  // Read-only credentials see the settings and change nothing.
  const writes = can('bucket:write', bucket)
  publicBox.disabled = !writes
  storageClass.disabled = !writes
  corsEditor.area.readOnly = !writes
  replace(root,
    h('nav', { 'aria-label': 'Breadcrumb', class: 'breadcrumbs' }, h('ol', {},
      h('li', {}, h('a', { href: '#/' }, 'Buckets')),
      h('li', {}, h('a', { href: objectsHash(bucket, '') }, bucket)),
      h('li', {}, h('span', { 'aria-current': 'page' }, 'Settings')))),
    h('h2', {}, `Settings of ${bucket}`),
    h('div', { class: 'field inline' }, publicBox, h('label', { for: 'public' }, 'Public: anyone may read objects without a token'), publicStatus),
    h('div', { class: 'field' }, h('label', { for: 'storage-class' }, 'Default storage class'), storageClass, classStatus),
    writes ? null : h('p', { class: 'hint' }, 'These credentials may read the settings, not change them.'),
    corsEditor.field, writes ? saveCors : null,
    corsStatus,
    ...sections)
}
