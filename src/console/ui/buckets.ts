/**
 * The bucket list: name, creation date, public or private; create a bucket
 * and delete an empty one (with confirmation), through the management API.
 */
import { askForTokenAgain, gateway, isPublic, jsonBody, listBuckets, listObjects, management, type BucketSummary } from './api.js'
import { confirmDialog, formatDate, h, replace, showStatus } from './dom.js'
import { objectsHash } from './objects.js'
import { can } from './scope.js'

/** The buckets an object token may see: the gateway's list (the server leaves out the others); the management API's list is the admins'. */
async function visibleBuckets (): Promise<BucketSummary[]> {
  if (can('bucket:read')) return await listBuckets()
  const answer = await gateway<Array<{ name: string, creationDate: string }>>('/')
  return answer.result.map(b => ({ name: b.name, creation_date: b.creationDate, storage_class: 'Standard' }))
}

/** Draws the bucket list into `root` at once (no answer awaited first: nothing late to draw over another view); its rows come once read. */
export async function renderBuckets (root: HTMLElement): Promise<void> {
  const status = h('p', { role: 'status', class: 'status', 'aria-live': 'polite' })
  const rows = h('tbody')
  const name = h('input', { id: 'new-bucket', required: true, pattern: '[a-z0-9][a-z0-9\\-]{1,61}[a-z0-9]', autocomplete: 'off', 'aria-describedby': 'bucket-rule' })

  async function load (): Promise<void> {
    const buckets = await visibleBuckets()
    // Whether a bucket is public is a setting: only admins may read it.
    const publics = await Promise.all(buckets.map(async b => can('bucket:read') && await isPublic(b.name).catch(() => false)))
    replace(rows, ...buckets.map((bucket, i) => {
      const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete bucket ${bucket.name}` }, 'Delete')
      remove.addEventListener('click', () => {
        void (async () => {
          // Only an empty bucket can be deleted: say so instead of offering a delete that fails.
          const listed = await listObjects(bucket.name, '', null, 1).catch(() => null)
          if (listed !== null && (listed.objects.length > 0 || listed.folders.length > 0)) {
            showStatus(status, `The bucket ${bucket.name} is not empty: delete its objects first.`, true)
            return
          }
          if (!await confirmDialog(`Delete the bucket ${bucket.name}?`, ['It is empty.'], 'Delete bucket')) return
          try {
            await management(`/${encodeURIComponent(bucket.name)}`, { method: 'DELETE' })
          } catch (err) {
            if (!askForTokenAgain(err, status)) showStatus(status, `Delete failed: ${(err as Error).message}`, true)
            return
          }
          showStatus(status, `Deleted the bucket ${bucket.name}.`)
          await reloadAfter(`Deleted the bucket ${bucket.name}.`)
        })()
      })
      return h('tr', { 'data-bucket': bucket.name },
        h('td', {}, h('a', { href: objectsHash(bucket.name, '') }, bucket.name)),
        h('td', {}, formatDate(bucket.creation_date)),
        h('td', {}, publics[i] ? h('span', { class: 'badge' }, 'public') : h('span', { class: 'badge private' }, 'private')),
        h('td', {}, can('bucket:read') ? h('a', { href: `#/settings?${new URLSearchParams({ bucket: bucket.name }).toString()}` }, 'Settings') : null, ' ',
          can('bucket:write') ? remove : null))
    }))
    if (buckets.length === 0) replace(rows, h('tr', {}, h('td', { colspan: 4, class: 'empty' }, can('bucket:write') ? 'No bucket yet: create one.' : 'No bucket these credentials may see.')))
  }

  /** Lists the buckets again after `done`, saying so when that fails: what was done is done. */
  async function reloadAfter (done: string): Promise<void> {
    try {
      await load()
    } catch (err) {
      if (!askForTokenAgain(err, status)) showStatus(status, `${done} The list could not be read again: ${(err as Error).message}`, true)
    }
  }

  const create = h('form', { class: 'create' },
    h('label', { for: 'new-bucket' }, 'New bucket'), name,
    h('button', { type: 'submit' }, 'Create bucket'),
    h('span', { id: 'bucket-rule', class: 'hint' }, '3 to 63 lowercase letters, digits and hyphens.'))
  // A name the browser refuses never submits: the alert of an earlier attempt goes, lest it seem to be this one's.
  name.addEventListener('invalid', () => { showStatus(status, '') })
  create.addEventListener('submit', event => {
    event.preventDefault()
    showStatus(status, '')
    void (async () => {
      const made = name.value
      try {
        await management('', { method: 'POST', ...jsonBody({ name: made }) })
      } catch (err) {
        if (!askForTokenAgain(err, status)) showStatus(status, `Create failed: ${(err as Error).message}`, true)
        return
      }
      showStatus(status, `Created the bucket ${made}.`)
      name.value = ''
      await reloadAfter(`Created the bucket ${made}.`)
    })()
  })

  replace(root,
    h('h2', {}, 'Buckets'),
    can('bucket:write') ? create : null,
    h('table', { class: 'buckets' },
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Created'), h('th', { scope: 'col' }, 'Access'), h('th', { scope: 'col' }, 'Actions'))),
      rows),
    status)
  await load()
}
