/**
 * The rule sections of a bucket's settings in a real headless Chromium
 * against a listening gateway: lifecycle rules (add with expiry,
 * transition and abort; disable; delete), bucket locks (add by age and
 * indefinitely, remove) and event notification rules (add for a queue,
 * delete), with the queue's backlog read again after a write. Each change
 * made in the page is checked through the management API, and the locks
 * and notifications by their effect on the HTTP routes too; each refusal
 * (negative days, an overlapping rule, no action) must show the API's
 * message as the section's alert and change nothing.
 */
import t from 'tap'
import { allowConsoleErrors, browser, listeningGateway } from './browser.js'

const context = await browser(t)
const { base } = await listeningGateway(t, null)
const page = await context.newPage()

/** The management API and the routes from outside the page (no token on this server: any bearer is accepted by the management API). */
async function api (method: string, path: string, body?: unknown): Promise<{ status: number, body: any }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: 'Bearer outside', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body)
  })
  const text = await response.text()
  let parsed: any = text
  try { parsed = JSON.parse(text) } catch {}
  return { status: response.status, body: parsed }
}
const v4 = '/client/v4/accounts/local'

async function openSettings (): Promise<void> {
  // The settings page reads the bucket's CORS rules, which are not set (404); Chromium logs it.
  allowConsoleErrors(/status of 404 .*\/cors\)$/)
  // From a blank page: going to the URL the page already shows would change nothing.
  await page.goto('about:blank')
  await page.goto(`${base}/_console/#/settings?bucket=photos`)
  await page.getByRole('heading', { name: 'Settings of photos' }).waitFor()
}

t.test('lifecycle rules: add, disable, refuse, delete', async t => {
  // The refused rule is a 400 answer, which Chromium logs.
  allowConsoleErrors(/status of 400/)
  await openSettings()
  const section = page.getByRole('region', { name: 'Lifecycle rules' })
  t.match(await section.locator('tr[data-rule="Default Multipart Abort Rule"]').textContent(), /after 7 days/, 'the default rule of a new bucket')

  await section.getByLabel('Rule ID').fill('expire-logs')
  await section.getByLabel('Prefix').fill('logs/')
  await section.getByLabel('Delete objects: when').selectOption('Age')
  await section.getByLabel('Delete objects: days').fill('30')
  await section.getByLabel('Move to Infrequent Access: when').selectOption('Date')
  await section.getByLabel('Move to Infrequent Access: date').fill('2027-01-01')
  await section.getByLabel('Abort unfinished uploads after (days)').fill('2')
  await section.getByRole('button', { name: 'Add lifecycle rule', exact: true }).click()
  await section.getByText('Added lifecycle rule expire-logs.').waitFor()
  const stored = (await api('GET', `${v4}/r2/buckets/photos/lifecycle`)).body.result.rules
  t.same(stored.find((r: { id: string }) => r.id === 'expire-logs'), {
    id: 'expire-logs',
    enabled: true,
    conditions: { prefix: 'logs/' },
    deleteObjectsTransition: { condition: { type: 'Age', maxAge: 30 * 86400 } },
    storageClassTransitions: [{ condition: { type: 'Date', date: '2027-01-01T00:00:00.000Z' }, storageClass: 'InfrequentAccess' }],
    abortMultipartUploadsTransition: { condition: { type: 'Age', maxAge: 2 * 86400 } }
  }, 'the management API has the rule, ages in seconds')
  t.ok(stored.some((r: { id: string }) => r.id === 'Default Multipart Abort Rule'), 'and kept the default rule')
  const row = section.locator('tr[data-rule="expire-logs"]')
  t.same(await row.locator('td').allTextContents(), ['expire-logs', '', 'logs/', 'after 30 days', 'on 2027-01-01', 'after 2 days', 'Delete'], 'listed')
  t.equal(await section.getByLabel('Rule ID').inputValue(), '', 'the form is cleared')
  t.equal(await section.getByLabel('Delete objects: days').isVisible(), false, 'and its days field hidden again')

  await section.getByLabel('Lifecycle rule expire-logs enabled').uncheck()
  await section.getByText('Lifecycle rule expire-logs disabled.').waitFor()
  const disabled = (await api('GET', `${v4}/r2/buckets/photos/lifecycle`)).body.result.rules.find((r: { id: string }) => r.id === 'expire-logs')
  t.equal(disabled.enabled, false, 'disabled through the management API')

  await section.getByLabel('Rule ID').fill('negative')
  await section.getByLabel('Delete objects: when').selectOption('Age')
  await section.getByLabel('Delete objects: days').fill('-5')
  await section.getByRole('button', { name: 'Add lifecycle rule', exact: true }).click()
  const alert = section.getByRole('alert')
  await alert.waitFor()
  t.match(await alert.textContent(), /^New lifecycle rule: Invalid argument: rules\[\d\]\.deleteObjectsTransition\.condition\.maxAge must be a whole number of seconds from 1 to 3153600000$/, 'the API\'s refusal, as the section\'s alert')
  t.notOk((await api('GET', `${v4}/r2/buckets/photos/lifecycle`)).body.result.rules.some((r: { id: string }) => r.id === 'negative'), 'nothing stored')
  t.equal(await section.getByLabel('Rule ID').inputValue(), 'negative', 'the refused input stays for correction')

  await section.getByRole('button', { name: 'Delete lifecycle rule expire-logs', exact: true }).click()
  await section.getByText('Deleted lifecycle rule expire-logs.').waitFor()
  t.same((await api('GET', `${v4}/r2/buckets/photos/lifecycle`)).body.result.rules.map((r: { id: string }) => r.id), ['Default Multipart Abort Rule'], 'deleted through the management API')
  t.equal(await section.locator('tr[data-rule="expire-logs"]').count(), 0, 'and from the table')
})

