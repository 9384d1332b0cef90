/**
 * List queries of the management API: pagination, ordering and filters.
 *
 * The official SDK writes nested filters as dotted keys (`account.id`,
 * `name.startswith`) and arrays as repeated keys (`type=A&type=AAAA`), which
 * arrive here as a flat object whose values are strings or string arrays.
 *
 * - `page` is an integer from 1 to `maxPage`; a page past the end answers an
 *   empty `result` (the SDK's auto-pagination stops only on an empty page).
 * - `per_page` is a positive integer; outside the endpoint's range it is
 *   clamped to it, as several well-known clients ask for more than a list
 *   allows.
 * - A parameter that takes one value (`page`, `per_page`, `order`, a cursor,
 *   ...) given twice is refused: nothing says which one the client meant.
 * - Repeated values of one filter are alternatives (any of them); `match=any`
 *   makes the filters alternatives too, `match=all` (default) requires all.
 *
 * Every list of the API, paged or cursor-based, reads its query with
 * `single`, `values`, `pageNumber` and `perPage`, so a malformed value is
 * 1198 on all of them alike (a cursor is checked by the list that made it).
 */
import { ManagementError } from './errors.js'

export type QueryValue = string | string[] | undefined
export type Query = Record<string, QueryValue>

/** The range of a list's `per_page`, and its value when none is asked for. */
export interface PageSize {
  defaultPerPage: number
  minPerPage: number
  maxPerPage: number
}

export interface ListSpec extends PageSize {
  /** Attributes `order` accepts. */
  orders: readonly string[]
}

/** The highest `page` answered: far beyond any list's last page, and echoed exactly. */
export const maxPage = 1_000_000

export interface ListQuery {
  page: number
  perPage: number
  order: string | undefined
  direction: 'asc' | 'desc'
  match: 'all' | 'any'
}

export interface ResultInfo {
  page: number
  per_page: number
  count: number
  total_count: number
  total_pages: number
}

/** The value of a parameter that takes one; given more than once, 1198. */
export function single (query: Query, key: string): string | undefined {
  const value = query[key]
  if (Array.isArray(value)) throw new ManagementError('InvalidQuery', `${key} given more than once`)
  return value
}

