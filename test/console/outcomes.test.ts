/**
 * What the console says and shows, in a real headless Chromium against a
 * listening gateway: names that are anyone's text (a token's, an uploaded
 * file's, the file name in a share link's command) with their
 * bidirectional controls written as \uHHHH, as keys are; a setting the
 * server refused put back to the value stored; a create or revoke that
 * was done but whose list could not be read again said as done; a content
 * type that could not be read said so; and the hint about ending a share
 * link sooner told in the words that fit the signed-in token. Failures and
 * other credentials are made with Playwright's request routing.
 */
import t, { type Test } from 'tap'
import type { Page, Route } from 'playwright-core'
import { allowConsoleErrors, browser, listeningGateway } from './browser.js'

const context = await browser(t)
const { base, registry } = await listeningGateway(t, null)
const photos = await registry.open('photos')
if (photos === null) throw new Error('no bucket')
await photos.put('name\u202etxt.exe', 'x')
await photos.put('plain.bin', 'x')

/** Every bidirectional control the console writes as \uHHHH. */
const bidi = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

/** The management API from outside the page (no token on this server: any bearer is accepted). */
async function api (method: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${base}/client/v4${path}`, {
    method,
    headers: { authorization: 'Bearer outside', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  return await response.json()
}

/** A new page at `hash` of the console, closed at the end of `t`. */
async function open (t: Test, hash: string): Promise<Page> {
  const page = await context.newPage()
  t.teardown(async () => { await page.close() })
  await page.goto(`${base}/_console/${hash}`)
  return page
}

/** An error answer in the management API's envelope. */
async function refuse (route: Route, status = 500): Promise<void> {
  await route.fulfill({ status, contentType: 'application/json', body: JSON.stringify({ success: false, errors: [{ code: 10001, message: 'simulated failure' }], messages: [], result: null }) })
}

/** A share link's answer whose command names a file with a U+202E in it, as a server may. */
async function madeLink (route: Route): Promise<void> {
  await route.fulfill({
    status: 200,
    contentType: 'application/json',
    body: JSON.stringify({
      success: true,
      errors: [],
      messages: [],
      result: { url: 'http://127.0.0.1:9/photos/name%E2%80%AEtxt.exe?X-Amz-Signature=0', expires_on: '2030-01-01T00:00:00Z', token_id: 'f'.repeat(32), curl: 'curl -o \'name\u202etxt.exe\' \'http://127.0.0.1:9/photos/name%E2%80%AEtxt.exe?X-Amz-Signature=0\'' }
    })
  })
}

/** Signed in as `permission` (on every bucket), as the verify route answers. */
async function as (page: Page, permission: string): Promise<void> {
  await page.route(/\/client\/v4\/user\/tokens\/verify$/, async route => {
    await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ success: true, errors: [], messages: [], result: { id: 'x', status: 'active', permission, buckets: null } }) })
  })
}

t.test('bidirectional controls are written as \\uHHHH', async t => {
  await t.test('in the tokens table, the revoke dialog and the status line', async t => {
    const made = await api('POST', '/user/tokens', { name: 'evil\u202egnp.exe', permission: 'object-read-only' })
    const page = await open(t, '#/tokens')
    const row = page.locator(`tr[data-token="${made.result.id as string}"]`)
    await row.waitFor()
    const cell = await row.locator('td').first().textContent()
    t.equal(cell, 'evil\\u202egnp.exe', 'the table')
    await row.getByRole('button', { name: 'Revoke token evil\\u202egnp.exe', exact: true }).click()
    const question = await page.getByRole('dialog').locator('h2').textContent()
    t.equal(question, 'Revoke the token evil\\u202egnp.exe?', 'the dialog')
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token', exact: true }).click()
    const said = page.getByText(/^Revoked the token /)
    await said.waitFor()
    t.equal(await said.textContent(), 'Revoked the token evil\\u202egnp.exe.', 'the status line')
    t.notMatch(await page.locator('main').textContent(), bidi, 'no raw control anywhere on the page')
  })

  await t.test('in the share link\'s and the upload link\'s commands', async t => {
    const page = await open(t, '#/objects?bucket=photos&prefix=')
    await page.route(/\/share-links$/, madeLink)
    await page.getByRole('button', { name: 'name\\u202etxt.exe', exact: true }).click()
    await page.locator('aside.details').getByRole('button', { name: 'Share link', exact: true }).click()
    await page.locator('#share-curl').waitFor()
    const shared = await page.locator('#share-curl').inputValue()
    t.notMatch(shared, bidi, 'no raw control in the download command')
    t.match(shared, /'name\\u202etxt\.exe'/, 'written as \\u202e')

    await page.getByText('Upload link: let someone without a token upload one file').click()
    await page.getByLabel('Key', { exact: true }).fill('up\u2066load')
    await page.getByRole('button', { name: 'Upload link', exact: true }).click()
    await page.locator('#upload-link-curl').waitFor()
    t.notMatch(await page.locator('#upload-link-curl').inputValue(), bidi, 'none in the upload command')
    t.notMatch(await page.locator('details.upload-link').textContent(), bidi, 'nor in its hint')
    t.match(await page.locator('details.upload-link').textContent(), /upload up\\u2066load \(replacing it\)/)
  })

  await t.test('in an upload\'s row', async t => {
    const page = await open(t, '#/objects?bucket=photos&prefix=')
    await page.getByRole('button', { name: 'plain.bin', exact: true }).waitFor()
    await page.setInputFiles('#file-picker', { name: 'photo\u202egpj.exe', mimeType: 'application/octet-stream', buffer: Buffer.from('x') })
    const name = page.locator('li.upload .upload-name')
    await name.waitFor()
    t.equal(await name.textContent(), 'photo\\u202egpj.exe')
    await page.locator('li.upload.done').waitFor()
    t.ok(await photos.head('photo\u202egpj.exe') !== null, 'stored under the name itself')
  })
})

t.test('a setting the server refused is put back to the value stored', async t => {
  allowConsoleErrors(/status of 500/, /status of 404 .*\/cors\)$/)
  const page = await open(t, '#/settings?bucket=photos')
  const box = page.getByLabel('Public: anyone may read objects without a token')
  await box.waitFor()
  await page.route(/\/r2\/buckets\/photos(\/domains\/managed)?$/, async route => {
    if (['PUT', 'PATCH'].includes(route.request().method())) return await refuse(route)
    await route.continue()
  })
  // Each outcome shows in the field of the control changed, not below the CORS rules where the eye is not.
  const boxField = page.locator('div.field', { has: box })
  t.equal(await boxField.getByRole('status').getAttribute('aria-live'), 'polite', 'the switch has a status line of its own, read out')
  t.equal(await box.isChecked(), false)
  await box.click()
  await boxField.getByRole('alert').filter({ hasText: /^Public access: simulated failure$/ }).waitFor()
  t.equal(await box.isChecked(), false, 'the checkbox is unticked again')
  t.equal((await api('GET', '/accounts/local/r2/buckets/photos/domains/managed')).result.enabled, false, 'as stored')

  const select = page.getByLabel('Default storage class')
  const selectField = page.locator('div.field', { has: select })
  await select.selectOption('InfrequentAccess')
  await selectField.getByRole('alert').filter({ hasText: /^Storage class: simulated failure$/ }).waitFor()
  t.equal(await select.inputValue(), 'Standard', 'the storage class is the stored one again')
  t.equal(await boxField.getByRole('alert').textContent(), 'Public access: simulated failure', 'the switch keeps its own outcome')

  // A change that is saved is the one a later failure goes back to.
  await page.unroute(/\/r2\/buckets\/photos(\/domains\/managed)?$/)
  await box.click()
  await boxField.getByRole('status').filter({ hasText: /^Public access: saved\.$/ }).waitFor()
  t.equal(await box.getAttribute('aria-describedby').then(id => page.locator(`#${id ?? ''}`).textContent()), 'Public access: saved.', 'and describes the switch')
  await select.selectOption('InfrequentAccess')
  await selectField.getByRole('status').filter({ hasText: /^Storage class: saved\.$/ }).waitFor()
  t.equal((await api('GET', '/accounts/local/r2/buckets/photos')).result.storage_class, 'InfrequentAccess', 'stored')
  await registry.updateSettings('photos', { storageClass: 'Standard' })
  await page.route(/\/r2\/buckets\/photos\/domains\/managed$/, async route => { await refuse(route) })
  await box.click()
  await page.getByText('Public access: simulated failure').waitFor()
  t.equal(await box.isChecked(), true, 'ticked, as saved')
  await api('PUT', '/accounts/local/r2/buckets/photos/domains/managed', { enabled: false })
})

