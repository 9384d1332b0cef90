/**
 * The media type a name's extension suggests (`photo.jpg` → `image/jpeg`;
 * `application/octet-stream` when none does), from mime-types' table,
 * loaded at the first call: the table costs a process 3 to 4 MiB and 25 ms
 * to load, so a server loads it at its first answer of an object stored
 * without a type, and a command at its first upload, not as they start.
 *
 * The extension is what follows the last `.` of the name's last segment,
 * that dot not first: a name without one (`html`, `dir/html`, `.html`, a
 * folder marker `x.html/`) suggests nothing, where mime-types' `lookup`
 * would take a bare word for an extension.
 */
import { createRequire } from 'node:module'
import type mimeTypes from 'mime-types'

let table: typeof mimeTypes | null = null

export function typeByName (name: string): string {
  const base = name.slice(name.lastIndexOf('/') + 1)
  const dot = base.lastIndexOf('.')
  if (dot <= 0) return 'application/octet-stream'
  table ??= createRequire(import.meta.url)('mime-types') as typeof mimeTypes
  return table.lookup(base.slice(dot + 1)) || 'application/octet-stream'
}
