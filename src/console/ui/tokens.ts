/**
 * The tokens page (`#/tokens`, for admin read-write credentials): the
 * scoped tokens of the server (name, id, permission, buckets, expiry; the
 * management API never answers a secret), a form that makes one, and
 * revoke after a confirmation, through `/client/v4/user/tokens`.
 *
 * A new token's value and its S3 key pair are in the creation's answer and
 * nowhere else: they are shown once, in a panel with copy buttons, kept in
 * no storage, and gone when the panel is closed or the page left.
 */
import { askForTokenAgain, jsonBody, listBuckets, userApi } from './api.js'
import { copyableField } from './copy.js'
import { confirmDialog, formatDate, h, replace, showStatus, type Current } from './dom.js'
import { shownName } from './names.js'
import type { Permission } from './scope.js'

interface ListedToken {
  id: string
  name: string
  status: 'active' | 'expired'
  expires_on?: string
  permission: Permission
  buckets: string[] | null
}

interface CreatedToken extends ListedToken {
  value: string
  accessKeyId: string
  secretAccessKey: string
}

const permissionChoices: Array<[Permission, string]> = [
  ['object-read-only', 'Object read only: list and read objects'],
  ['object-read-write', 'Object read and write: list, read, write and delete objects'],
  ['admin-read-only', 'Admin read only: every bucket, its settings and objects, read only'],
  ['admin-read-write', 'Admin read and write: everything, tokens included']
]

/** Lifetimes offered, in seconds (0: never expires). */
const expiryChoices: Array<[number, string]> = [
  [0, 'Never'], [3600, '1 hour'], [86_400, '1 day'], [7 * 86_400, '7 days'], [30 * 86_400, '30 days'], [90 * 86_400, '90 days'], [365 * 86_400, '1 year']
]

/** The panel that shows a new token once. */
function createdPanel (made: CreatedToken, onClose: () => void): HTMLElement {
  const status = h('p', { role: 'status', class: 'status' })
  const done = h('button', { type: 'button' }, 'Done: I have copied it')
  done.addEventListener('click', onClose)
  return h('section', { class: 'once', 'aria-labelledby': 'once-title', 'data-testid': 'new-token' },
    h('h3', { id: 'once-title', tabindex: -1 }, `Token "${shownName(made.name)}" created`),
    h('p', { role: 'alert' }, 'Copy the token now: it is shown only this once and cannot be read again.'),
    copyableField('new-token-value', 'Token', made.value, status),
    copyableField('new-token-key-id', 'S3 access key id', made.accessKeyId, status),
    copyableField('new-token-secret', 'S3 secret access key', made.secretAccessKey, status),
    h('p', { class: 'hint' }, 'The token goes in Authorization: Bearer on the HTTP routes, the console and the management API; the key pair signs S3 requests.'),
    done, status)
}

function tokenRow (token: ListedToken, onRevoke: (token: ListedToken) => void): HTMLElement {
  const revoke = h('button', { type: 'button', class: 'danger', 'aria-label': `Revoke token ${shownName(token.name)}` }, 'Revoke')
  revoke.addEventListener('click', () => { onRevoke(token) })
  // A name is anyone's text (a share link's names its key): its bidirectional controls are written as \uHHHH, as keys are.
  return h('tr', { 'data-token': token.id },
    h('td', {}, shownName(token.name)),
    h('td', { class: 'mono' }, token.id),
    h('td', {}, token.permission),
    h('td', {}, token.buckets === null ? 'all' : token.buckets.join(', ')),
    h('td', {}, token.expires_on === undefined ? 'never' : formatDate(token.expires_on),
      token.status === 'expired' ? h('span', { class: 'badge private' }, ' expired') : null),
    h('td', {}, revoke))
}

