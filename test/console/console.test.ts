/**
 * The web console in a real headless Chromium against a listening gateway:
 * the redirect from `/`, the CSP, browsing with breadcrumbs and folders,
 * details, keys that look like HTML or carry `#`, `?`, `%`, spaces and
 * non-ASCII (shown as text, with working links), upload by picker (12 MiB,
 * as a multipart upload) and by drop, download (bytes compared), delete
 * with confirmation, bucket create/delete and settings. `FSBUCKET_SCREENSHOT`
 * names a PNG file to save the object browser to.
 */
import t from 'tap'
import { createHash, randomBytes } from 'node:crypto'
import { promises as fsp } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { BucketObjectBody } from '../../src/bucket/index.js'
import { allowConsoleErrors, browser, listeningGateway } from './browser.js'

const md5 = (data: Buffer): string => createHash('md5').update(data).digest('hex')

const trickyKeys = [
  'tricky/<img src=x onerror=alert(1)>',
  'tricky/a#b?c=%41 d.txt',
  'tricky/ünïcødé 文件.txt'
]

// One browser for the file; each test has its own gateway (its own origin).
const context = await browser(t)

t.test('the console, without a token (loopback)', async t => {
  const { base, registry } = await listeningGateway(t, null)
  const page = await context.newPage()
  const dialogs: string[] = []
  const pageErrors: string[] = []
  page.on('pageerror', err => { pageErrors.push(err.message) })
  page.on('dialog', dialog => { dialogs.push(dialog.message()); void dialog.dismiss() })

  const photos = await registry.open('photos')
  if (photos === null) throw new Error('no bucket')
  await photos.put('docs/readme.txt', 'read me', { customMetadata: { owner: '<b>bold</b> ü' }, sha256: createHash('sha256').update('read me').digest('hex') })
  await photos.put('docs/guide/intro.md', '# intro')
  for (const key of trickyKeys) await photos.put(key, `body of ${key}`)

  await t.test('GET / from a browser lands on the console, served under a strict CSP', async t => {
    // The inline script this test injects is refused by the CSP, which Chromium logs.
    allowConsoleErrors(/Content Security Policy/)
    const response = await page.goto(`${base}/`)
    t.equal(new URL(page.url()).pathname, '/_console/')
    const csp = response?.headers()['content-security-policy'] ?? ''
    t.match(csp, /script-src 'nonce-[A-Za-z0-9+/=]+';/)
    t.match(csp, /style-src 'nonce-[A-Za-z0-9+/=]+';/)
    t.notMatch(csp, /unsafe-inline|unsafe-eval|\*/, 'no inline or remote code')
    t.equal(response?.headers()['cache-control'], 'no-store')
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
    const injected = await page.evaluate(async () => {
      const script = document.createElement('script')
      script.textContent = 'window.inlineRan = true'
      document.body.appendChild(script)
      await new Promise(resolve => setTimeout(resolve, 50))
      return (window as unknown as { inlineRan?: boolean }).inlineRan === true
    })
    t.equal(injected, false, 'the CSP blocks an inline script')
  })

  await t.test('an object of this origin is never loaded as the console\'s script or style', async t => {
    // The refusals this test provokes are Chromium's console errors.
    allowConsoleErrors(/Content Security Policy/, /Failed to load resource/)
    // A path-style read is of the console's own origin: with `script-src 'self'` one injected tag would run it as the console.
    await photos.put('evil.js', 'window.objectRan = true', { httpMetadata: { contentType: 'text/javascript' } })
    await photos.put('evil.mjs', 'window.objectRan = true', { httpMetadata: { contentType: 'application/javascript' } })
    await photos.put('evil.css', 'body { --object-styled: yes; }', { httpMetadata: { contentType: 'text/css' } })
    await page.goto(`${base}/_console/`)
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
    const loaded = await page.evaluate(async () => {
      const blocked: string[] = []
      document.addEventListener('securitypolicyviolation', event => { blocked.push(event.blockedURI) })
      const settle = async (element: HTMLScriptElement | HTMLLinkElement): Promise<void> => {
        await new Promise(resolve => { element.onload = resolve; element.onerror = resolve; setTimeout(resolve, 1000) })
      }
      for (const [src, type] of [['/photos/evil.js', 'text/javascript'], ['/photos/evil.mjs', 'module']]) {
        const script = document.createElement('script')
        script.type = type
        script.src = src
        // As markup injected into the page would be: without the nonce of this answer.
        document.head.appendChild(script)
        await settle(script)
      }
      const link = document.createElement('link')
      link.rel = 'stylesheet'
      link.href = '/photos/evil.css'
      document.head.appendChild(link)
      await settle(link)
      return {
        ran: (window as unknown as { objectRan?: boolean }).objectRan === true,
        styled: getComputedStyle(document.body).getPropertyValue('--object-styled').trim(),
        blocked
      }
    })
    t.equal(loaded.ran, false, 'no object runs as a console script')
    t.equal(loaded.styled, '', 'no object styles the console')
    t.ok(loaded.blocked.some(uri => uri.endsWith('/photos/evil.js')), 'the CSP refused the object script')
    await photos.delete(['evil.js', 'evil.mjs', 'evil.css'])
  })

  await t.test('a key\'s bidirectional controls are shown as escapes: a key cannot pass for another name', async t => {
    // Written raw, RIGHT-TO-LEFT OVERRIDE makes the name read "invoiceexe.pdf".
    await photos.put('spoof\u202e/invoice\u202efdp.exe', 'x')
    await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=`)
    await page.getByRole('link', { name: 'spoof\\u202e/' }).click()
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' })
    // The folder's page, not the bucket's still shown while it loads.
    await crumbs.locator('[aria-current="page"]', { hasText: 'spoof' }).waitFor()
    t.equal(await crumbs.locator('[aria-current="page"]').textContent(), 'spoof\\u202e', 'the breadcrumb')
    await page.getByRole('button', { name: 'invoice\\u202efdp.exe', exact: true }).click()
    t.equal(await page.locator('aside.details').getByTestId('details-key').textContent(), 'spoof\\u202e/invoice\\u202efdp.exe', 'the details')
    const text = (await page.locator('main').textContent()) ?? ''
    t.notOk(text.includes('\u202e'), `no raw control on the page: ${JSON.stringify(text.slice(Math.max(0, text.indexOf('\u202e') - 80), text.indexOf('\u202e') + 40))}`)
    await photos.delete('spoof\u202e/invoice\u202efdp.exe')
    await page.goto(`${base}/_console/`)
  })

  await t.test('browse: folders, breadcrumbs, details', async t => {
    await page.getByRole('link', { name: 'photos', exact: true }).click()
    await page.getByRole('link', { name: 'docs/' }).click()
    await page.getByRole('link', { name: 'guide/' }).click()
    const crumbs = page.getByRole('navigation', { name: 'Breadcrumb' })
    await crumbs.locator('[aria-current="page"]', { hasText: 'guide' }).waitFor()
    t.same(await crumbs.getByRole('listitem').allTextContents(), ['Buckets', 'photos', 'docs', 'guide'])
    t.equal(await crumbs.locator('[aria-current="page"]').textContent(), 'guide')
    await page.getByRole('button', { name: 'intro.md', exact: true }).waitFor()
    await crumbs.getByRole('link', { name: 'docs' }).click()
    await page.getByRole('button', { name: 'readme.txt', exact: true }).click()
    const details = page.locator('aside.details')
    t.equal(await details.getByTestId('details-key').textContent(), 'docs/readme.txt')
    t.match(await details.getByTestId('details-size').textContent(), /7 bytes/)
    t.equal(await details.getByTestId('details-etag').textContent(), md5(Buffer.from('read me')))
    t.match(await details.textContent(), /owner<b>bold<\/b> ü/, 'custom metadata, as text')
    t.match(await details.textContent(), createHash('sha256').update('read me').digest('hex'), 'the checksum')
    t.equal(await details.locator('b').count(), 0, 'no markup from metadata')
    await details.getByTestId('details-type').filter({ hasText: /^text\/plain/ }).waitFor()
    t.match(await details.getByTestId('details-type').textContent(), /^text\/plain(; charset=utf-8)? \(from the key's extension\)$/, 'the type served, not a placeholder')
    await page.keyboard.press('Escape')
    await details.waitFor({ state: 'detached' })
    t.equal(await page.locator('aside.details').count(), 0, 'Escape closes the details')
  })

  await t.test('420 px wide: nothing overflows, names break between words', async t => {
    await page.setViewportSize({ width: 420, height: 800 })
    t.teardown(async () => { await page.setViewportSize({ width: 1280, height: 860 }) })
    await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=tricky%2F`)
    const name = page.getByRole('button', { name: 'ünïcødé 文件.txt', exact: true })
    await name.click()
    await page.locator('aside.details').waitFor()
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    t.equal(overflow, 0, 'no horizontal scrolling')
    t.not(await name.evaluate(element => getComputedStyle(element).wordBreak), 'break-all', 'names are not cut anywhere')
    const box = await page.locator('aside.details').boundingBox()
    t.ok(box !== null && box.x >= 0 && box.x + box.width <= 420, 'the details fit the width')
  })

  await t.test('pages of 100, search by prefix, keyboard', async t => {
    for (let i = 0; i < 105; i++) await photos.put(`many/${String(i).padStart(3, '0')}.txt`, String(i))
    await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=many%2F`)
    await page.getByRole('button', { name: '000.txt', exact: true }).waitFor()
    t.equal(await page.locator('tr.object').count(), 100)
    await page.getByRole('button', { name: 'Next page', exact: true }).click()
    await page.getByRole('button', { name: '104.txt', exact: true }).waitFor()
    t.equal(await page.locator('tr.object').count(), 5)
    t.ok(await page.getByRole('button', { name: 'Next page', exact: true }).isDisabled(), 'no page after the last')
    await page.getByRole('button', { name: 'Previous page', exact: true }).click()
    await page.getByRole('button', { name: '000.txt', exact: true }).waitFor()

    await page.getByLabel('Search in many/').fill('10')
    await page.getByRole('button', { name: '104.txt', exact: true }).waitFor()
    t.same(await page.locator('tr.object').evaluateAll(rows => rows.map(r => r.getAttribute('data-key'))),
      ['many/100.txt', 'many/101.txt', 'many/102.txt', 'many/103.txt', 'many/104.txt'], 'keys starting with many/10')

    await page.getByRole('button', { name: '102.txt', exact: true }).focus()
    await page.keyboard.press('Enter')
    t.equal(await page.getByTestId('details-key').textContent(), 'many/102.txt', 'Enter opens the details')
    await page.keyboard.press('Tab')
    t.equal(await page.evaluate(() => document.activeElement?.getAttribute('aria-label')), 'Close details', 'focus moved into the details')
    await photos.delete(Array.from({ length: 105 }, (_, i) => `many/${String(i).padStart(3, '0')}.txt`))
  })

  await t.test('untrusted keys render as text, with working links', async t => {
    await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=tricky%2F`)
    const rows = page.locator('tr.object')
    await page.locator('tr.object[data-key^="tricky/"]').first().waitFor()
    t.same((await rows.evaluateAll(rs => rs.map(r => r.getAttribute('data-key')))).sort(), [...trickyKeys].sort())
    for (const key of trickyKeys) {
      const name = key.slice('tricky/'.length)
      t.equal(await page.getByRole('button', { name, exact: true }).textContent(), name, `${name} shown as typed`)
      const href = await page.locator(`tr.object[data-key="${key.replace(/"/g, '\\"')}"] a.download`).getAttribute('href')
      const body = await page.evaluate(async (url: string) => await (await fetch(url)).text(), href ?? '')
      t.equal(body, `body of ${key}`, `the link of ${name} reads it`)
    }
    t.equal(await page.locator('main img').count(), 0, 'no <img> made from a key')

    // On a public bucket the details offer the object's public link.
    await registry.updateSettings('photos', { public: true })
    await page.reload()
    await page.getByRole('button', { name: trickyKeys[1].slice('tricky/'.length), exact: true }).click()
    const link = await page.getByLabel('Public link').inputValue()
    t.equal(link, `${base}/photos/tricky/a%23b%3Fc%3D%2541%20d.txt`, 'each segment percent-encoded')
    t.equal(await (await fetch(link)).text(), `body of ${trickyKeys[1]}`, 'the public link reads the object')
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base })
    await page.getByRole('button', { name: 'Copy link', exact: true }).click()
    await page.getByText('Link copied.').waitFor()
    t.equal(await page.evaluate(async () => await navigator.clipboard.readText()), link, 'Copy link puts it on the clipboard')
    await registry.updateSettings('photos', { public: false })
    t.same(dialogs, [], 'no script ran')
  })

  await t.test('keys a URL cannot name ("." and ".." whole): no link to the wrong resource, delete by the key', async t => {
    // `/dots/..` is `/` to a browser (and `%2E%2E` too): a link would download the bucket list.
    await registry.create('dots', { public: true })
    const dots = await registry.open('dots')
    if (dots === null) throw new Error('no bucket')
    await dots.put('.', 'one dot')
    await dots.put('..', 'two dots')
    await page.goto(`${base}/_console/#/objects?bucket=dots`)
    await page.locator('tr.object[data-key=".."]').waitFor()
    for (const key of ['.', '..']) {
      const row = page.locator(`tr.object[data-key="${key}"]`)
      t.equal(await row.locator('a.download').count(), 0, `no download link for ${key}`)
      t.equal(await row.locator('.download').textContent(), 'no link')
    }
    await page.getByRole('button', { name: '..', exact: true }).click()
    const details = page.locator('aside.details')
    t.equal(await details.getByTestId('details-key').textContent(), '..')
    t.equal(await details.getByTestId('details-type').textContent(), 'none stored', 'not the type of whatever `/` answers')
    t.equal(await details.getByLabel('Public link').count(), 0, 'no public link')
    t.match(await details.textContent(), /A browser cannot name this key in a link/)
    await details.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click()
    await details.waitFor({ state: 'detached' })
    t.equal(await dots.head('..'), null, 'the object ".." is deleted')
    t.equal(await (await dots.get('.') as BucketObjectBody | null)?.text(), 'one dot', 'and "." is kept')
  })

  await t.test('upload 12 MiB by the picker (multipart) and a file by drop; download; delete', async t => {
    await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=up%2F`)
    await page.getByText('No objects here yet').waitFor()
    // A file on disk: the browser reads it itself (a buffer would cross the DevTools protocol, slowly).
    const big = randomBytes(12 * 1024 * 1024)
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'fsbucket-console-'))
    t.teardown(async () => { await fsp.rm(dir, { recursive: true, force: true }) })
    await fsp.writeFile(path.join(dir, 'big file.bin'), big)
    await page.setInputFiles('#file-picker', path.join(dir, 'big file.bin'))
    const state = page.locator('li.upload').filter({ hasText: 'up/big file.bin' }).locator('.upload-state')
    await page.locator('li.upload.done').waitFor({ timeout: 30_000 })
    t.equal(await state.textContent(), 'done')
    t.equal(await page.locator('li.upload.done button').count(), 0, 'a finished upload offers no Cancel')
    const progress = page.locator('li.upload progress')
    t.equal(await progress.evaluate(p => (p as HTMLProgressElement).value), big.length, 'the progress bar is full')
    const stored = await photos.head('up/big file.bin')
    t.equal(stored?.size, big.length)
    t.match(stored?.etag, /-3$/, 'stored as a multipart upload of three parts')

    const dropped = await page.evaluateHandle(() => {
      const transfer = new DataTransfer()
      transfer.items.add(new File(['dropped bytes'], 'dropped.txt', { type: 'text/plain' }))
      return transfer
    })
    await page.dispatchEvent('.dropzone', 'drop', { dataTransfer: dropped })
    await page.getByRole('button', { name: 'dropped.txt', exact: true }).waitFor()
    const droppedObject = await photos.get('up/dropped.txt') as BucketObjectBody | null
    t.equal(droppedObject?.size, 13)
    t.equal(await droppedObject?.text(), 'dropped bytes')

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('tr.object[data-key="up/big file.bin"] a.download').click()
    ])
    t.equal(download.suggestedFilename(), 'big file.bin')
    t.equal(md5(await fsp.readFile(await download.path())), md5(big), 'downloaded bytes are the uploaded ones')

    await page.getByRole('checkbox', { name: 'Select up/big file.bin' }).check()
    await page.getByRole('checkbox', { name: 'Select up/dropped.txt' }).check()
    await page.getByRole('button', { name: 'Delete selected (2)', exact: true }).click()
    const confirm = page.getByRole('dialog')
    t.match(await confirm.textContent(), /up\/big file\.bin/)
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByText('No objects here yet').waitFor()
    t.equal(await photos.head('up/big file.bin'), null)
    t.equal(await photos.head('up/dropped.txt'), null)
    if (process.env.FSBUCKET_SCREENSHOT !== undefined) {
      await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=docs%2F`)
      await page.getByRole('button', { name: 'readme.txt', exact: true }).click()
      await page.screenshot({ path: process.env.FSBUCKET_SCREENSHOT, fullPage: true })
    }
  })

  await t.test('cancel a multipart upload: its parts stop and the upload is aborted', async t => {
    // The parts held and then aborted here are failed loads in Chromium's console.
    allowConsoleErrors(/Failed to load resource/)
    const dir = await fsp.mkdtemp(path.join(os.tmpdir(), 'fsbucket-console-'))
    t.teardown(async () => { await fsp.rm(dir, { recursive: true, force: true }) })
    await fsp.writeFile(path.join(dir, 'stalled.bin'), randomBytes(9 * 1024 * 1024))
    // Parts never reach the server until the test lets them (it never does).
    const held: Array<() => void> = []
    await page.route(/action=mpu-uploadpart/, async route => { await new Promise<void>(resolve => held.push(resolve)); await route.abort().catch(() => {}) })
    const aborted = page.waitForRequest(request => request.url().includes('action=mpu-abort') && request.method() === 'DELETE')
    await page.setInputFiles('#file-picker', path.join(dir, 'stalled.bin'))
    await page.getByText('uploading (multipart)').waitFor()
    await page.getByRole('button', { name: 'Cancel the upload of up/stalled.bin', exact: true }).click()
    t.equal((await (await aborted).response())?.status(), 204, 'the server aborted the upload')
    await page.locator('li.upload.failed .upload-state', { hasText: 'cancelled' }).waitFor()
    t.equal(await page.locator('li.upload.failed button').count(), 0, 'a cancelled upload offers no Cancel')
    for (const release of held) release()
    await page.unroute(/action=mpu-uploadpart/)
    t.equal(await photos.head('up/stalled.bin'), null, 'nothing stored')
  })

  await t.test('counts in the singular, Refresh, New folder, a key deleted from its details leaves the selection, the Tokens link', async t => {
    await photos.put('counted/one.txt', '1')
    await page.goto(`${base}/_console/#/objects?bucket=photos&prefix=counted%2F`)
    await page.getByText('0 folders, 1 object.', { exact: true }).waitFor()
    await photos.put('counted/sub/two.txt', '2')
    await photos.put('counted/three.txt', '3')
    await page.getByRole('button', { name: 'Refresh', exact: true }).click()
    await page.getByText('1 folder, 2 objects.', { exact: true }).waitFor()
    t.ok(await page.getByRole('button', { name: 'three.txt', exact: true }).isVisible(), 'Refresh shows what another client wrote')

    await page.locator('tr.object[data-key="counted/one.txt"] input[type="checkbox"]').check()
    t.equal(await page.getByRole('button', { name: 'Delete selected (1)', exact: true }).count(), 1)
    await page.getByRole('button', { name: 'one.txt', exact: true }).click()
    await page.locator('aside.details').getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByText('Deleted counted/one.txt.').waitFor()
    t.equal(await page.getByRole('button', { name: 'Delete selected', exact: true }).isDisabled(), true, 'nothing is left selected')
    await page.locator('tr.object[data-key="counted/three.txt"] input[type="checkbox"]').check()
    t.equal(await page.getByRole('button', { name: 'Delete selected (1)', exact: true }).count(), 1, 'only what is shown counts')

    await page.getByLabel('New folder').fill('fresh')
    await page.getByRole('button', { name: 'New folder', exact: true }).click()
    await page.getByRole('navigation', { name: 'Breadcrumb' }).locator('[aria-current="page"]', { hasText: 'fresh' }).waitFor()
    t.equal(new URL(page.url()).hash, '#/objects?bucket=photos&prefix=counted%2Ffresh%2F', 'the new folder is opened, to upload into')
    await page.getByText('No objects here yet: drop files to upload.').waitFor()

    t.equal(await page.locator('#session').getByRole('link', { name: 'Tokens', exact: true }).count(), 1, 'a server without a token offers the tokens page')
    t.equal(await page.locator('#session').getByRole('button', { name: 'Forget token' }).count(), 0, 'and no token to forget')
    await photos.delete(['counted/sub/two.txt', 'counted/three.txt'])
  })

  await t.test('buckets: create, make public, delete', async t => {
    // The refused CORS rules below are a 400 answer, and the settings page reads a bucket's CORS rules where none are set (404); Chromium logs both.
    allowConsoleErrors(/status of 400/, /status of 404 .*\/cors\)$/)
    await page.goto(`${base}/_console/#/`)
    // Browsers compile the pattern with the v flag, under which an unescaped - in a class is an error (and the check is skipped).
    const pattern = await page.getByLabel('New bucket').evaluate(input => (input as HTMLInputElement).pattern)
    t.doesNotThrow(() => new RegExp(`^(?:${pattern})$`, 'v'), 'the bucket-name pattern compiles with the v flag')
    await page.getByLabel('New bucket').fill('Not_Valid')
    t.equal(await page.getByLabel('New bucket').evaluate(input => (input as HTMLInputElement).validity.patternMismatch), true, 'and the browser checks it')
    await page.getByLabel('New bucket').fill('made-here')
    await page.getByRole('button', { name: 'Create bucket', exact: true }).click()
    await page.getByRole('link', { name: 'made-here', exact: true }).waitFor()
    t.ok(await registry.info('made-here'), 'created')
    await page.locator('tr[data-bucket="made-here"]').getByRole('link', { name: 'Settings' }).click()
    await page.getByLabel(/^Public/).check()
    await page.getByText('Public access: saved.').waitFor()
    t.equal((await registry.info('made-here'))?.settings.public, true, 'public through the management API')
    await page.getByLabel('CORS rules (JSON)').fill(JSON.stringify({ rules: [{ allowed: { origins: ['https://app.example'], methods: ['GET'] } }] }))
    await page.getByRole('button', { name: 'Save CORS rules', exact: true }).click()
    await page.getByText('CORS rules: saved.').waitFor()
    t.same((await registry.info('made-here'))?.settings.cors, [{ allowedOrigins: ['https://app.example'], allowedMethods: ['GET'] }])
    await page.getByLabel('CORS rules (JSON)').fill('{"rules": [{"allowed": {}}]}')
    await page.getByRole('button', { name: 'Save CORS rules', exact: true }).click()
    t.match(await page.getByText(/^CORS rules: .*allowed\.origins/).textContent(), /must be an array|required|empty/, 'the API\'s refusal is shown')
    t.match(await page.getByRole('alert').textContent(), /^CORS rules: /, 'as an alert')
    t.match(await page.getByRole('alert').getAttribute('class'), /\balert\b/, 'styled as one')
    await page.goto(`${base}/_console/#/`)
    t.equal(await page.locator('tr[data-bucket="made-here"] .badge').textContent(), 'public')
    await page.getByRole('button', { name: 'Delete bucket photos', exact: true }).click()
    await page.getByRole('alert').filter({ hasText: 'The bucket photos is not empty: delete its objects first.' }).waitFor()
    t.equal(await page.getByRole('dialog').count(), 0, 'no delete is offered for a bucket with objects')
    t.ok(await registry.info('photos'), 'a bucket with objects stays, and the page says why')
    await page.getByRole('button', { name: 'Delete bucket made-here', exact: true }).click()
    await page.getByRole('dialog').getByRole('button', { name: 'Delete bucket', exact: true }).click()
    await page.getByText('Deleted the bucket made-here.').waitFor()
    t.equal(await registry.info('made-here'), null, 'deleted')
  })

  t.same(pageErrors, [], 'no script error on any page')
})

