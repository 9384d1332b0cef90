/**
 * A bucket's settings document as a registry storage reads it back: parsed
 * and judged by the rules of a write (`validateSettingsPatch`, no second
 * validator), so that what a hand edit, a crash or another program left in
 * the file never reaches a door as a value of the wrong type.
 *
 * Promises:
 * - A storage answers null only when the bucket has no document; text that
 *   is not a settings document (not JSON, `null`, `{}`, a `cors` that is a
 *   number, a `creationDate` that is no date) is `SettingsDamaged` (10915),
 *   a storage failure naming the file (`path`, for the log) and, in its
 *   cause, what is wrong with it. Never null: the registry would take a
 *   damaged file for a missing one.
 * - A field today's rules refuse (a `cors` that is a number, a lifecycle
 *   rule an older version took) is left out, so its default applies, and
 *   named by `ignoredFields`: the rest of the bucket keeps working, and the
 *   file is left as it is until it is mended or a settings write replaces
 *   the field.
 * - Fields of a newer version (names no rule knows) are kept as they are.
 */
import { BucketError } from './errors.js'
import { validateSettingsPatch, type BucketSettings } from './settings.js'

/** A bucket's settings as a registry storage keeps them. */
export interface SettingsDocument {
  format: 1
  /** ISO 8601; tells one incarnation of a bucket name from the next. */
  creationDate: string
  /** As written; documents of older versions may lack fields (the registry fills in defaults). */
  settings: Partial<BucketSettings>
}

/** The fields a document's reading left out, with what was wrong with each (`ignoredFields`). */
const ignored = new WeakMap<SettingsDocument, string[]>()

/** What was wrong with the fields `parseSettingsDocument` left out of `document` (none: empty). */
export function ignoredFields (document: SettingsDocument): readonly string[] {
  return ignored.get(document) ?? []
}

/** What is wrong with `value` as a settings document, or the document with each field checked as a write's (one refused is left out). */
function judged (value: unknown): SettingsDocument | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `the document must be an object (got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`
  const { creationDate, settings } = value as Record<string, unknown>
  if (typeof creationDate !== 'string' || Number.isNaN(Date.parse(creationDate))) return 'creationDate must be an ISO 8601 date'
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) return 'settings must be an object'
  const checked: Record<string, unknown> = {}
  const problems: string[] = []
  for (const [field, given] of Object.entries(settings)) {
    try {
      Object.assign(checked, { [field]: given }, validateSettingsPatch({ [field]: given }))
    } catch (err) {
      problems.push((err as Error).message)
    }
  }
  const document = Object.assign({}, value as SettingsDocument, { settings: checked as Partial<BucketSettings> })
  if (problems.length > 0) ignored.set(document, problems)
  return document
}

/**
 * `text`, read from `where` (a file, or a catalog's row), as a settings
 * document; throws `SettingsDamaged` naming `where` and what is wrong.
 */
export function parseSettingsDocument (text: string, where: string): SettingsDocument {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw settingsDamaged(where, `is not valid JSON: ${(err as Error).message}`)
  }
  const document = judged(value)
  if (typeof document === 'string') throw settingsDamaged(where, `is not a settings document: ${document}`)
  return document
}

function settingsDamaged (where: string, reason: string): BucketError {
  return new BucketError('SettingsDamaged', 'settings', undefined, { path: where, cause: new Error(`${where} ${reason}`) })
}

/** Whether `err` says a bucket's settings document is damaged (and why, in its cause). */
export function isSettingsDamaged (err: unknown): err is BucketError {
  return err instanceof BucketError && err.errorName === 'SettingsDamaged'
}

/** The reason `parseSettingsDocument` gave, for a log line. */
export function damageOf (err: BucketError): string {
  return err.cause instanceof Error ? err.cause.message : err.message
}