/** Draws the tokens page into `root`, unless the user has gone elsewhere (`current`) by the time the buckets are read. */
export async function renderTokens (root: HTMLElement, current: Current): Promise<void> {
  const status = h('p', { role: 'status', class: 'status', 'aria-live': 'polite' })
  const rows = h('tbody')
  const once = h('div', { class: 'once-slot' })

  async function load (): Promise<void> {
    // Every page: one share link is one token, so there can be many.
    const listed: ListedToken[] = []
    for (let page = 1; ; page++) {
      const answer = await userApi<ListedToken[]>(`/user/tokens?per_page=50&page=${page}`)
      listed.push(...answer.result)
      if (answer.result.length === 0 || page >= Number(answer.result_info?.total_pages ?? 1)) break
    }
    replace(rows, ...listed.map(token => tokenRow(token, revoke)))
    if (listed.length === 0) replace(rows, h('tr', {}, h('td', { colspan: 6, class: 'empty' }, 'No scoped token yet.')))
  }

  /**
   * Lists the tokens again after `done`, saying so when that fails: what
   * was done is done. A refusal for want of a token asks for it, unless
   * `keepShown` (after a create: the prompt would take away the panel
   * showing its secret, which is shown only once).
   */
  async function reloadAfter (done: string, keepShown = false): Promise<void> {
    try {
      await load()
    } catch (err) {
      if (keepShown || !askForTokenAgain(err, status)) showStatus(status, `${done} The list could not be read again: ${(err as Error).message}`, true)
    }
  }

  function revoke (token: ListedToken): void {
    const named = shownName(token.name)
    void (async () => {
      if (!await confirmDialog(`Revoke the token ${named}?`, [token.id, 'Its key pair, and every link or temporary credential made with it, stop working.'], 'Revoke token')) return
      try {
        await userApi(`/user/tokens/${encodeURIComponent(token.id)}`, { method: 'DELETE' })
      } catch (err) {
        if (!askForTokenAgain(err, status)) showStatus(status, `Revoke failed: ${(err as Error).message}`, true)
        return
      }
      showStatus(status, `Revoked the token ${named}.`)
      await reloadAfter(`Revoked the token ${named}.`)
    })()
  }

  const name = h('input', { id: 'token-name', required: true, maxlength: 120, autocomplete: 'off' })
  const permission = h('select', { id: 'token-permission' }, ...permissionChoices.map(([value, label]) => h('option', { value }, label)))
  const expiry = h('select', { id: 'token-expiry' }, ...expiryChoices.map(([seconds, label]) => h('option', { value: seconds }, label)))
  const bucketBoxes = h('fieldset', { class: 'bucket-choice' }, h('legend', {}, 'Buckets (none ticked: every bucket)'))
  const buckets = await listBuckets()
  if (!current()) return
  for (const bucket of buckets) {
    const id = `token-bucket-${bucket.name}`
    bucketBoxes.append(h('label', { for: id, class: 'inline' }, h('input', { type: 'checkbox', id, value: bucket.name }), bucket.name))
  }
  // Admin permissions cover every bucket: the server refuses a list with them.
  const syncBuckets = (): void => {
    bucketBoxes.disabled = permission.value.startsWith('admin-')
  }
  permission.addEventListener('change', syncBuckets)
  syncBuckets()

  const form = h('form', { class: 'token-form', 'aria-labelledby': 'token-form-title' },
    h('h3', { id: 'token-form-title' }, 'Create a token'),
    h('div', { class: 'field' }, h('label', { for: 'token-name' }, 'Name'), name),
    h('div', { class: 'field' }, h('label', { for: 'token-permission' }, 'Permission'), permission),
    bucketBoxes,
    h('div', { class: 'field' }, h('label', { for: 'token-expiry' }, 'Expires after'), expiry),
    h('button', { type: 'submit' }, 'Create token'))
  form.addEventListener('submit', event => {
    event.preventDefault()
    void (async () => {
      const chosen = bucketBoxes.disabled ? [] : Array.from(bucketBoxes.querySelectorAll<HTMLInputElement>('input:checked'), box => box.value)
      const seconds = Number(expiry.value)
      // None chosen: every bucket, said by leaving the list out (the API refuses an empty one).
      const body: Record<string, unknown> = { name: name.value, permission: permission.value, ...(chosen.length > 0 ? { buckets: chosen } : {}) }
      if (seconds > 0) body.expires_on = new Date(Date.now() + seconds * 1000).toISOString()
      let made: CreatedToken
      try {
        made = (await userApi<CreatedToken>('/user/tokens', { method: 'POST', ...jsonBody(body) })).result
      } catch (err) {
        if (!askForTokenAgain(err, status)) showStatus(status, `Create failed: ${(err as Error).message}`, true)
        return
      }
      name.value = ''
      showStatus(status, `Created the token ${shownName(made.name)}.`)
      replace(once, createdPanel(made, () => { replace(once); name.focus() }))
      once.querySelector<HTMLElement>('h3')?.focus()
      await reloadAfter(`Created the token ${shownName(made.name)}.`, true)
    })()
  })

  replace(root,
    h('h2', {}, 'Tokens'),
    h('p', { class: 'hint' }, 'Scoped tokens work on the HTTP routes, this console and the management API (as a bearer token), and on the S3 port (as their key pair). Their secrets are never shown again after creation.'),
    once,
    form,
    h('table', { class: 'tokens' },
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col' }, 'Permission'),
        h('th', { scope: 'col' }, 'Buckets'), h('th', { scope: 'col' }, 'Expires'), h('th', { scope: 'col' }, 'Actions'))),
      rows),
    status)
  await load()
}
