/**
 * A bucket's settings document as a registry storage reads it back, and
 * the settings the registry serves from it.
 *
 * Promises:
 * - A storage answers null only when the bucket has no document; text that
 *   is not a settings document (not JSON, `null`, `{}`, not an object, a
 *   `format` other than 1, a `creationDate` that is no ISO 8601 date,
 *   `settings` that are no object) is
 *   `SettingsDamaged` (10915), a storage failure naming the file (`path`,
 *   for the log) and, in its cause, what is wrong with it. Never null: the
 *   registry would take a damaged file for a missing one.
 * - The document comes back as stored: a settings write merges its change
 *   over the stored fields, so a field nobody changed stays as it was.
 * - `servedSettings` judges each field by the rules of a write
 *   (`validateSettingsPatch`, no second validator): a field they refuse (a
 *   `cors` that is a number, a lifecycle rule an older version took) is
 *   left out, so its default applies, and named with what is wrong; the
 *   rest of the bucket keeps working. Fields of a newer version (names no
 *   rule knows) are kept as they are.
 */
import { BucketError } from './errors.js'
import { parseRuleDate } from './rule-time.js'
import { validateSettingsPatch, type BucketSettings } from './settings.js'

/** A bucket's settings as a registry storage keeps them. */
export interface SettingsDocument {
  format: 1
  /** ISO 8601; tells one incarnation of a bucket name from the next. */
  creationDate: string
  /** As written; documents of older versions may lack fields (the registry fills in defaults). */
  settings: Partial<BucketSettings>
}

/** What is wrong with `value` as a settings document, or the document. */
function judged (value: unknown): SettingsDocument | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `the document must be an object (got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value})`
  const { format, creationDate, settings } = value as Record<string, unknown>
  // Another format is a newer version's (a downgrade): read as this one's, its fields could mean something else.
  if (format !== undefined && format !== 1) return `format ${JSON.stringify(format)} is not one this version reads (format 1; written by a newer fsbucket?)`
  // Read strictly: `Date.parse` takes "2020", "1" (2001), a time without a zone (the server's local time) and February 30
  // (March 2), each an instant no write made; the date is the bucket's incarnation, so it must read the same everywhere.
  if (typeof creationDate !== 'string' || Number.isNaN(parseRuleDate(creationDate))) return 'creationDate must be an ISO 8601 date (YYYY-MM-DD, or a date and time with a zone)'
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings)) return 'settings must be an object'
  return value as SettingsDocument
}

/**
 * The settings a bucket is served with: each stored field as a write would
 * take it, one refused left out (its default applies) and named in
 * `ignored` with what is wrong with it.
 */
export function servedSettings (stored: Partial<BucketSettings>): { settings: Partial<BucketSettings>, ignored: string[] } {
  const settings: Record<string, unknown> = {}
  const ignored: string[] = []
  for (const [field, given] of Object.entries(stored)) {
    // JSON's own `__proto__` key would set the object's prototype through an assignment.
    if (field === '__proto__') continue
    try {
      const checked: Record<string, unknown> = validateSettingsPatch({ [field]: given })
      settings[field] = field in checked ? checked[field] : given
    } catch (err) {
      ignored.push((err as Error).message)
    }
  }
  return { settings: settings as Partial<BucketSettings>, ignored }
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
