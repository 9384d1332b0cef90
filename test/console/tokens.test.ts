/**
 * The console's credential pages in a real headless Chromium, against a
 * whole server (HTTP gateway, management API and S3 port: `startServer`):
 * a token made on the tokens page, its value shown once and working, then
 * revoked and refused; an object-read-only token that is offered no write;
 * a share link made in the details panel that downloads the object with no
 * credentials, an upload link whose curl command uploads, and links that
 * were tampered with or have expired answering 403.
 */
import t from 'tap'
import { execFile } from 'node:child_process'
import { promises as fsp } from 'node:fs'
import { request } from 'node:http'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { startServer } from '../../src/index.js'
import { testdir } from '../testdir.js'
import { allowConsoleErrors, browser } from './browser.js'

const run = promisify(execFile)
const adminToken = 'console-admin-token-0123456789'
const admin = { authorization: `Bearer ${adminToken}` }

const context = await browser(t)
const server = await startServer({ token: adminToken })
t.teardown(async () => { await server.close() })
const base = server.url
const account = `${base}/client/v4/accounts/local/r2/buckets`

async function api (url: string, init: RequestInit = {}): Promise<{ status: number, body: any }> {
  const response = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...admin, ...(init.headers as Record<string, string> | undefined) } })
  return { status: response.status, body: await response.json().catch(() => null) }
}

for (const name of ['photos', 'other']) await api(account, { method: 'POST', body: JSON.stringify({ name }) })
for (const [key, body] of [['docs/readme.txt', 'read me'], ['other.txt', 'no']]) {
  await fetch(`${base}/${key === 'other.txt' ? 'other' : 'photos'}/${key}`, { method: 'PUT', headers: admin, body })
}

/** A new tab (its own sessionStorage) signed in with `token`, on the bucket list. */
async function signIn (token: string): Promise<Page> {
  // Asking whether a token is needed is a 401 without one, which Chromium logs.
  allowConsoleErrors(/status of 401 \(Unauthorized\) \(http:\/\/127\.0\.0\.1:\d+\/\)$/)
  const page = await context.newPage()
  await page.goto(`${base}/_console/`)
  await page.getByLabel('Token', { exact: true }).fill(token)
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
  return page
}

