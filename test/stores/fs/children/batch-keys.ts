/** The keys and bodies of the view-intents test's child (batch-delete-crash.ts), shared with the test. */
import { payload } from './payload.js'

export function batchKey (i: number): string {
  return `batch/${i % 5}/k${i}.bin`
}

/** Odd keys get bodies past the 16 KiB kept in the catalog: files, shown as hard links; even ones are written out. */
export function batchBody (i: number): Buffer {
  return payload(`k${i}`, i % 2 === 0 ? 100 : 20_000)
}
