/**
 * A bucket's lifecycle rules in its settings: the rules as a table (id,
 * enabled, prefix, expiry, transition to Infrequent Access, abort of
 * unfinished uploads), a switch to enable or disable each, delete, and a
 * form to add one. The management API takes the rules whole (`PUT
 * .../lifecycle`), so each change reads them, changes the list and puts it
 * back. A bucket that never had rules reads as the default rule (abort
 * uploads after 7 days); the first change keeps it, as the hosted
 * dashboard does.
 *
 * Ages are shown and typed in days (the API counts seconds), dates as
 * days (midnight UTC).
 */
import { jsonBody, management } from './api.js'
import { h, replace } from './dom.js'
import { can } from './scope.js'
import { conditionInput, daysToSeconds, field, formatAge, formatDay, ruleSection, ruleTable, type ConditionInput } from './rule-section.js'

type Condition = { type: 'Age', maxAge: number } | { type: 'Date', date: string }

interface LifecycleRule {
  id: string
  enabled: boolean
  conditions: { prefix?: string }
  deleteObjectsTransition?: { condition: Condition }
  storageClassTransitions?: Array<{ condition: Condition, storageClass: string }>
  abortMultipartUploadsTransition?: { condition: Condition }
}

function describe (condition: Condition | undefined, verb: string): string {
  if (condition === undefined) return '—'
  return condition.type === 'Age' ? `${verb} ${formatAge(condition.maxAge)}` : `on ${formatDay(condition.date)}`
}

/** The condition of a chooser, or undefined for "never". */
function conditionOf (input: ConditionInput): Condition | undefined {
  switch (input.kind()) {
    case 'Age': return { type: 'Age', maxAge: daysToSeconds(input.days()) }
    case 'Date': return { type: 'Date', date: input.date() === '' ? '' : `${input.date()}T00:00:00Z` }
    default: return undefined
  }
}

export async function lifecycleSection (bucket: string): Promise<HTMLElement> {
  const path = `/${encodeURIComponent(bucket)}/lifecycle`
  const read = async (): Promise<LifecycleRule[]> => (await management<{ rules: LifecycleRule[] }>(path)).result.rules
  const write = async (rules: LifecycleRule[]): Promise<unknown> => await management(path, { method: 'PUT', ...jsonBody({ rules }) })

  const redraw = async (): Promise<void> => {
    const rules = await read()
    replace(ui.list, ruleTable(`Lifecycle rules of ${bucket}`,
      ['ID', 'Enabled', 'Prefix', 'Delete objects', 'To Infrequent Access', 'Abort unfinished uploads', ''],
      rules.map(rule => row(rule)), 'No lifecycle rules: objects stay until deleted.'))
  }
  const ui = ruleSection('lifecycle', 'Lifecycle rules',
    'Objects under a rule\'s prefix are deleted or moved to Infrequent Access at an age (in days since upload) or on a date; unfinished multipart uploads are aborted at an age.',
    redraw)

  // Credentials that may not change the bucket's settings see the rules and no control.
  const writes = can('bucket:write', bucket)
  const row = (rule: LifecycleRule): HTMLElement => {
    const enabled = h('input', { type: 'checkbox', 'aria-label': `Lifecycle rule ${rule.id} enabled` })
    enabled.checked = rule.enabled
    enabled.disabled = !writes
    enabled.addEventListener('change', () => {
      void ui.run(`Lifecycle rule ${rule.id}`, `Lifecycle rule ${rule.id} ${enabled.checked ? 'enabled' : 'disabled'}.`, async () => {
        const rules = await read()
        const found = rules.find(r => r.id === rule.id)
        if (found === undefined) throw new Error('the rule is no longer there')
        found.enabled = enabled.checked
        return await write(rules)
      }).then(changed => { if (!changed) enabled.checked = rule.enabled })
    })
    const remove = h('button', { type: 'button', class: 'danger', 'aria-label': `Delete lifecycle rule ${rule.id}` }, 'Delete')
    remove.addEventListener('click', () => {
      void ui.run(`Lifecycle rule ${rule.id}`, `Deleted lifecycle rule ${rule.id}.`, async () =>
        await write((await read()).filter(r => r.id !== rule.id)))
    })
    const transition = rule.storageClassTransitions?.find(t => t.storageClass === 'InfrequentAccess')
    return h('tr', { 'data-rule': rule.id },
      h('td', {}, rule.id),
      h('td', {}, enabled),
      h('td', {}, rule.conditions.prefix === undefined || rule.conditions.prefix === '' ? '(all keys)' : rule.conditions.prefix),
      h('td', {}, describe(rule.deleteObjectsTransition?.condition, 'after')),
      h('td', {}, describe(transition?.condition, 'after')),
      h('td', {}, describe(rule.abortMultipartUploadsTransition?.condition, 'after')),
      h('td', {}, writes ? remove : null))
  }

  const id = h('input', { id: 'lifecycle-id', required: true, autocomplete: 'off' })
  const prefix = h('input', { id: 'lifecycle-prefix', autocomplete: 'off' })
  const expiry = conditionInput('lifecycle-expire', 'Delete objects', [['', 'never'], ['Age', 'after some days'], ['Date', 'on a date']])
  const transition = conditionInput('lifecycle-transition', 'Move to Infrequent Access', [['', 'never'], ['Age', 'after some days'], ['Date', 'on a date']])
  const abort = h('input', { id: 'lifecycle-abort', type: 'number', step: 'any', inputmode: 'decimal' })
  const form = h('form', { class: 'add-rule', 'aria-label': 'Add a lifecycle rule', novalidate: true },
    field('lifecycle-id', 'Rule ID', id),
    field('lifecycle-prefix', 'Prefix', prefix, 'Empty: every key of the bucket.'),
    expiry.fieldset, transition.fieldset,
    field('lifecycle-abort', 'Abort unfinished uploads after (days)', abort, 'Empty: never.'),
    h('button', { type: 'submit' }, 'Add lifecycle rule'))
  form.addEventListener('submit', event => {
    event.preventDefault()
    const rule: LifecycleRule = { id: id.value.trim(), enabled: true, conditions: { prefix: prefix.value } }
    const expire = conditionOf(expiry)
    if (expire !== undefined) rule.deleteObjectsTransition = { condition: expire }
    const move = conditionOf(transition)
    if (move !== undefined) rule.storageClassTransitions = [{ condition: move, storageClass: 'InfrequentAccess' }]
    if (abort.value.trim() !== '') rule.abortMultipartUploadsTransition = { condition: { type: 'Age', maxAge: daysToSeconds(abort.value) } }
    void ui.run('New lifecycle rule', `Added lifecycle rule ${rule.id}.`, async () => await write([...await read(), rule]))
      .then(added => {
        if (!added) return
        for (const input of [id, prefix, abort]) input.value = ''
        expiry.reset()
        transition.reset()
      })
  })

  await redraw()
  if (writes) ui.section.append(form)
  ui.section.append(ui.status)
  return ui.section
}