t.test('bucket locks: add, refuse, remove', async t => {
  allowConsoleErrors(/status of 400/)
  t.equal((await api('PUT', '/photos/legal/contract.pdf', 'signed')).status, 200)
  await openSettings()
  const section = page.getByRole('region', { name: 'Bucket locks' })
  await section.getByText('No locks').waitFor()

  await section.getByLabel('Lock ID').fill('keep-legal')
  await section.getByLabel('Prefix').fill('legal/')
  await section.getByLabel('Retention: when').selectOption('Age')
  await section.getByLabel('Retention: days').fill('1')
  await section.getByRole('button', { name: 'Add lock', exact: true }).click()
  await section.getByText('Added lock keep-legal.').waitFor()
  t.same((await api('GET', `${v4}/r2/buckets/photos/lock`)).body.result.rules,
    [{ id: 'keep-legal', enabled: true, prefix: 'legal/', condition: { type: 'Age', maxAgeSeconds: 86400 } }], 'the management API has the lock')
  const refused = await api('DELETE', '/photos/legal/contract.pdf')
  t.equal(refused.status, 403, 'the routes refuse to delete a locked object')
  t.equal(refused.body.errors[0].code, 10913)

  await section.getByLabel('Lock ID').fill('vault')
  await section.getByLabel('Prefix').fill('vault/')
  await section.getByLabel('Retention: when').selectOption('Indefinite')
  await section.getByRole('button', { name: 'Add lock', exact: true }).click()
  await section.getByText('Added lock vault.').waitFor()
  t.same(await section.locator('tbody tr').evaluateAll(rows => rows.map(r => Array.from(r.querySelectorAll('td')).slice(0, 4).map(td => td.textContent))), [
    ['keep-legal', 'legal/', '1 day after upload', 'yes'],
    ['vault', 'vault/', 'indefinitely', 'yes']
  ], 'both listed')

  await section.getByLabel('Lock ID').fill('negative')
  await section.getByLabel('Retention: when').selectOption('Age')
  await section.getByLabel('Retention: days').fill('-1')
  await section.getByRole('button', { name: 'Add lock', exact: true }).click()
  const alert = section.getByRole('alert')
  await alert.waitFor()
  t.match(await alert.textContent(), /^New lock: .*rules\[2\]\.condition\.maxAgeSeconds must be a whole number of seconds/, 'the API\'s refusal, as the section\'s alert')
  t.equal((await api('GET', `${v4}/r2/buckets/photos/lock`)).body.result.rules.length, 2, 'nothing stored')

  await section.getByRole('button', { name: 'Remove lock keep-legal', exact: true }).click()
  await section.getByText('Removed lock keep-legal.').waitFor()
  t.same((await api('GET', `${v4}/r2/buckets/photos/lock`)).body.result.rules.map((r: { id: string }) => r.id), ['vault'], 'removed through the management API')
  t.equal((await api('DELETE', '/photos/legal/contract.pdf')).status, 204, 'and the object may be deleted again')
})