t.test('made or revoked, then the list could not be read: said as done', async t => {
  await t.test('a bucket', async t => {
    allowConsoleErrors(/status of 500/)
    const page = await open(t, '#/')
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
    await page.route(/\/r2\/buckets(\?|$)/, async route => {
      if (route.request().method() === 'GET') return await refuse(route)
      await route.continue()
    })
    await page.getByLabel('New bucket').fill('made-here')
    await page.getByRole('button', { name: 'Create bucket', exact: true }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    t.equal(await alert.textContent(), 'Created the bucket made-here. The list could not be read again: simulated failure')
    t.ok(await registry.open('made-here') !== null, 'the bucket was made')
  })

  await t.test('a token made and one revoked', async t => {
    allowConsoleErrors(/status of 500/)
    const page = await open(t, '#/tokens')
    await page.getByRole('heading', { name: 'Tokens', exact: true }).waitFor()
    const other = await api('POST', '/user/tokens', { name: 'to revoke', permission: 'object-read-only' })
    await page.route(/\/user\/tokens\?/, async route => { await refuse(route) })
    await page.getByLabel('Name', { exact: true }).fill('made here')
    await page.getByRole('button', { name: 'Create token', exact: true }).click()
    await page.getByTestId('new-token').waitFor()
    const alert = page.locator('main > p.status')
    await alert.filter({ hasText: 'could not be read' }).waitFor()
    t.equal(await alert.textContent(), 'Created the token made here. The list could not be read again: simulated failure')
    t.ok((await api('GET', '/user/tokens')).result.some((token: { name: string }) => token.name === 'made here'), 'the token was made')

    await page.unroute(/\/user\/tokens\?/)
    await page.reload()
    const row = page.locator(`tr[data-token="${other.result.id as string}"]`)
    await row.waitFor()
    await page.route(/\/user\/tokens\?/, async route => { await refuse(route) })
    await row.getByRole('button', { name: 'Revoke token to revoke', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke token', exact: true }).click()
    await alert.filter({ hasText: 'could not be read' }).waitFor()
    t.equal(await alert.textContent(), 'Revoked the token to revoke. The list could not be read again: simulated failure')
  })
})

t.test('a content type that could not be read is not "none stored"', async t => {
  allowConsoleErrors(/status of 500/)
  const page = await open(t, '#/objects?bucket=photos&prefix=')
  await page.route(/\/photos\/plain\.bin$/, async route => {
    if (route.request().method() === 'HEAD') return await route.fulfill({ status: 500 })
    await route.continue()
  })
  await page.getByRole('button', { name: 'plain.bin', exact: true }).click()
  const type = page.getByTestId('details-type')
  await type.filter({ hasNotText: '…' }).waitFor()
  t.match(await type.textContent(), /^could not be read \(500/)
})

t.test('ending a share link sooner, in the words that fit the token', async t => {
  for (const [permission, hint] of [
    ['admin-read-write', /Revoking the token f{32} on the tokens page ends it sooner\./],
    ['object-read-write', /An admin can end it sooner by revoking its token, f{32}\./],
    ['object-read-only', /An admin can end it sooner by revoking its token, f{32}\./]
  ] as const) {
    await t.test(permission, async t => {
      const page = await context.newPage()
      t.teardown(async () => { await page.close() })
      await as(page, permission)
      await page.route(/\/share-links$/, madeLink)
      await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=`)
      await page.getByRole('button', { name: 'plain.bin', exact: true }).click()
      await page.locator('aside.details').getByRole('button', { name: 'Share link', exact: true }).click()
      const shown = page.locator('aside.details .share-result')
      await shown.locator('#share-curl').waitFor()
      t.match(await shown.textContent(), hint)
      if (permission !== 'admin-read-write') t.notMatch(await shown.textContent(), /tokens page/, 'no word of a page it cannot open')
    })
  }
})
