/**
 * Answers that come late, in a real headless Chromium against a listening
 * gateway: a bucket opened, then left for another before its first answer
 * came; a bucket's settings left, before they came, for another bucket's or
 * the tokens page; a search typed on while the listing of its first letters is slow;
 * "Next page" clicked twice before the next page came. Only the view and
 * the listing the user asked for last may draw: one overtaken draws
 * nothing, since drawn it would show (and upload to, and delete from) what
 * the address no longer names. Slowness is made with Playwright's request
 * routing, each answer held until the test lets it go.
 */
import t, { type Test } from 'tap'
import type { Page, Request } from 'playwright-core'
import { allowConsoleErrors, browser, listeningGateway } from './browser.js'

const context = await browser(t)
const { base, registry } = await listeningGateway(t, null)
await registry.create('pages')
const photos = await registry.open('photos')
if (photos === null) throw new Error('no bucket')
// 150 keys under d00 (two pages), a few under k0.
for (let i = 0; i < 150; i++) await photos.put(`d00-${String(i).padStart(3, '0')}.txt`, 'd')
for (let i = 0; i < 3; i++) await photos.put(`k0-${i}.txt`, 'k')

/** A new page at `hash` of the console, closed at the end of `t`. */
async function open (t: Test, hash: string): Promise<Page> {
  const page = await context.newPage()
  t.teardown(async () => { await page.close() })
  await page.goto(`${base}/_console/${hash}`)
  return page
}

/** A gate: requests routed through `hold` wait until `release`. */
function gate (): { hold: () => Promise<void>, release: () => void } {
  let release = (): void => {}
  const held = new Promise<void>(resolve => { release = resolve })
  return { hold: async () => { await held }, release }
}

const rowKeys = async (page: Page): Promise<Array<string | null>> => await page.locator('tr.object').evaluateAll(rows => rows.map(r => r.getAttribute('data-key')))

t.test('a bucket left before its first answer came does not draw over the one opened since', async t => {
  const page = await open(t, '#/')
  await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
  const slow = gate()
  t.teardown(slow.release)
  await page.route(/\/r2\/buckets\/photos\/domains\/managed$/, async route => { await slow.hold(); await route.continue().catch(() => {}) })
  const asked = page.waitForRequest(/\/r2\/buckets\/photos\/domains\/managed$/)
  await page.getByRole('link', { name: 'photos', exact: true }).click()
  await asked
  // The user goes to another bucket while photos's answer is still to come.
  await page.goto(`${base}/_console/#/objects?bucket=pages&prefix=`)
  await page.getByText('No objects here yet').waitFor()
  const answered = page.waitForResponse(/\/r2\/buckets\/photos\/domains\/managed$/)
  slow.release()
  await answered
  // Time enough for the late view to list photos and draw, had it been let.
  await page.waitForTimeout(500)
  t.equal(await page.evaluate(() => location.hash), '#/objects?bucket=pages&prefix=')
  t.match(await page.locator('nav.breadcrumbs').textContent(), /pages/, 'the breadcrumbs name pages')
  t.notMatch(await page.locator('nav.breadcrumbs').textContent(), /photos/, 'not photos')
  t.equal(await page.locator('section.dropzone strong').textContent(), 'pages/', 'uploads go to pages')
  t.equal(await page.locator('section.dropzone').count(), 1, 'one drop zone')
  t.same(await rowKeys(page), [], 'no row of photos')
})

