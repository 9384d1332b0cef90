/**
 * The web console when things go wrong, in a real headless Chromium against
 * a listening gateway: a bulk delete a bucket lock partly refuses, one
 * whose answer does not say what it deleted, an upload
 * of several files of which one fails, a download with the token that the
 * server refuses or that never arrives, a token that stops working
 * mid-session (browsing, or changing a bucket's settings), Cancel at each
 * step of a multipart upload, a part that fails while others are in
 * flight; and the details panel giving the focus back
 * when it closes. Failures are forced with Playwright's request routing
 * where the gateway would not fail on its own.
 */
import t, { type Test } from 'tap'
import { randomBytes } from 'node:crypto'
import type { Page, Route } from 'playwright-core'
import type { Bucket, BucketRegistry } from '../../src/bucket/index.js'
import { allowConsoleErrors, browser, listeningGateway } from './browser.js'

const MiB = 1024 * 1024
const context = await browser(t)

/** A new page at `hash` of the console, closed at the end of `t`. */
async function open (t: Test, base: string, hash: string): Promise<Page> {
  const page = await context.newPage()
  t.teardown(async () => { await page.close() })
  await page.goto(`${base}/_console/${hash}`)
  return page
}

async function bucketOf (registry: BucketRegistry): Promise<Bucket> {
  const bucket = await registry.open('photos')
  if (bucket === null) throw new Error('no bucket')
  return bucket
}

/** An error answer in the gateway's envelope. */
async function refuse (route: Route, status: number, code: number, message: string): Promise<void> {
  await route.fulfill({ status, contentType: 'application/json', body: JSON.stringify({ success: false, errors: [{ code, message }], messages: [], result: null }) })
}

