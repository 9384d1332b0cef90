/**
 * A bucket's locks in its settings: the retention rules as a table (id,
 * prefix, retention, enabled), remove, and a form to add one. Like
 * wrangler's `r2 bucket lock add|remove`, a change reads the rules, changes
 * the list and puts it back whole (`PUT .../lock`). A lock keeps the
 * objects under its prefix from being deleted or overwritten for a number
 * of days after their upload, until a date, or for good.
 */
import { jsonBody, management } from './api.js'
import { h, replace } from './dom.js'
import { can } from './scope.js'
import { conditionInput, daysToSeconds, field, formatAge, formatDay, ruleSection, ruleTable } from './rule-section.js'

type LockCondition = { type: 'Age', maxAgeSeconds: number } | { type: 'Date', date: string } | { type: 'Indefinite' }

interface LockRule { id: string, enabled: boolean, prefix?: string, condition: LockCondition }

function describe (condition: LockCondition): string {
  switch (condition.type) {
    case 'Age': return `${formatAge(condition.maxAgeSeconds)} after upload`
    case 'Date': return `until ${formatDay(condition.date)}`
    default: return 'indefinitely'
  }
}

export async function lockSection (bucket: string): Promise<HTMLElement> {
  const path = `/${encodeURIComponent(bucket)}/lock`
  const read = async (): Promise<LockRule[]> => (await management<{ rules: LockRule[] }>(path)).result.rules
  const write = async (rules: LockRule[]): Promise<unknown> => await management(path, { method: 'PUT', ...jsonBody({ rules }) })

  const redraw = async (): Promise<void> => {
    const rules = await read()
    replace(ui.list, ruleTable(`Bucket locks of ${bucket}`, ['ID', 'Prefix', 'Retention', 'Enabled', ''],
      rules.map(rule => row(rule)), 'No locks: objects may be deleted or overwritten at any time.'))
  }
  const ui = ruleSection('locks', 'Bucket locks',
    'A lock keeps the objects under its prefix from being deleted or overwritten: for some days after their upload, until a date, or indefinitely.',
    redraw)

  // Credentials that may not change the bucket's settings see the locks and no control.
  const writes = can('bucket:write', bucket)
  const row = (rule: LockRule): HTMLElement => {
    const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Remove lock ${rule.id}` }, 'Remove')
    remove.addEventListener('click', () => {
      void ui.run(`Lock ${rule.id}`, `Removed lock ${rule.id}.`, async () => await write((await read()).filter(r => r.id !== rule.id)))
    })
    return h('tr', { 'data-rule': rule.id },
      h('td', {}, rule.id),
      h('td', {}, rule.prefix === undefined || rule.prefix === '' ? '(all keys)' : rule.prefix),
      h('td', {}, describe(rule.condition)),
      h('td', {}, rule.enabled ? 'yes' : 'no'),
      h('td', {}, writes ? remove : null))
  }

  const id = h('input', { id: 'lock-id', required: true, autocomplete: 'off' })
  const prefix = h('input', { id: 'lock-prefix', autocomplete: 'off' })
  const retention = conditionInput('lock-retention', 'Retention', [['Age', 'some days after upload'], ['Date', 'until a date'], ['Indefinite', 'indefinitely']])
  const enabled = h('input', { id: 'lock-enabled', type: 'checkbox', checked: true })
  const form = h('form', { class: 'add-rule', 'aria-label': 'Add a bucket lock', novalidate: true },
    field('lock-id', 'Lock ID', id),
    field('lock-prefix', 'Prefix', prefix, 'Empty: every key of the bucket.'),
    retention.fieldset,
    h('div', { class: 'field inline' }, enabled, h('label', { for: 'lock-enabled' }, 'Enabled')),
    h('button', { type: 'submit' }, 'Add lock'))
  form.addEventListener('submit', event => {
    event.preventDefault()
    const condition: LockCondition = retention.kind() === 'Age'
      ? { type: 'Age', maxAgeSeconds: daysToSeconds(retention.days()) }
      : retention.kind() === 'Date' ? { type: 'Date', date: retention.date() } : { type: 'Indefinite' }
    const rule: LockRule = { id: id.value.trim(), enabled: enabled.checked, condition }
    if (prefix.value !== '') rule.prefix = prefix.value
    void ui.run('New lock', `Added lock ${rule.id}.`, async () => await write([...await read(), rule])).then(added => {
      if (!added) return
      id.value = ''
      prefix.value = ''
      enabled.checked = true
      retention.reset()
    })
  })

  await redraw()
  if (writes) ui.section.append(form)
  ui.section.append(ui.status)
  return ui.section
}