t.test('a bucket\'s settings left before they came do not draw over the settings opened since, nor over the tokens page', async t => {
  // A bucket without CORS rules answers its CORS read 404 (10059), which the page takes as no rules.
  allowConsoleErrors(/status of 404 .*\/cors\)$/)
  for (const [destination, shows] of [['#/settings?bucket=pages', 'Settings of pages'], ['#/tokens', 'Tokens']] as const) {
    const page = await open(t, '#/')
    await page.getByRole('link', { name: 'photos', exact: true }).waitFor()
    const slow = gate()
    t.teardown(slow.release)
    await page.route(/\/r2\/buckets\/photos\/cors$/, async route => { await slow.hold(); await route.continue().catch(() => {}) })
    const asked = page.waitForRequest(/\/r2\/buckets\/photos\/cors$/)
    await page.goto(`${base}/_console/#/settings?bucket=photos`)
    await asked
    // The user goes elsewhere while photos's settings are still to come.
    await page.goto(`${base}/_console/${destination}`)
    await page.getByRole('heading', { name: shows, exact: true }).waitFor()
    const answered = page.waitForResponse(/\/r2\/buckets\/photos\/cors$/)
    slow.release()
    await answered
    // Time enough for the late view to draw, had it been let.
    await page.waitForTimeout(500)
    t.equal(await page.evaluate(() => location.hash), destination)
    t.equal(await page.locator('main h2').first().textContent(), shows, `${destination} stays drawn`)
    t.equal(await page.getByRole('heading', { name: 'Settings of photos', exact: true }).count(), 0, 'photos\'s settings never draw')
  }
})

t.test('a search typed on: the slow listing of what was typed first draws nothing', async t => {
  const page = await open(t, '#/objects?bucket=photos&prefix=')
  await page.getByRole('button', { name: 'd00-000.txt', exact: true }).waitFor()
  const slow = gate()
  t.teardown(slow.release)
  const isK0 = (url: string): boolean => new URL(url).searchParams.get('prefix') === 'k0'
  await page.route(url => url.pathname === '/photos' && isK0(url.href), async route => { await slow.hold(); await route.continue().catch(() => {}) })
  const asked = page.waitForRequest((request: Request) => isK0(request.url()))
  await page.getByLabel('Search in photos').fill('k0')
  await asked
  await page.getByLabel('Search in photos').fill('d00')
  await page.getByText('0 folders, 100 objects (more on the next page).').waitFor()
  const answered = page.waitForResponse(response => isK0(response.url()))
  slow.release()
  await answered
  await page.waitForTimeout(300)
  t.equal(await page.getByLabel('Search in photos').inputValue(), 'd00')
  const keys = await rowKeys(page)
  t.equal(keys.length, 100, 'a page of d00')
  t.ok(keys.every(key => key?.startsWith('d00-') === true), 'the rows are those of d00, not k0')
  t.match(await page.locator('main > p.status').textContent(), /100 objects \(more on the next page\)/, 'and so is the status')

  await page.getByRole('button', { name: 'Next page', exact: true }).click()
  await page.getByText('0 folders, 50 objects.').waitFor()
  t.equal((await rowKeys(page))[0], 'd00-100.txt', 'Next page goes on from d00\'s cursor')
  t.equal(await page.locator('.pager span').textContent(), 'Page 2')
})

t.test('Next page clicked twice before the page comes: page 2, once', async t => {
  const page = await open(t, '#/objects?bucket=photos&prefix=')
  await page.getByRole('button', { name: 'd00-000.txt', exact: true }).waitFor()
  const slow = gate()
  t.teardown(slow.release)
  let asked = 0
  await page.route(url => url.pathname === '/photos' && url.searchParams.has('cursor'), async route => { asked++; await slow.hold(); await route.continue().catch(() => {}) })
  const next = page.getByRole('button', { name: 'Next page', exact: true })
  await next.dblclick()
  t.ok(await next.isDisabled(), 'the pager is disabled while the page loads')
  slow.release()
  await page.getByText(/^0 folders, \d+ objects/).waitFor()
  await page.waitForTimeout(300)
  t.equal(await page.locator('.pager span').textContent(), 'Page 2', 'the pager says page 2')
  t.equal((await rowKeys(page))[0], 'd00-100.txt', 'and shows it')
  t.equal(asked, 1, 'asked for once')
  await page.getByRole('button', { name: 'Previous page', exact: true }).click()
  await page.getByText('0 folders, 100 objects (more on the next page).').waitFor()
  t.equal(await page.locator('.pager span').textContent(), 'Page 1', 'Previous page goes back to the first')
  t.equal((await rowKeys(page))[0], 'd00-000.txt')
})