t.test('without a token', async t => {
  const { base, registry } = await listeningGateway(t, null)
  const photos = await bucketOf(registry)

  await t.test('a bulk delete a bucket lock partly refuses: listed again, the kept key still ticked, the alert above the table', async t => {
    // The refusal is a 403 answer, which Chromium logs.
    allowConsoleErrors(/status of 403/)
    for (const key of ['mixed/free-1.txt', 'mixed/free-2.txt', 'mixed/keep-1.txt']) await photos.put(key, key)
    await photos.setLockRules([{ id: 'keep', enabled: true, prefix: 'mixed/keep', condition: { type: 'Indefinite' } }])
    t.teardown(async () => { await photos.setLockRules([]); await photos.delete(['mixed/keep-1.txt']) })
    const page = await open(t, base, '#/objects?bucket=photos&prefix=mixed%2F')
    await page.getByRole('checkbox', { name: 'Select all objects on this page' }).check()
    await page.getByRole('button', { name: 'Delete selected (3)', exact: true }).click()
    const asked: string[] = []
    page.on('request', request => { if (new URL(request.url()).pathname === '/photos') asked.push(`${request.method()} ${new URL(request.url()).search}`) })
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click()
    const alert = page.getByRole('alert')
    await alert.filter({ hasText: /^Deleted 2 of 3 objects; 1 was kept: / }).waitFor({ timeout: 5000 })
    t.match(await alert.textContent(), /bucket lock/, 'the server\'s reason')
    await page.locator('tr.object').nth(1).waitFor({ state: 'detached', timeout: 5000 })
    // The refusal names the keys it deleted: no key is asked after one by one.
    t.same(asked.map(a => a.replace(/&.*/, '')), ['POST ?delete', 'GET ?prefix=mixed%2F'], 'one delete, then the page listed again')
    t.same(await page.locator('tr.object').evaluateAll(rows => rows.map(r => r.getAttribute('data-key'))), ['mixed/keep-1.txt'], 'the deleted rows are gone')
    t.ok(await page.getByRole('checkbox', { name: 'Select mixed/keep-1.txt' }).isChecked(), 'the kept key is still ticked')
    await page.getByRole('button', { name: 'Delete selected (1)', exact: true }).waitFor({ timeout: 5000 })
    const alertBox = await alert.boundingBox()
    const tableBox = await page.locator('table.objects').boundingBox()
    t.ok(alertBox !== null && tableBox !== null && alertBox.y + alertBox.height <= tableBox.y, 'the alert is above the table')
  })

  await t.test('a bulk delete whose answer does not say what it deleted: the keys are asked after, and counted as they are', async t => {
    // The answer forced below is a 502, which Chromium logs.
    allowConsoleErrors(/status of 502/)
    for (const key of ['lost/a.txt', 'lost/b.txt', 'lost/c.txt']) await photos.put(key, key)
    t.teardown(async () => { await photos.delete(['lost/c.txt']) })
    const page = await open(t, base, '#/objects?bucket=photos&prefix=lost%2F')
    await page.getByRole('checkbox', { name: 'Select lost/a.txt' }).check()
    await page.getByRole('checkbox', { name: 'Select lost/b.txt' }).check()
    // The server deletes the keys; the page gets an error without a result, as from a proxy in between.
    await page.route(/\/photos\?delete$/, async route => { await route.fetch(); await refuse(route, 502, 50200, 'Bad gateway.') })
    await page.getByRole('button', { name: 'Delete selected (2)', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('alert').filter({ hasText: /^Deleted 2 of 2 objects; 0 were kept: Bad gateway\.$/ }).waitFor({ timeout: 5000 })
    await page.locator('tr.object').nth(1).waitFor({ state: 'detached', timeout: 5000 })
    t.same(await page.locator('tr.object').evaluateAll(rows => rows.map(r => r.getAttribute('data-key'))), ['lost/c.txt'], 'the deleted rows are gone')
    t.equal(await page.getByRole('button', { name: 'Delete selected', exact: true }).isDisabled(), true, 'and nothing is left selected')
  })

  await t.test('one upload of two fails: the summary stays after the list is drawn again', async t => {
    // The refused upload is a 507 answer, which Chromium logs.
    allowConsoleErrors(/status of 507/)
    const page = await open(t, base, '#/objects?bucket=photos&prefix=two%2F')
    await page.getByText('No objects here yet').waitFor()
    await page.route(/\/photos\/two\/bad\.txt$/, async route => { await refuse(route, 507, 10000 + 1, 'No space left.') })
    await page.setInputFiles('#file-picker', [
      { name: 'good.txt', mimeType: 'text/plain', buffer: Buffer.from('good') },
      { name: 'bad.txt', mimeType: 'text/plain', buffer: Buffer.from('bad') }
    ])
    await page.getByRole('button', { name: 'good.txt', exact: true }).waitFor()
    await page.getByRole('alert').filter({ hasText: '1 of 2 uploads failed.' }).waitFor({ timeout: 5000 })
    t.match(await page.locator('li.upload.failed .upload-state').textContent(), /failed: No space left\./)
  })

  await t.test('a key longer than 1,024 bytes is refused before sending, in plain words', async t => {
    const page = await open(t, base, '#/objects?bucket=photos&prefix=')
    let sent = false
    page.on('request', request => { if (request.method() === 'PUT') sent = true })
    await page.getByText(/^\d+ folders?, \d+ objects?/).waitFor()
    await page.setInputFiles('#file-picker', { name: `${'é'.repeat(520)}.txt`, mimeType: 'text/plain', buffer: Buffer.from('x') })
    const state = page.locator('li.upload.failed .upload-state')
    await state.waitFor({ timeout: 5000 })
    t.match(await state.textContent(), /longer than 1,024 bytes/)
    t.equal(sent, false, 'nothing sent')
  })

  await t.test('Escape and × give the focus back to the name that opened the details', async t => {
    await photos.put('focus/one.txt', '1')
    const page = await open(t, base, '#/objects?bucket=photos&prefix=focus%2F')
    const name = page.getByRole('button', { name: 'one.txt', exact: true })
    await name.click()
    await page.locator('aside.details').waitFor()
    await page.keyboard.press('Escape')
    await page.locator('aside.details').waitFor({ state: 'detached' })
    t.equal(await name.evaluate(element => element === document.activeElement), true, 'after Escape')
    await name.click()
    await page.getByRole('button', { name: 'Close details', exact: true }).click()
    await page.locator('aside.details').waitFor({ state: 'detached' })
    t.equal(await name.evaluate(element => element === document.activeElement), true, 'after ×')
  })

  await t.test('the Download label never breaks inside the word', async t => {
    await photos.put(`long/${'a'.repeat(300)}`, 'x')
    const page = await open(t, base, '#/objects?bucket=photos&prefix=long%2F')
    const link = page.locator('tr.object a.download')
    await link.waitFor()
    await page.setViewportSize({ width: 420, height: 800 })
    const box = await link.boundingBox()
    const lineHeight = await link.evaluate(element => parseFloat(getComputedStyle(element).lineHeight) || 24)
    t.ok(box !== null && box.height < lineHeight * 1.5, `one line high (${box?.height ?? 0} px)`)
  })

  await t.test('a create refused after a failed one: the old alert goes', async t => {
    // The name taken is a 409 answer, which Chromium logs.
    allowConsoleErrors(/status of 409/)
    const page = await open(t, base, '#/')
    await page.getByLabel('New bucket').fill('photos')
    await page.getByRole('button', { name: 'Create bucket', exact: true }).click()
    await page.getByRole('alert').filter({ hasText: /^Create failed: / }).waitFor()
    await page.getByLabel('New bucket').fill('Not_Valid')
    await page.getByRole('button', { name: 'Create bucket', exact: true }).click()
    t.equal(await page.getByText(/^Create failed: /).count(), 0, 'the alert of the earlier attempt is gone')
  })

  await t.test('Cancel while the multipart upload is being created: its id is aborted when it arrives', async t => {
    const page = await open(t, base, '#/objects?bucket=photos&prefix=up%2F')
    let release = (): void => {}
    const held = new Promise<void>(resolve => { release = resolve })
    await page.route(/action=mpu-create/, async route => { await held; await route.continue().catch(() => {}) })
    // Bounds, not delays: handing the browser a file of 9 MiB alone took 4 s here.
    const created = page.waitForResponse(response => response.url().includes('action=mpu-create'), { timeout: 30_000 }).catch(() => null)
    const aborted = page.waitForRequest(request => request.url().includes('action=mpu-abort'), { timeout: 30_000 }).catch(() => null)
    // Cancelled once the create is sent, and before it is answered (a Cancel before it is sent sends none).
    const creating = page.waitForRequest(request => request.url().includes('action=mpu-create'), { timeout: 30_000 })
    await page.getByText('No objects here yet').waitFor()
    await page.setInputFiles('#file-picker', { name: 'early.bin', mimeType: 'application/octet-stream', buffer: randomBytes(9 * MiB) })
    await page.getByText('uploading (multipart)').waitFor()
    await creating
    await page.getByRole('button', { name: 'Cancel the upload of up/early.bin', exact: true }).click()
    release()
    const abort = await aborted
    t.ok(abort !== null, 'an abort was sent')
    const id = (await (await created)?.json())?.result?.uploadId as string | undefined
    t.ok(id !== undefined && abort?.url().includes(`uploadId=${encodeURIComponent(id)}`), 'for the upload created')
    t.equal((await abort?.response())?.status(), 204, 'and the server aborted it')
    await page.locator('li.upload.failed .upload-state', { hasText: 'cancelled' }).waitFor()
    t.same((await photos.listMultipartUploads()).uploads, [], 'no upload left on the server')
  })

  await t.test('once the upload is being completed, Cancel is gone and the outcome is the server\'s', async t => {
    const page = await open(t, base, '#/objects?bucket=photos&prefix=up%2F')
    let release = (): void => {}
    const held = new Promise<void>(resolve => { release = resolve })
    let completing = (): void => {}
    const sent = new Promise<void>(resolve => { completing = resolve })
    await page.route(/action=mpu-complete/, async route => { completing(); await held; await route.continue() })
    await page.getByText('No objects here yet').waitFor()
    await page.setInputFiles('#file-picker', { name: 'late.bin', mimeType: 'application/octet-stream', buffer: randomBytes(9 * MiB) })
    await sent
    t.equal(await page.getByRole('button', { name: 'Cancel the upload of up/late.bin', exact: true }).count(), 0, 'no Cancel offered')
    release()
    await page.locator('li.upload.done .upload-state', { hasText: 'done' }).waitFor()
    t.equal((await photos.head('up/late.bin'))?.size, 9 * MiB, 'stored')
  })

  await t.test('a whole-file upload whose body is sent: Cancel is gone, and the outcome is the server\'s', async t => {
    const page = await open(t, base, '#/objects?bucket=photos&prefix=whole%2F')
    await page.getByText('No objects here yet').waitFor()
    // The answer comes 3 s after the request (Chromium's emulated latency): the body is sent long before.
    const cdp = await context.newCDPSession(page)
    await cdp.send('Network.enable')
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 3000, downloadThroughput: -1, uploadThroughput: -1 })
    await page.setInputFiles('#file-picker', { name: 'small.bin', mimeType: 'application/octet-stream', buffer: randomBytes(64 * 1024) })
    const cancel = page.getByRole('button', { name: 'Cancel the upload of whole/small.bin', exact: true })
    for (let i = 0; i < 25 && await cancel.count() > 0; i++) await new Promise(resolve => setTimeout(resolve, 100))
    t.equal(await cancel.count(), 0, 'no Cancel offered once the body is sent')
    t.equal(await page.locator('li.upload.done').count(), 0, 'while the answer is still to come')
    await page.locator('li.upload.done .upload-state', { hasText: 'done' }).waitFor()
    t.equal((await photos.head('whole/small.bin'))?.size, 64 * 1024, 'stored')
  })

  await t.test('Cancel while a failed upload is being aborted keeps the failure\'s reason', async t => {
    allowConsoleErrors(/status of 507/, /Failed to load resource/)
    const page = await open(t, base, '#/objects?bucket=photos&prefix=late%2F')
    let release = (): void => {}
    const held = new Promise<void>(resolve => { release = resolve })
    let aborting = (): void => {}
    const abortSent = new Promise<void>(resolve => { aborting = resolve })
    await page.route(/action=mpu-uploadpart/, async route => { await refuse(route, 507, 10000 + 1, 'No space left.') })
    await page.route(/action=mpu-abort/, async route => { aborting(); await held; await route.continue() })
    await page.getByText('No objects here yet').waitFor()
    await page.setInputFiles('#file-picker', { name: 'late.bin', mimeType: 'application/octet-stream', buffer: randomBytes(11 * MiB) })
    await abortSent
    const cancel = page.getByRole('button', { name: 'Cancel the upload of late/late.bin', exact: true })
    t.equal(await cancel.count(), 1, 'Cancel still offered while the abort is under way')
    await cancel.click()
    release()
    await page.locator('li.upload.failed .upload-state', { hasText: 'failed: No space left.' }).waitFor()
    t.pass('the row says why it failed, not "cancelled"')
  })

  await t.test('a part that fails stops the parts in flight before the upload is aborted', async t => {
    // The refused part is a 507 answer, and the parts stopped are failed loads; Chromium logs both.
    allowConsoleErrors(/status of 507/, /Failed to load resource/)
    const page = await open(t, base, '#/objects?bucket=photos&prefix=full%2F')
    const stopped: string[] = []
    page.on('requestfailed', request => { if (request.url().includes('action=mpu-uploadpart')) stopped.push(request.url()) })
    const releases: Array<() => void> = []
    t.teardown(() => { for (const release of releases) release() })
    await page.route(/action=mpu-uploadpart/, async route => {
      if (route.request().url().includes('partNumber=1')) return await refuse(route, 507, 10000 + 1, 'No space left.')
      // The other parts never reach the server until the test ends.
      await new Promise<void>(resolve => releases.push(resolve))
      await route.abort().catch(() => {})
    })
    await page.getByText('No objects here yet').waitFor()
    await page.setInputFiles('#file-picker', { name: 'full.bin', mimeType: 'application/octet-stream', buffer: randomBytes(11 * MiB) })
    await page.locator('li.upload.failed .upload-state', { hasText: 'failed: No space left.' }).waitFor()
    for (let i = 0; i < 50 && stopped.length < 2; i++) await new Promise(resolve => setTimeout(resolve, 100))
    t.equal(stopped.length, 2, 'the two other parts were stopped')
    t.same((await photos.listMultipartUploads()).uploads, [], 'and the upload aborted')
  })
})