t.test('event notification rules and the queue backlog', async t => {
  // The refused rules are 409 (overlap) and 400 (no action) answers, which Chromium logs.
  allowConsoleErrors(/status of 409/, /status of 400/)
  const queue = await api('POST', `${v4}/queues`, { queue_name: 'photo-events' })
  t.equal(queue.status, 200, `a queue: ${JSON.stringify(queue.body)}`)
  const queueId = queue.body.result.queue_id as string
  const backlog = async (): Promise<number> => (await api('GET', `${v4}/queues/${queueId}/metrics`)).body.result.backlog_count
  await openSettings()
  const section = page.getByRole('region', { name: 'Event notifications' })
  await section.getByText('No event notification rules.').waitFor()

  await section.getByLabel('Queue', { exact: true }).selectOption({ label: 'photo-events' })
  await section.getByLabel('Prefix').fill('cats/')
  await section.getByLabel('Suffix').fill('.jpg')
  await section.getByLabel('Object written (PutObject)').check()
  await section.getByLabel('Object deleted (DeleteObject)').check()
  await section.getByLabel('Description').fill('new cats')
  await section.getByRole('button', { name: 'Add notification rule', exact: true }).click()
  await section.getByText('Added a notification rule for photo-events.').waitFor()
  const config = (await api('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result
  t.equal(config.queues.length, 1)
  t.equal(config.queues[0].queueId, queueId)
  t.match(config.queues[0].rules, [{ prefix: 'cats/', suffix: '.jpg', actions: ['PutObject', 'DeleteObject'], description: 'new cats' }], 'the management API has the rule')
  const ruleId = config.queues[0].rules[0].ruleId as string
  t.same(await section.locator(`tr[data-rule="${ruleId}"] td`).allTextContents(),
    ['photo-events', 'cats/', '.jpg', 'PutObject, DeleteObject', 'new cats', 'Delete'], 'listed')

  const waiting = section.locator('tr[data-queue="photo-events"] td').nth(1)
  t.equal(await waiting.textContent(), '0', 'no message waits yet')
  t.equal((await api('PUT', '/photos/cats/tom.jpg', 'meow')).status, 200)
  t.equal((await api('PUT', '/photos/dogs/rex.jpg', 'woof')).status, 200)
  t.equal(await backlog(), 1, 'the matching write is a message (the management API)')
  await section.getByRole('button', { name: 'Refresh backlog', exact: true }).click()
  await section.locator('tr[data-queue="photo-events"] td', { hasText: /^1$/ }).waitFor()
  t.equal(await waiting.textContent(), '1', 'the page shows it waiting')

  await section.getByLabel('Prefix').fill('cats/kittens/')
  await section.getByLabel('Object written (PutObject)').check()
  await section.getByRole('button', { name: 'Add notification rule', exact: true }).click()
  const alert = section.getByRole('alert')
  await alert.waitFor()
  t.match(await alert.textContent(), /^New notification rule: Overlapping rules: .*cats\/kittens\/.*overlaps.*cats\//, 'the API\'s overlap refusal, as the section\'s alert')
  await section.getByLabel('Object written (PutObject)').uncheck()
  await section.getByRole('button', { name: 'Add notification rule', exact: true }).click()
  await section.getByRole('alert').filter({ hasText: /actions must list actions/ }).waitFor()
  t.equal((await api('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result.queues[0].rules.length, 1, 'nothing added')

  await section.getByRole('button', { name: `Delete notification rule ${ruleId}`, exact: true }).click()
  await section.getByText('Deleted the notification rule for photo-events.').waitFor()
  t.same((await api('GET', `${v4}/event_notifications/r2/photos/configuration`)).body.result.queues, [], 'deleted through the management API')
  await section.getByText('No queue receives this bucket\'s events.').waitFor()
  t.equal((await api('PUT', '/photos/cats/felix.jpg', 'purr')).status, 200)
  t.equal(await backlog(), 1, 'no rule, no new message')
})