t.test('a token made on the tokens page: shown once, working, revoked', async t => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
  const page = await signIn(adminToken)
  await page.getByRole('link', { name: 'Tokens', exact: true }).click()
  await page.getByRole('heading', { name: 'Tokens', exact: true }).waitFor()

  await page.getByLabel('Name', { exact: true }).fill('ci uploader')
  await page.getByLabel('Permission', { exact: true }).selectOption('object-read-write')
  await page.getByLabel('photos', { exact: true }).check()
  await page.getByLabel('Expires after', { exact: true }).selectOption('86400')
  await page.getByRole('button', { name: 'Create token', exact: true }).click()
  const shown = page.getByTestId('new-token')
  await shown.waitFor()
  const value = await page.locator('#new-token-value').inputValue()
  const keyId = await page.locator('#new-token-key-id').inputValue()
  const secret = await page.locator('#new-token-secret').inputValue()
  t.match(value, /^[A-Za-z0-9_-]{40}$/, 'the token\'s value')
  t.match(keyId, /^[0-9a-f]{32}$/, 'its S3 access key id')
  t.match(secret, /^[0-9a-f]{64}$/, 'its S3 secret')

  await shown.getByRole('button', { name: 'Copy Token', exact: true }).click()
  await shown.getByText('Token: copied.').waitFor()
  t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), value, 'Copy puts the value on the clipboard')
  // Without the Clipboard API (a page that is no secure context), the value is left selected.
  await page.evaluate(() => { Object.defineProperty(navigator, 'clipboard', { value: undefined, configurable: true }) })
  await shown.getByRole('button', { name: 'Copy S3 secret access key', exact: true }).click()
  await shown.getByText(/S3 secret access key: selected, copy it with Ctrl\+C/).waitFor()
  t.same(await page.evaluate(() => {
    const input = document.activeElement as HTMLInputElement
    return [input.id, input.value.slice(input.selectionStart ?? 0, input.selectionEnd ?? 0)]
  }), ['new-token-secret', secret], 'the fallback selects the whole value')

  const row = page.locator(`tr[data-token="${keyId}"]`)
  await row.waitFor()
  t.match(await row.textContent(), /ci uploader.*object-read-write.*photos/, 'listed with its name, permission and buckets')
  t.notMatch(await row.textContent(), /never/, 'with its expiry')

  // The value works: the bearer on the HTTP routes, within its scope.
  const bearer = { authorization: `Bearer ${value}` }
  t.equal((await fetch(`${base}/photos/from-ci.txt`, { method: 'PUT', headers: bearer, body: 'ci' })).status, 200, 'it writes to its bucket')
  t.equal((await fetch(`${base}/other/from-ci.txt`, { method: 'PUT', headers: bearer, body: 'ci' })).status, 403, 'and not elsewhere')

  // Shown once: closed, or the page drawn again, and it is nowhere on the page.
  await shown.getByRole('button', { name: 'Done: I have copied it', exact: true }).click()
  t.equal(await page.getByTestId('new-token').count(), 0)
  await page.reload()
  await page.locator(`tr[data-token="${keyId}"]`).waitFor()
  const html = await page.content()
  t.notOk(html.includes(value) || html.includes(secret), 'neither the value nor the secret is on the page again')

  await page.locator(`tr[data-token="${keyId}"]`).getByRole('button', { name: 'Revoke token ci uploader', exact: true }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke token', exact: true }).click()
  await page.locator(`tr[data-token="${keyId}"]`).waitFor({ state: 'detached' })
  const refused = await fetch(`${base}/photos/from-ci.txt`, { headers: bearer })
  t.equal(refused.status, 403, 'a revoked token is refused')
  t.equal((await refused.json()).errors[0].code, 40300)
  await page.close()
})

t.test('an object-read-only token is offered no write, and sees its buckets only', async t => {
  const made = await api(`${base}/client/v4/user/tokens`, { method: 'POST', body: JSON.stringify({ name: 'reader', permission: 'object-read-only', buckets: ['photos'] }) })
  const page = await signIn(made.body.result.value)
  const body = page.locator('body')
  t.equal(await page.getByRole('link', { name: 'other', exact: true }).count(), 0, 'a bucket outside its scope is not listed')
  for (const name of ['Create bucket', 'Delete bucket photos']) t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no "${name}"`)
  for (const name of ['Settings', 'Tokens']) t.equal(await page.getByRole('link', { name, exact: true }).count(), 0, `no "${name}" link`)

  await page.getByRole('link', { name: 'photos', exact: true }).click()
  await page.getByRole('link', { name: 'docs/', exact: true }).click()
  await page.getByRole('button', { name: 'readme.txt', exact: true }).click()
  await page.getByTestId('details-key').waitFor()
  t.equal(await page.locator('#file-picker').count(), 0, 'no upload')
  t.equal(await page.getByText('Upload link', { exact: false }).count(), 0, 'no upload link')
  t.equal(await page.getByRole('button', { name: /^Delete/ }).count(), 0, 'no delete, of a selection or of the object')
  t.equal(await page.locator('tr.object input[type=checkbox]').count(), 0, 'nothing to select')
  t.equal(await page.getByRole('link', { name: 'Bucket settings', exact: true }).count(), 0, 'no settings')
  t.equal(await page.getByRole('button', { name: 'Share link', exact: true }).count(), 1, 'a download link may be shared: reading is what the token may do')
  t.match(await body.textContent(), /readme\.txt/)

  // A page it may not open is not drawn: the tokens page falls back to the buckets.
  await page.goto(`${base}/_console/#/tokens`)
  await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
  t.equal(await page.getByRole('heading', { name: 'Tokens', exact: true }).count(), 0)
  await page.close()
})

