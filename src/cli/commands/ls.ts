/**
 * `fsbucket ls [-r] [fsb://bucket[/prefix]] [--json]`.
 *
 * Without a location (or with `fsb://`): the buckets. With one: the keys
 * under the prefix as given (`fsb://b/ph` lists `photos/...` and `phone`),
 * grouped at `/` into `prefix/` entries unless `-r`. Like `aws s3 ls`,
 * names are shown relative to the prefix's last `/`, and as whole keys with
 * `-r`. Columns: upload time (UTC, to the second), size in bytes, etag,
 * name; a `prefix/` entry shows PRE in the size column. `--json` prints one
 * JSON object per line (`type` is `bucket`, `object` or `prefix`) with whole
 * keys and full-precision times, for scripts. Control characters in names
 * print escaped (`\n`, `\x1b`: terminal-text.ts); `--json` keeps them exact.
 */
import type { Command } from 'commander'
import { addCommonOptions, printJson, printLine, runCommand, type ObjectCommandWiring } from '../context.js'
import { keyUnderPrefix, parseLocation, scheme } from '../paths.js'

interface LsOptions {
  recursive: boolean
  json: boolean
}

export function formatTime (date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`
}

function byteOrder (a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'))
}

export function registerLs (program: Command, wiring: ObjectCommandWiring): void {
  const command = program.command('ls')
    .description('list buckets, or the objects and prefixes under fsb://bucket[/prefix]')
    .argument('[location]', 'fsb://bucket[/prefix]; none for the buckets')
    .option('-r, --recursive', 'every key under the prefix, not grouped at /', false)
    .option('--json', 'one JSON object per line', false)
  addCommonOptions(command)
  command.action(async (arg: string | undefined, options: LsOptions, cmd: Command) => {
    await runCommand('ls', arg ?? '', cmd, wiring, async ({ transport }) => {
      if (arg === undefined || arg === scheme) {
        for (const bucket of await transport.listBuckets()) {
          if (options.json) printJson({ type: 'bucket', name: bucket.name, creationDate: bucket.creationDate.toISOString() })
          else printLine(`${formatTime(bucket.creationDate)}  ${scheme}${bucket.name}`)
        }
        return
      }
      const location = parseLocation(arg)
      if (location.kind !== 'remote') throw new Error('ls lists fsb:// locations')
      const prefix = location.key
      const shownUnder = options.recursive ? '' : prefix.slice(0, prefix.lastIndexOf('/') + 1)
      let cursor: string | undefined
      do {
        const page = await transport.list(location.bucket, { prefix, delimiter: options.recursive ? undefined : '/', cursor })
        const rows: Array<{ name: string, print: () => void }> = []
        for (const p of page.prefixes) {
          rows.push({
            name: p,
            print: options.json
              ? () => { printJson({ type: 'prefix', prefix: p }) }
              : () => { printLine(`${' '.repeat(20)}  ${'PRE'.padStart(12)}  ${''.padEnd(32)}  ${keyUnderPrefix(shownUnder, p)}`) }
          })
        }
        for (const o of page.objects) {
          rows.push({
            name: o.key,
            print: options.json
              ? () => { printJson({ type: 'object', key: o.key, size: o.size, etag: o.etag, uploaded: o.uploaded.toISOString(), storageClass: o.storageClass }) }
              : () => { printLine(`${formatTime(o.uploaded)}  ${String(o.size).padStart(12)}  ${o.etag.padEnd(32)}  ${keyUnderPrefix(shownUnder, o.key)}`) }
          })
        }
        for (const row of rows.sort((a, b) => byteOrder(a.name, b.name))) row.print()
        cursor = page.cursor
      } while (cursor !== undefined)
    })
  })
}