t.test('the console asks for the token before showing anything', async t => {
  // The missing and refused tokens are 401 and 403 answers, which Chromium logs.
  allowConsoleErrors(/status of 40[13] /)
  const token = 'console-test-token'
  const { base } = await listeningGateway(t, token)
  const page = await context.newPage()
  await page.goto(`${base}/_console/`)
  await page.getByLabel('Token', { exact: true }).waitFor()
  t.notMatch(await page.locator('body').textContent(), /photos/, 'no bucket shows before the token')
  t.equal(await page.locator('#session').getByRole('link', { name: 'Tokens' }).count(), 0, 'nor the tokens page')
  t.equal(await page.getByLabel('Token', { exact: true }).getAttribute('autocomplete'), 'off', 'the token is not offered to a password manager to keep')

  await page.getByLabel('Token', { exact: true }).fill('wrong')
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByText('The token was not accepted.').waitFor()
  t.equal(await page.evaluate(() => sessionStorage.length), 0, 'a refused token is not kept')

  await page.getByLabel('Token', { exact: true }).fill(token)
  await page.getByRole('button', { name: 'Continue', exact: true }).click()
  await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
  t.equal(await page.locator('#session').getByRole('link', { name: 'Tokens' }).count(), 1, 'the tokens page, once signed in with the server\'s token')
  t.equal(await page.evaluate(() => Object.values(sessionStorage).join()), token, 'kept in sessionStorage')

  // Writes and private reads carry the token: an upload and a download of a private object.
  await page.getByRole('link', { name: 'photos', exact: true }).click()
  await page.setInputFiles('#file-picker', { name: 'note.txt', mimeType: 'text/plain', buffer: Buffer.from('private note') })
  await page.getByRole('button', { name: 'note.txt', exact: true }).waitFor()
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.locator('tr.object[data-key="note.txt"] a.download').click()
  ])
  t.equal(await fsp.readFile(await download.path(), 'utf8'), 'private note', 'downloaded with the token')

  await page.reload()
  await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
  await page.getByRole('button', { name: 'Forget token', exact: true }).click()
  await page.getByLabel('Token', { exact: true }).waitFor()
  t.equal(await page.locator('#session').getByRole('link', { name: 'Tokens' }).count(), 0, 'no tokens page once the token is forgotten')
})