t.test('an admin-read-only token sees a bucket\'s settings and rules with no control that changes them', async t => {
  const made = await api(`${base}/client/v4/user/tokens`, { method: 'POST', body: JSON.stringify({ name: 'auditor', permission: 'admin-read-only' }) })
  // The settings page reads the bucket's CORS rules, which are not set (404); Chromium logs it.
  allowConsoleErrors(/status of 404 .*\/cors\)$/)
  const page = await signIn(made.body.result.value)
  await page.goto(`${base}/_console/#/settings?bucket=photos`)
  await page.getByRole('heading', { name: 'Lifecycle rules', exact: true }).waitFor()
  await page.getByText('These credentials may read the settings, not change them.').waitFor()
  for (const name of ['Save CORS rules', 'Add lifecycle rule', 'Add lock', 'Add notification rule']) {
    t.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `no "${name}"`)
  }
  t.equal(await page.locator('section.rules button.danger').count(), 0, 'no delete or remove button in the rule tables')
  t.equal(await page.locator('section.rules input[type=checkbox]:not([disabled])').count(), 0, 'no switch that can be turned')
  t.equal(await page.getByRole('button', { name: 'Refresh backlog', exact: true }).count(), 1, 'reading the backlog is left')
  await page.close()
})

t.test('a share link made in the details panel downloads with no credentials; a changed one is refused', async t => {
  const page = await signIn(adminToken)
  await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=docs%2F`)
  await page.getByRole('button', { name: 'readme.txt', exact: true }).click()
  await page.getByLabel('Link works for', { exact: true }).selectOption('604800')
  await page.getByRole('button', { name: 'Share link', exact: true }).click()
  const url = await page.locator('#share-url').inputValue()
  const link = new URL(url)
  t.equal(link.origin, server.s3.endpoint, 'on the S3 port')
  t.equal(link.searchParams.get('X-Amz-Expires'), '604800', 'for the chosen 7 days')
  const download = await fetch(url)
  t.equal(download.status, 200)
  t.equal(await download.text(), 'read me', 'the object, with no credentials')

  const tampered = new URL(url)
  tampered.pathname = '/photos/other.txt'
  t.equal((await fetch(tampered)).status, 403, 'another key with the same signature')
  const signature = link.searchParams.get('X-Amz-Signature') ?? ''
  const forged = url.replace(signature, `${signature[0] === '0' ? '1' : '0'}${signature.slice(1)}`)
  t.equal((await fetch(forged)).status, 403, 'a changed signature')
  t.equal((await fetch(url, { method: 'PUT', body: 'x' })).status, 403, 'another method')

  // The token behind it is on the tokens page, and revoking it ends the link.
  const tokenId = link.searchParams.get('X-Amz-Credential')?.split('/')[0] ?? ''
  await page.goto(`${base}/_console/#/tokens`)
  const row = page.locator(`tr[data-token="${tokenId}"]`)
  t.match(await row.textContent(), /share photos\/docs\/readme\.txt.*object-read-only/)
  await row.getByRole('button', { name: /^Revoke/ }).click()
  await page.getByRole('dialog').getByRole('button', { name: 'Revoke token', exact: true }).click()
  await row.waitFor({ state: 'detached' })
  t.equal((await fetch(url)).status, 403, 'revoked: the link is refused')
  await page.close()
})

