/**
 * What the rule sections of a bucket's settings share (lifecycle, locks,
 * event notifications): a titled region with a table of the rules, a form
 * to add one and a status line. A change reads the rules it changes afresh
 * where the API takes them whole (lifecycle, locks: read, change, put
 * back, as wrangler does), then redraws the table from the API's answer,
 * so the page shows what the server kept, never what was typed.
 *
 * The console does not judge what is typed: days, dates and prefixes go
 * to the API as given (a field left empty is sent as nothing), and its
 * refusal is shown as the section's alert, in the API's words.
 */
import { askForTokenAgain } from './api.js'
import { h, showStatus } from './dom.js'

export interface RuleSection {
  section: HTMLElement
  /** Where the table of rules goes (redrawn after each change). */
  list: HTMLElement
  status: HTMLElement
  /** Runs a change: on success redraws, says `done` and answers true; on failure shows `what: <the API's message>` as an alert, or, refused for want of a token, asks for it (`askForTokenAgain`) as the other pages do. */
  run: (what: string, done: string, change: () => Promise<unknown>) => Promise<boolean>
}

export function ruleSection (id: string, title: string, hint: string, redraw: () => Promise<void>): RuleSection {
  const list = h('div', { class: 'rule-list' })
  const status = h('p', { role: 'status', class: 'status', 'aria-live': 'polite' })
  const section = h('section', { class: 'rules', 'aria-labelledby': `${id}-title` },
    h('h3', { id: `${id}-title` }, title),
    h('p', { class: 'hint' }, hint),
    list)
  const run = async (what: string, done: string, change: () => Promise<unknown>): Promise<boolean> => {
    try {
      await change()
    } catch (err) {
      if (!askForTokenAgain(err, section)) showStatus(status, `${what}: ${(err as Error).message}`, true)
      return false
    }
    try {
      await redraw()
    } catch (err) {
      if (!askForTokenAgain(err, section)) showStatus(status, `${what}: done, but reading the rules again failed: ${(err as Error).message}`, true)
      return true
    }
    showStatus(status, done)
    return true
  }
  return { section, list, status, run }
}

const DAY = 86400

/** Days typed into a field → whole seconds for the API; NaN (sent as null) for an empty or unreadable field, which the API refuses. */
export function daysToSeconds (text: string): number {
  const days = Number(text.trim())
  return text.trim() === '' || !Number.isFinite(days) ? Number.NaN : Math.round(days * DAY)
}

/** Seconds → "30 days", "1 day", "6 hours", "90 seconds": the largest unit that divides them. */
export function formatAge (seconds: number): string {
  const unit = (n: number, name: string): string => `${n} ${name}${n === 1 ? '' : 's'}`
  if (seconds % DAY === 0) return unit(seconds / DAY, 'day')
  if (seconds % 3600 === 0) return unit(seconds / 3600, 'hour')
  return unit(seconds, 'second')
}

/** An instant of the API → `YYYY-MM-DD` when it is a UTC midnight (what a date field gives), else as stored. */
export function formatDay (iso: string): string {
  return /T00:00:00(\.0+)?Z$/.test(iso) ? iso.slice(0, 10) : iso
}

/** A labelled field in the `.field` layout. */
export function field (id: string, label: string, control: HTMLElement, hint?: string): HTMLElement {
  const hintId = hint === undefined ? undefined : `${id}-hint`
  if (hintId !== undefined) control.setAttribute('aria-describedby', hintId)
  return h('div', { class: 'field' }, h('label', { for: id }, label), control,
    hint === undefined ? null : h('span', { id: hintId, class: 'hint' }, hint))
}

/**
 * A condition chooser: a select of kinds (`none` = "no such action") and
 * the days and date fields, each shown only for its kind.
 */
export interface ConditionInput {
  fieldset: HTMLElement
  kind: () => string
  days: () => string
  date: () => string
  /** Back to the first kind, both fields empty. */
  reset: () => void
}

export function conditionInput (id: string, legend: string, kinds: Array<[string, string]>): ConditionInput {
  const select = h('select', { id: `${id}-kind` }, ...kinds.map(([value, text]) => h('option', { value }, text)))
  const days = h('input', { id: `${id}-days`, type: 'number', step: 'any', inputmode: 'decimal' })
  const date = h('input', { id: `${id}-date`, type: 'date' })
  const daysField = field(`${id}-days`, `${legend}: days`, days)
  const dateField = field(`${id}-date`, `${legend}: date`, date)
  const show = (): void => {
    daysField.hidden = select.value !== 'Age'
    dateField.hidden = select.value !== 'Date'
  }
  select.addEventListener('change', show)
  show()
  const fieldset = h('fieldset', { class: 'condition' }, h('legend', {}, legend),
    field(`${id}-kind`, `${legend}: when`, select), daysField, dateField)
  const reset = (): void => {
    select.selectedIndex = 0
    days.value = ''
    date.value = ''
    show()
  }
  return { fieldset, kind: () => select.value, days: () => days.value, date: () => date.value, reset }
}

/** A table of rows under the given column heads, or one line saying there are none. */
export function ruleTable (caption: string, heads: string[], rows: HTMLElement[], empty: string): HTMLElement {
  return h('table', {},
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', {}, h('tr', {}, ...heads.map(head => h('th', { scope: 'col' }, head)))),
    h('tbody', {}, ...(rows.length > 0 ? rows : [h('tr', {}, h('td', { colspan: heads.length, class: 'empty' }, empty))])))
}
