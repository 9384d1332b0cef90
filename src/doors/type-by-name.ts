/**
 * The media type a name's extension suggests (`photo.jpg` → `image/jpeg`;
 * `application/octet-stream` when none does), from mime-types' table,
 * loaded at the first call: the table costs a process 3 to 4 MiB and 25 ms
 * to load, so a server loads it at its first answer of an object stored
 * without a type, and a command at its first upload, not as they start.
 */
import { createRequire } from 'node:module'
import type mimeTypes from 'mime-types'

let table: typeof mimeTypes | null = null

export function typeByName (name: string): string {
  table ??= createRequire(import.meta.url)('mime-types') as typeof mimeTypes
  return table.lookup(name) || 'application/octet-stream'
}