t.test('a share link for a key with a dot segment says browsers cannot use it, and its command downloads', async t => {
  // Sent as written: fetch would resolve the `.` before sending.
  const put = await new Promise<number>((resolve, reject) => {
    const { hostname, port } = new URL(base)
    request({ hostname, port, path: '/photos/docs/./dotted.txt', method: 'PUT', headers: admin }, res => { res.resume(); resolve(res.statusCode ?? 0) })
      .on('error', reject).end('dotted')
  })
  t.equal(put, 200)
  const page = await signIn(adminToken)
  await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=docs%2F.%2F`)
  await page.getByRole('button', { name: 'dotted.txt', exact: true }).click()
  await page.getByRole('button', { name: 'Share link', exact: true }).click()
  const url = await page.locator('#share-url').inputValue()
  const command = await page.locator('#share-curl').inputValue()
  t.equal(command, `curl --path-as-is -o 'dotted.txt' '${url}'`)
  t.match(await page.locator('section.share .share-result').textContent(), /a browser removes it from the link and the server answers 403/, 'the panel says why the link alone fails')
  const dir = testdir(t)
  await run('sh', ['-c', `${command} --fail --silent --show-error`], { cwd: dir })
  t.equal(await fsp.readFile(path.join(dir, 'dotted.txt'), 'utf8'), 'dotted', 'the command downloads the object')

  await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=docs%2F`)
  await page.getByRole('button', { name: 'readme.txt', exact: true }).click()
  await page.getByRole('button', { name: 'Share link', exact: true }).click()
  await page.locator('#share-curl').waitFor()
  t.notMatch(await page.locator('section.share .share-result').textContent(), /browser removes/, 'nothing of the kind for a plain key')
  await page.close()
})

t.test('an expired share link answers 403', async t => {
  const made = await api(`${account}/photos/share-links`, { method: 'POST', body: JSON.stringify({ key: 'docs/readme.txt', expires_in: 3 }) })
  t.equal((await fetch(made.body.result.url)).status, 200, 'within its seconds (3 from the next whole second it is signed at)')
  await new Promise(resolve => setTimeout(resolve, 4100))
  t.equal((await fetch(made.body.result.url)).status, 403, 'past its expiry')
})

t.test('an upload link made on the bucket page takes a PUT, and its curl command works', async t => {
  const page = await signIn(adminToken)
  await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=incoming%2F`)
  await page.getByText('Upload link: let someone without a token upload one file').click()
  t.equal(await page.getByLabel('Key', { exact: true }).inputValue(), 'incoming/', 'the key starts with the current folder')
  await page.getByLabel('Key', { exact: true }).fill('incoming/report 1.txt')
  await page.getByRole('button', { name: 'Upload link', exact: true }).click()
  const url = await page.locator('#upload-link-url').inputValue()
  const command = await page.locator('#upload-link-curl').inputValue()
  t.equal(command, `curl -T 'report 1.txt' '${url}'`)

  const dir = testdir(t)
  await fsp.writeFile(path.join(dir, 'report 1.txt'), 'uploaded by curl')
  await run('sh', ['-c', `${command} --fail --silent --show-error`], { cwd: dir })
  const stored = await fetch(`${base}/photos/incoming/report%201.txt`, { headers: admin })
  t.equal(await stored.text(), 'uploaded by curl', 'the curl command uploaded the file')

  t.equal((await fetch(url, { method: 'PUT', body: 'again' })).status, 200, 'a plain PUT with the link, no credentials')
  const elsewhere = new URL(url)
  elsewhere.pathname = '/photos/incoming/other.txt'
  t.equal((await fetch(elsewhere, { method: 'PUT', body: 'x' })).status, 403, 'the link uploads that key only')
  t.equal((await fetch(`${base}/photos/incoming/other.txt`, { method: 'HEAD', headers: admin })).status, 404)
  await page.close()
})

t.test('the tokens page shows every token, past the API\'s pages of 50', async t => {
  const before = (await api(`${base}/client/v4/user/tokens?per_page=50`)).body.result_info.total_count as number
  for (let i = 0; i < 55; i++) await api(`${base}/client/v4/user/tokens`, { method: 'POST', body: JSON.stringify({ name: `many-${i}`, permission: 'object-read-only' }) })
  const page = await signIn(adminToken)
  await page.getByRole('link', { name: 'Tokens', exact: true }).click()
  await page.getByRole('cell', { name: 'many-54', exact: true }).waitFor()
  t.equal(await page.locator('tbody tr').count(), before + 55, 'a row for each, the last page included')
  await page.close()
})