/** Every value given for `key` (repeated keys become several). */
export function values (query: Query, key: string): string[] {
  const value = query[key]
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

function positiveInteger (query: Query, key: string): number | undefined {
  const raw = single(query, key)
  if (raw === undefined || raw === '') return undefined
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new ManagementError('InvalidQuery', `${key} must be a positive integer`)
  return Number(raw)
}

/** `page`: an integer from 1 to `maxPage`, 1 when absent. */
export function pageNumber (query: Query): number {
  const page = positiveInteger(query, 'page') ?? 1
  if (page > maxPage) throw new ManagementError('InvalidQuery', `page must be an integer from 1 to ${maxPage}`)
  return page
}

/** `per_page`: a positive integer, clamped into the list's range; the list's default when absent. */
export function perPage (query: Query, size: PageSize): number {
  const asked = positiveInteger(query, 'per_page') ?? size.defaultPerPage
  return Math.min(size.maxPerPage, Math.max(size.minPerPage, asked))
}

export function parseListQuery (query: Query, spec: ListSpec): ListQuery {
  const page = pageNumber(query)
  const order = single(query, 'order')
  if (order !== undefined && !spec.orders.includes(order)) {
    throw new ManagementError('InvalidQuery', spec.orders.length === 0 ? 'this list takes no order' : `order must be one of ${spec.orders.join(', ')}`)
  }
  const direction = (single(query, 'direction') ?? 'asc').toLowerCase()
  if (direction !== 'asc' && direction !== 'desc') throw new ManagementError('InvalidQuery', 'direction must be asc or desc')
  const match = (single(query, 'match') ?? 'all').toLowerCase()
  if (match !== 'all' && match !== 'any') throw new ManagementError('InvalidQuery', 'match must be any or all')
  return { page, perPage: perPage(query, spec), order, direction, match }
}

/** A filter on one attribute; several values of one filter are alternatives. */
export type Predicate<T> = (item: T) => boolean

type TextOperator = 'exact' | 'contains' | 'startswith' | 'endswith' | 'notequal'

function textTest (op: TextOperator, wanted: string): (actual: string) => boolean {
  const w = wanted.toLowerCase()
  switch (op) {
    case 'exact': return a => a.toLowerCase() === w
    case 'notequal': return a => a.toLowerCase() !== w
    case 'contains': return a => a.toLowerCase().includes(w)
    case 'startswith': return a => a.toLowerCase().startsWith(w)
    case 'endswith': return a => a.toLowerCase().endsWith(w)
  }
}

/** The hosted API's value prefixes on plain keys: `name=contains:shop`, `name=starts_with:a`. */
const valuePrefixes: Array<[string, TextOperator]> = [
  ['equal:', 'exact'], ['not_equal:', 'notequal'], ['contains:', 'contains'],
  ['starts_with:', 'startswith'], ['ends_with:', 'endswith']
]

function prefixedTest (value: string): (actual: string) => boolean {
  for (const [prefix, op] of valuePrefixes) {
    if (value.startsWith(prefix)) return textTest(op, value.slice(prefix.length))
  }
  return textTest('exact', value)
}

/**
 * Filters on a text attribute from `key`, `key.exact`, `key.contains`,
 * `key.startswith`, `key.endswith`, `key.present` and `key.absent`.
 */
export function textFilters<T> (query: Query, key: string, read: (item: T) => string | null | undefined): Array<Predicate<T>> {
  const filters: Array<Predicate<T>> = []
  const plain = values(query, key)
  if (plain.length > 0) {
    const tests = plain.map(prefixedTest)
    filters.push(item => tests.some(test => test(read(item) ?? '')))
  }
  for (const op of ['exact', 'contains', 'startswith', 'endswith'] as const) {
    const wanted = values(query, `${key}.${op}`)
    if (wanted.length === 0) continue
    const tests = wanted.map(w => textTest(op, w))
    filters.push(item => tests.some(test => test(read(item) ?? '')))
  }
  if (query[`${key}.present`] !== undefined) filters.push(item => (read(item) ?? '') !== '')
  if (query[`${key}.absent`] !== undefined) filters.push(item => (read(item) ?? '') === '')
  return filters
}

/** A filter on a boolean attribute (`proxied=true`). */
export function booleanFilters<T> (query: Query, key: string, read: (item: T) => boolean): Array<Predicate<T>> {
  const raw = single(query, key)
  if (raw === undefined) return []
  if (raw !== 'true' && raw !== 'false') throw new ManagementError('InvalidQuery', `${key} must be true or false`)
  const wanted = raw === 'true'
  return [item => read(item) === wanted]
}

/** Applies filters with `match` semantics. */
export function applyFilters<T> (items: T[], filters: Array<Predicate<T>>, match: 'all' | 'any'): T[] {
  if (filters.length === 0) return items
  return items.filter(item => match === 'all' ? filters.every(f => f(item)) : filters.some(f => f(item)))
}

/** Sorts by the attribute `order` names (stable; ties keep the given order). */
export function sortBy<T> (items: T[], read: ((item: T) => string | number | boolean) | undefined, direction: 'asc' | 'desc'): T[] {
  if (read === undefined) return direction === 'desc' ? [...items].reverse() : items
  const sign = direction === 'desc' ? -1 : 1
  return [...items].sort((a, b) => {
    const x = read(a)
    const y = read(b)
    if (x === y) return 0
    if (typeof x === 'string' && typeof y === 'string') return sign * x.localeCompare(y)
    return sign * (x < y ? -1 : 1)
  })
}

/** One page of `items` and the `result_info` describing it. */
export function paginate<T> (items: T[], list: Pick<ListQuery, 'page' | 'perPage'>): { result: T[], resultInfo: ResultInfo } {
  const start = (list.page - 1) * list.perPage
  const result = items.slice(start, start + list.perPage)
  return {
    result,
    resultInfo: {
      page: list.page,
      per_page: list.perPage,
      count: result.length,
      total_count: items.length,
      total_pages: Math.ceil(items.length / list.perPage)
    }
  }
}
