/**
 * Share links: a presigned URL on the S3 port that downloads one object
 * (the details panel's "Share link") or uploads one (the bucket page's
 * "Upload link"), each with the curl command that uses it, for 1 hour,
 * 1 day or 7 days. The server makes and signs them (the management API's
 * `POST .../buckets/{bucket}/share-links`): the console holds no S3
 * secret, and the server refuses a link for what the signed-in token may
 * not do itself. Each link has a token of its own; the tokens page lists
 * it (`share <bucket>/<key>`) and revoking it ends the link.
 */
import { hasDotSegment, jsonBody, management } from './api.js'
import { copyableField } from './copy.js'
import { formatDate, h, replace, showStatus } from './dom.js'
import { shownName } from './names.js'
import { can } from './scope.js'

interface MadeLink {
  url: string
  expires_on: string
  token_id: string
  curl: string
}

/** Why the link of a key with a dot segment works with its command only. */
const noBrowser = 'This key has a "." or ".." segment: a browser removes it from the link and the server answers 403. Use the command, which keeps it (curl --path-as-is).'

const lifetimes: Array<[number, string]> = [[3600, '1 hour'], [86_400, '1 day'], [604_800, '7 days']]

function lifetimeSelect (id: string): HTMLSelectElement {
  return h('select', { id }, ...lifetimes.map(([seconds, label]) => h('option', { value: seconds }, label)))
}

async function makeLink (bucket: string, key: string, method: 'GET' | 'PUT', seconds: number): Promise<MadeLink> {
  return (await management<MadeLink>(`/${encodeURIComponent(bucket)}/share-links`, { method: 'POST', ...jsonBody({ key, method, expires_in: seconds }) })).result
}

/**
 * A command as the page shows it (and copies it): its bidirectional
 * controls written as `\uHHHH`, as keys are (`shownName`), lest one
 * reorder what the reader sees of it. The URL is percent-encoded and keeps
 * none; the file name taken from the key may.
 */
function shownCommand (curl: string): string {
  return shownName(curl)
}

/** How a link ends before its time: revoking its token, which only credentials that may see the tokens page can do. */
function sooner (tokenId: string): string {
  return can('account:write')
    ? `Revoking the token ${tokenId} on the tokens page ends it sooner.`
    : `An admin can end it sooner by revoking its token, ${tokenId}.`
}

/** The details panel's "Share link": a download link for `key`. */
export function shareLinkSection (bucket: string, key: string): HTMLElement {
  const status = h('p', { role: 'status', class: 'status' })
  const result = h('div', { class: 'share-result' })
  const lifetime = lifetimeSelect('share-expiry')
  const make = h('button', { type: 'button' }, 'Share link')
  make.addEventListener('click', () => {
    void (async () => {
      make.disabled = true
      try {
        const link = await makeLink(bucket, key, 'GET', Number(lifetime.value))
        const browsable = !hasDotSegment(key)
        replace(result, copyableField('share-url', 'Share link', link.url, status),
          copyableField('share-curl', 'Download command', shownCommand(link.curl), status),
          ...browsable ? [] : [h('p', { class: 'hint error' }, noBrowser)],
          h('p', { class: 'hint' }, `Anyone with this link can download the object until ${formatDate(link.expires_on)}. ${sooner(link.token_id)}`))
        showStatus(status, browsable ? 'Share link made.' : 'Share link made: a browser cannot open it; use its command.')
      } catch (err) {
        showStatus(status, `Share link failed: ${(err as Error).message}`, true)
      } finally {
        make.disabled = false
      }
    })()
  })
  return h('section', { class: 'share', 'aria-label': 'Share link' },
    h('div', { class: 'inline' }, h('label', { for: 'share-expiry' }, 'Link works for'), lifetime, make),
    result, status)
}

/** The bucket page's "Upload link": a presigned PUT of a key under `prefix`, and its curl command. */
export function uploadLinkSection (bucket: string, prefix: string): HTMLElement {
  const status = h('p', { role: 'status', class: 'status' })
  const result = h('div', { class: 'share-result' })
  const key = h('input', { id: 'upload-link-key', required: true, autocomplete: 'off', spellcheck: 'false' })
  key.value = prefix
  const lifetime = lifetimeSelect('upload-link-expiry')
  const form = h('form', { class: 'create' },
    h('label', { for: 'upload-link-key' }, 'Key'), key,
    h('label', { for: 'upload-link-expiry' }, 'works for'), lifetime,
    h('button', { type: 'submit' }, 'Upload link'))
  form.addEventListener('submit', event => {
    event.preventDefault()
    void (async () => {
      try {
        const link = await makeLink(bucket, key.value, 'PUT', Number(lifetime.value))
        replace(result, copyableField('upload-link-url', 'Upload link', link.url, status),
          copyableField('upload-link-curl', 'Upload command', shownCommand(link.curl), status),
          h('p', { class: 'hint' }, `Anyone with this link can upload ${shownName(key.value)} (replacing it) until ${formatDate(link.expires_on)}. ${sooner(link.token_id)}`))
        showStatus(status, 'Upload link made.')
      } catch (err) {
        showStatus(status, `Upload link failed: ${(err as Error).message}`, true)
      }
    })()
  })
  return h('details', { class: 'upload-link' },
    h('summary', {}, 'Upload link: let someone without a token upload one file'),
    form, result, status)
}
