/**
 * A bucket's event notification rules in its settings, and the backlog of
 * the queues they send to. The rules come grouped by queue (`GET
 * .../event_notifications/r2/{bucket}/configuration`); a new rule is added
 * for one existing queue (`PUT .../queues/{queue}`, which refuses a rule
 * that overlaps another for the same action, 10091) and one is deleted by
 * its id (`DELETE .../queues/{queue}` with `{ruleIds}`). The backlog of
 * each of those queues, the messages not yet acknowledged, is the queue's
 * `GET .../queues/{queue}/metrics`; it is read with the rules and again on
 * "Refresh backlog". Queues themselves are made elsewhere (wrangler, the
 * management API): the form offers the queues there are.
 */
import { accountApi, jsonBody } from './api.js'
import { h, replace } from './dom.js'
import { field, ruleSection, ruleTable } from './rule-section.js'
import { can } from './scope.js'

/** The actions a rule may name (src/bucket/notifications.ts), with what the page calls them. */
const actions: Array<[string, string]> = [
  ['PutObject', 'Object written (PutObject)'],
  ['CopyObject', 'Object copied (CopyObject)'],
  ['CompleteMultipartUpload', 'Multipart upload completed'],
  ['DeleteObject', 'Object deleted (DeleteObject)'],
  ['LifecycleDeletion', 'Object deleted by a lifecycle rule']
]

interface NotificationRule { ruleId: string, prefix: string, suffix: string, actions: string[], description?: string }
interface QueueRules { queueId: string, queueName: string, rules: NotificationRule[] }
interface Queue { queue_id: string, queue_name: string }

export async function notificationSection (bucket: string): Promise<HTMLElement> {
  const path = `/event_notifications/r2/${encodeURIComponent(bucket)}/configuration`
  const backlog = h('div', { class: 'rule-list' })
  const queueSelect = h('select', { id: 'notification-queue' })

  const drawBacklog = async (queues: QueueRules[]): Promise<void> => {
    const counts = await Promise.all(queues.map(async q =>
      (await accountApi<{ backlog_count: number }>(`/queues/${encodeURIComponent(q.queueId)}/metrics`)).result.backlog_count))
    replace(backlog, ruleTable(`Backlog of the queues ${bucket} sends to`, ['Queue', 'Messages waiting'],
      queues.map((q, i) => h('tr', { 'data-queue': q.queueName }, h('td', {}, q.queueName), h('td', { class: 'size' }, String(counts[i])))),
      'No queue receives this bucket\'s events.'))
  }

  const redraw = async (): Promise<void> => {
    const [config, all] = await Promise.all([
      accountApi<{ queues: QueueRules[] }>(path),
      accountApi<Queue[]>('/queues?per_page=1000')
    ])
    const queues = config.result.queues
    replace(ui.list, ruleTable(`Event notification rules of ${bucket}`, ['Queue', 'Prefix', 'Suffix', 'Actions', 'Description', ''],
      queues.flatMap(q => q.rules.map(rule => row(q, rule))), 'No event notification rules.'))
    const chosen = queueSelect.value
    replace(queueSelect, ...all.result.map(q => h('option', { value: q.queue_id }, q.queue_name)))
    if (all.result.some(q => q.queue_id === chosen)) queueSelect.value = chosen
    submit.disabled = all.result.length === 0
    noQueues.hidden = all.result.length > 0
    await drawBacklog(queues)
  }
  const ui = ruleSection('notifications', 'Event notifications',
    'A rule sends a message to a queue for each change of a matching object (key starting with the prefix and ending with the suffix) by one of its actions. Overlapping rules for the same action are refused.',
    redraw)

  // Credentials that may not change the bucket's settings see the rules and the backlog, and no control that changes them.
  const writes = can('bucket:write', bucket)
  const row = (queue: QueueRules, rule: NotificationRule): HTMLElement => {
    const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete notification rule ${rule.ruleId}` }, 'Delete')
    remove.addEventListener('click', () => {
      void ui.run('Notification rule', `Deleted the notification rule for ${queue.queueName}.`, async () =>
        await accountApi(`${path}/queues/${encodeURIComponent(queue.queueId)}`, { method: 'DELETE', ...jsonBody({ ruleIds: [rule.ruleId] }) }))
    })
    return h('tr', { 'data-rule': rule.ruleId },
      h('td', {}, queue.queueName),
      h('td', {}, rule.prefix === '' ? '(any)' : rule.prefix),
      h('td', {}, rule.suffix === '' ? '(any)' : rule.suffix),
      h('td', {}, rule.actions.join(', ')),
      h('td', {}, rule.description ?? ''),
      h('td', {}, writes ? remove : null))
  }

  const prefix = h('input', { id: 'notification-prefix', autocomplete: 'off' })
  const suffix = h('input', { id: 'notification-suffix', autocomplete: 'off' })
  const description = h('input', { id: 'notification-description', autocomplete: 'off' })
  const boxes = actions.map(([action, label]) => {
    const box = h('input', { type: 'checkbox', id: `notification-action-${action}`, value: action })
    return { box, field: h('div', { class: 'field inline' }, box, h('label', { for: `notification-action-${action}` }, label)) }
  })
  const submit = h('button', { type: 'submit' }, 'Add notification rule')
  const noQueues = h('p', { class: 'hint' }, 'There is no queue yet: make one first (wrangler queues create, or POST /client/v4/accounts/{account}/queues).')
  const form = h('form', { class: 'add-rule', 'aria-label': 'Add an event notification rule', novalidate: true },
    field('notification-queue', 'Queue', queueSelect), noQueues,
    field('notification-prefix', 'Prefix', prefix, 'Empty: any key.'),
    field('notification-suffix', 'Suffix', suffix, 'Empty: any key.'),
    h('fieldset', { class: 'condition' }, h('legend', {}, 'Actions'), ...boxes.map(b => b.field)),
    field('notification-description', 'Description', description),
    submit)
  form.addEventListener('submit', event => {
    event.preventDefault()
    const queue = queueSelect.selectedOptions[0]?.textContent ?? ''
    const rule: Record<string, unknown> = { prefix: prefix.value, suffix: suffix.value, actions: boxes.filter(b => b.box.checked).map(b => b.box.value) }
    if (description.value !== '') rule.description = description.value
    void ui.run('New notification rule', `Added a notification rule for ${queue}.`, async () =>
      await accountApi(`${path}/queues/${encodeURIComponent(queueSelect.value)}`, { method: 'PUT', ...jsonBody({ rules: [rule] }) }))
      .then(added => {
        if (!added) return
        for (const input of [prefix, suffix, description]) input.value = ''
        for (const b of boxes) b.box.checked = false
      })
  })

  const refresh = h('button', { type: 'button' }, 'Refresh backlog')
  refresh.addEventListener('click', () => { void ui.run('Backlog', 'Backlog read.', async () => {}) })

  await redraw()
  if (writes) ui.section.append(form)
  ui.section.append(ui.status,
    h('h4', {}, 'Queue backlog'),
    h('div', { class: 'toolbar' }, refresh),
    backlog)
  return ui.section
}