t.test('with a token', async t => {
  const token = 'failures-test-token'
  const { base, registry } = await listeningGateway(t, token)
  const photos = await bucketOf(registry)
  await photos.put('gone.txt', 'soon gone')
  await photos.put('kept.txt', 'kept')

  /** A page signed in, on the bucket list. */
  async function signIn (t: Test): Promise<Page> {
    // Asking whether a token is needed is a 401 without one, which Chromium logs.
    allowConsoleErrors(/status of 401/)
    const page = await open(t, base, '')
    await page.getByLabel('Token', { exact: true }).fill(token)
    await page.getByRole('button', { name: 'Continue', exact: true }).click()
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
    return page
  }

  await t.test('a download the server refuses shows its reason', async t => {
    // The object deleted behind the page is a 404 answer, which Chromium logs.
    allowConsoleErrors(/status of 404/)
    const page = await signIn(t)
    await page.getByRole('link', { name: 'photos', exact: true }).click()
    await page.getByRole('button', { name: 'gone.txt', exact: true }).waitFor()
    await photos.delete('gone.txt')
    await page.locator('tr.object[data-key="gone.txt"] a.download').click()
    const alert = page.getByRole('alert').filter({ hasText: /^Download of gone\.txt failed: / })
    await alert.waitFor({ timeout: 5000 })
    t.match(await alert.textContent(), /\(\d+\)$/, 'with the server\'s code')
  })

  await t.test('a download that never arrives shows an alert, not an uncaught error', async t => {
    const page = await signIn(t)
    await page.getByRole('link', { name: 'photos', exact: true }).click()
    await page.getByRole('button', { name: 'kept.txt', exact: true }).click()
    await page.route(/\/photos\/kept\.txt$/, async route => { await route.abort('connectionrefused') })
    allowConsoleErrors(/Failed to load resource/)
    await page.locator('aside.details a.download').click()
    await page.locator('aside.details').getByRole('alert').filter({ hasText: /^Download of kept\.txt failed: / }).waitFor({ timeout: 5000 })
  })

  await t.test('a token that stops working: opening a bucket asks for it, as the bucket list does', async t => {
    allowConsoleErrors(/status of 403/)
    const page = await signIn(t)
    // As after a restart with another --token: the page still holds the old one.
    await page.evaluate(() => { sessionStorage.setItem('fsbucket-console-token', 'revoked-since') })
    await page.getByRole('link', { name: 'photos', exact: true }).click()
    await page.getByLabel('Token', { exact: true }).waitFor({ timeout: 5000 })
    t.equal(await page.getByText('The token was not accepted.').count(), 1)
  })

  await t.test('a token that stops working while browsing: the next listing asks for it', async t => {
    allowConsoleErrors(/status of 403/)
    const page = await signIn(t)
    await page.getByRole('link', { name: 'photos', exact: true }).click()
    await page.getByRole('button', { name: 'kept.txt', exact: true }).waitFor()
    await page.evaluate(() => { sessionStorage.setItem('fsbucket-console-token', 'revoked-since') })
    await page.getByLabel('Search in photos').fill('k')
    await page.getByLabel('Token', { exact: true }).waitFor({ timeout: 5000 })
  })

  await t.test('a bucket\'s settings changed without the token, or with one no longer accepted: it is asked for, and the settings load once given', async t => {
    // The refused change and the settings read again are 403 answers, and the CORS rules not set a 404; Chromium logs them.
    allowConsoleErrors(/status of 403/, /status of 404 .*\/cors\)$/)
    const page = await signIn(t)
    await page.locator('a[href="#/settings?bucket=photos"]').click()
    const heading = page.getByRole('heading', { name: 'Settings of photos', exact: true })
    await heading.waitFor()
    const prompt = page.getByLabel('Token', { exact: true })
    const enterToken = async (): Promise<void> => {
      await prompt.fill(token)
      await page.getByRole('button', { name: 'Continue', exact: true }).click()
      await heading.waitFor({ timeout: 5000 })
    }

    // As on a page opened while the server had no token, which was started again with one: the tab holds none.
    await page.evaluate(() => { sessionStorage.removeItem('fsbucket-console-token') })
    await page.getByLabel('Public: anyone may read objects without a token').click()
    await prompt.waitFor({ timeout: 5000 })
    t.equal(await page.getByText('The token was not accepted.').count(), 0, 'asked for, not said to be wrong')
    await enterToken()
    t.equal(await page.getByLabel('Public: anyone may read objects without a token').isChecked(), false, 'the settings as stored')
    t.equal((await registry.info('photos'))?.settings.public, false, 'the refused change changed nothing')

    // A rule section's change, with a token the server no longer accepts (restarted with another, revoked).
    await page.evaluate(() => { sessionStorage.setItem('fsbucket-console-token', 'revoked-since') })
    const lifecycle = page.getByRole('region', { name: 'Lifecycle rules' })
    await lifecycle.getByLabel('Rule ID').fill('refused-rule')
    await lifecycle.getByRole('button', { name: 'Add lifecycle rule', exact: true }).click()
    await prompt.waitFor({ timeout: 5000 })
    await page.getByText('The token was not accepted.').waitFor()
    await enterToken()
    await page.getByRole('region', { name: 'Lifecycle rules' }).getByRole('table').waitFor()
    t.equal(await page.locator('tr[data-rule="refused-rule"]').count(), 0, 'no rule was added')
  })

  await t.test('a bucket created or deleted, or a token created, with a token no longer accepted: it is asked for, and nothing changed', async t => {
    allowConsoleErrors(/status of 403/)
    const page = await signIn(t)
    const prompt = page.getByLabel('Token', { exact: true })
    const refusedSince = async (): Promise<void> => { await page.evaluate(() => { sessionStorage.setItem('fsbucket-console-token', 'revoked-since') }) }
    const enterToken = async (then: string): Promise<void> => {
      await prompt.waitFor({ timeout: 5000 })
      t.equal(await page.getByText('The token was not accepted.').count(), 1, 'said to be no longer accepted')
      await prompt.fill(token)
      await page.getByRole('button', { name: 'Continue', exact: true }).click()
      await page.getByRole('heading', { name: then, exact: true }).waitFor({ timeout: 5000 })
    }

    await refusedSince()
    await page.getByLabel('New bucket').fill('refused-bucket')
    await page.getByRole('button', { name: 'Create bucket', exact: true }).click()
    await enterToken('Buckets')
    t.equal(await registry.info('refused-bucket'), null, 'no bucket was made')

    await registry.create('empty-one')
    await page.reload()
    await page.getByRole('link', { name: 'empty-one', exact: true }).waitFor()
    await refusedSince()
    await page.getByRole('button', { name: 'Delete bucket empty-one', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete bucket', exact: true }).click()
    await enterToken('Buckets')
    t.not(await registry.info('empty-one'), null, 'the bucket is still there')

    await page.getByRole('link', { name: 'Tokens', exact: true }).click()
    await page.getByRole('heading', { name: 'Tokens', exact: true }).waitFor()
    await refusedSince()
    await page.getByLabel('Name', { exact: true }).fill('refused-token')
    await page.getByRole('button', { name: 'Create token', exact: true }).click()
    await enterToken('Tokens')
    t.equal(await page.getByText('refused-token').count(), 0, 'no token was made')
  })
})

t.test('a server without a token beyond loopback: the console asks for a scoped token, and opens with one', async t => {
  const { base, registry } = await listeningGateway(t, null, '0.0.0.0')
  const made = await registry.tokens.create({ name: 'console', permission: 'object-read-write', buckets: ['photos'] })
  // Asking without a token, and with a wrong one, are 403 answers, which Chromium logs.
  allowConsoleErrors(/status of 403/)
  const page = await open(t, base, '')
  const prompt = page.getByLabel('Token', { exact: true })
  await prompt.waitFor({ timeout: 5000 })
  t.equal(await page.getByText(/only a scoped token opens it/).count(), 1, 'the prompt says which token it takes')
  await prompt.fill('no-such-token')
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByText('The token was not accepted.').waitFor({ timeout: 5000 })
  await prompt.fill(made.token)
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByRole('link', { name: 'photos', exact: true }).click()
  await page.getByText('No objects here yet').waitFor({ timeout: 5000 })

  // Revoked, the token is refused (40300), which says nothing of the server: the prompt asks for a scoped token still, after a reload too.
  await registry.tokens.revoke(made.id)
  await page.reload()
  await page.getByText('The token was not accepted.').waitFor({ timeout: 5000 })
  t.equal(await page.getByText(/only a scoped token opens it/).count(), 1, 'after a reload, the prompt still says which token it takes')
})
