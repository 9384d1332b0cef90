/**
 * `fsbucket stat fsb://bucket[/key]... [--json]`: an object's metadata
 * (size, etag, upload time, storage class, HTTP and custom metadata), or a
 * bucket's name and creation date. Control characters in keys and metadata
 * print escaped (terminal-text.ts); `--json` keeps them exact.
 */
import type { Command } from 'commander'
import { CliError, cliError } from '../errors.js'
import { addCommonOptions, printJson, printLine, runCommand, type ObjectCommandWiring } from '../context.js'
import { parseLocation, remoteUrl } from '../paths.js'
import { humanBytes } from '../progress.js'
import { formatTime } from './ls.js'

const httpNames = {
  contentType: 'content-type',
  contentLanguage: 'content-language',
  contentDisposition: 'content-disposition',
  contentEncoding: 'content-encoding',
  cacheControl: 'cache-control'
} as const

export function registerStat (program: Command, wiring: ObjectCommandWiring): void {
  const command = program.command('stat')
    .description('show the metadata of objects or buckets')
    .argument('<locations...>', 'fsb://bucket/key, or fsb://bucket')
    .option('--json', 'one JSON object per location', false)
  addCommonOptions(command)
  command.action(async (args: string[], options: { json: boolean }, cmd: Command) => {
    for (const arg of args) {
      await runCommand('stat', arg, cmd, wiring, async ({ transport }) => {
        const location = parseLocation(arg)
        if (location.kind !== 'remote') throw new CliError('stat reads fsb://bucket[/key]')
        if (location.key === '') {
          const bucket = (await transport.listBuckets()).find(b => b.name === location.bucket)
          if (bucket === undefined) {
            // A token scoped to other buckets is shown only those: reading the bucket says whether it is absent or closed to it.
            await transport.list(location.bucket, { delimiter: '/' })
            throw cliError('NoSuchBucket', location.bucket)
          }
          if (options.json) printJson({ type: 'bucket', name: bucket.name, creationDate: bucket.creationDate.toISOString() })
          else {
            printLine(`bucket:   ${remoteUrl(bucket.name)}`)
            printLine(`created:  ${formatTime(bucket.creationDate)}`)
          }
          return
        }
        const object = await transport.head(location.bucket, location.key)
        if (object === null) throw cliError('NoSuchKey')
        if (options.json) {
          printJson({ type: 'object', ...object, uploaded: object.uploaded.toISOString() })
          return
        }
        const rows: Array<[string, string]> = [
          ['key', object.key],
          ['size', `${object.size} (${humanBytes(object.size)})`],
          ['etag', object.etag],
          ['uploaded', formatTime(object.uploaded)],
          ['storage-class', object.storageClass]
        ]
        for (const [field, header] of Object.entries(httpNames)) {
          const value = object.httpMetadata[field as keyof typeof httpNames]
          if (value !== undefined) rows.push([header, value])
        }
        if (object.httpMetadata.cacheExpiry !== undefined) rows.push(['expires', object.httpMetadata.cacheExpiry.toUTCString()])
        for (const [name, value] of Object.entries(object.customMetadata)) rows.push([`meta ${name}`, value])
        const width = Math.max(...rows.map(([label]) => label.length)) + 1
        for (const [label, value] of rows) printLine(`${`${label}:`.padEnd(width + 1)}${value}`)
      })
    }
  })
}
