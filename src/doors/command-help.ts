/**
 * How every command's help shows its options. Commander appends
 * `(default: …)` with the value as JavaScript prints it, which says
 * nothing for a flag (`(default: false)`), an empty list (`[]`) or an empty
 * map (`{}`), and doubles a default the description already gives in
 * words. Those are left out here; a default worth reading is given in
 * words with the option (`.default(true, 'on')`).
 */
import { Help, type Option } from 'commander'

function isEmptyValue (value: unknown): boolean {
  if (value === false) return true
  if (Array.isArray(value)) return value.length === 0
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype && Object.keys(value).length === 0
}

/** True when the help line of `option` should not append Commander's `(default: …)`. */
export function hidesDefault (option: Pick<Option, 'defaultValue' | 'defaultValueDescription' | 'description'>): boolean {
  if (/\(default: /.test(option.description)) return true
  return option.defaultValueDescription === undefined && isEmptyValue(option.defaultValue)
}

/** The help configuration for the program; its sub-commands inherit it. */
export const commandHelp: Partial<Help> = {
  optionDescription (option: Option): string {
    if (!hidesDefault(option)) return Help.prototype.optionDescription.call(this, option)
    const shown = Object.assign(Object.create(Object.getPrototypeOf(option) as object) as Option, option, { defaultValue: undefined, defaultValueDescription: undefined })
    return Help.prototype.optionDescription.call(this, shown)
  }
}
