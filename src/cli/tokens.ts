/**
 * `fsbucket token create|list|revoke`: scoped tokens in the registry of
 * `--data` (and `--catalog`), as the management API's `/user/tokens` makes
 * them. A running server accepts a new token at once and sees a revoked one
 * within a second or so (the engine's TOKEN_CACHE_MS), without a restart.
 *
 * `create` prints, once, JSON with the token's `id`, its value `token`, and
 * its S3 pair (`accessKeyId` = the id, `secretAccessKey` = hex SHA-256 of the
 * value); nothing else keeps the value. `list` prints JSON without secrets.
 * A name is anyone's text: its C1 and bidirectional controls are written as
 * `\uHHHH` escapes (terminal-text.ts), the same JSON, never raw.
 * Bad values (a permission that is not one of the four, an `--expires` that is
 * neither a date nor a duration, or in the past) are refused as commander
 * refuses any bad option value; the engine's own checks (a name, bucket
 * names, buckets with an admin permission) answer `error: ...` and exit 1.
 */
import { type Command, InvalidArgumentError, Option } from 'commander'
import { isArgumentError, looksLikeTokenValue, parseExpiry, permissions, type BucketRegistry, type Permission } from '../bucket/index.js'
import { catalogOption, dataOption } from '../doors/command-options.js'
import { jsonText } from './terminal-text.js'

/** What the commands need from the composition root. */
export interface TokenCommandWiring {
  /** Opens the registry of the buckets in a data directory (with the catalog `catalog` names, if given). */
  openRegistry: (dataDir: string, catalog?: string) => Promise<BucketRegistry>
}

interface Where {
  data: string
  catalog?: string
}

/** `--expires`: a date (midnight UTC), a date and time with a zone, or a duration from now (`30d`, `12h`, `15m`, `90s`). */
function expiry (value: string): Date {
  const at = parseExpiry(value, new Date())
  if (at !== null) return at
  if (parseExpiry(value) !== null) throw new InvalidArgumentError('the expiry must be in the future')
  throw new InvalidArgumentError('expected a date (2026-12-31, midnight UTC), a date and time with a zone (2026-12-31T00:00:00Z), or a duration such as 30d, 12h, 15m')
}

const notAnId = ': that looks like a token\'s value (40 characters), not its id (32 hex digits); `fsbucket token list` shows the ids'

function collect (value: string, previous: string[]): string[] {
  return [...previous, value]
}

async function withRegistry<T> (wiring: TokenCommandWiring, where: Where, action: (registry: BucketRegistry) => Promise<T>): Promise<T> {
  const registry = await wiring.openRegistry(where.data, where.catalog)
  try {
    return await action(registry)
  } finally {
    await registry.close()
  }
}

/** The engine's refusals of a token's fields are the user's mistakes: a message and exit 1, not a stack. */
async function run (action: () => Promise<void>): Promise<void> {
  try {
    await action()
  } catch (err) {
    if (!isArgumentError(err)) throw err
    console.error(`error: ${(err as Error).message}`)
    process.exitCode = 1
  }
}

export function registerTokenCommands (program: Command, wiring: TokenCommandWiring): void {
  const token = program.command('token').description('scoped tokens: bearer tokens for the HTTP routes and the management API, key pairs for S3')
  token.command('create')
    .description('make a token and print it once, with its S3 key pair, as JSON')
    .addOption(dataOption())
    .addOption(catalogOption())
    .requiredOption('--name <name>', 'what the token is for')
    .addOption(new Option('--permission <permission>', 'what it may do').choices(permissions).makeOptionMandatory())
    .option('--bucket <name>', 'limit an object permission to this bucket (repeatable; default: every bucket)', collect, [])
    .option('--expires <when>', 'a date (midnight UTC), an ISO 8601 date and time with a zone, or a duration from now (30d, 12h, 15m)', expiry)
    .action(async (options: Where & { name: string, permission: Permission, bucket: string[], expires?: Date }) => {
      await run(async () => {
        const created = await withRegistry(wiring, options, async registry => await registry.tokens.create({
          name: options.name,
          permission: options.permission,
          buckets: options.bucket,
          expiresOn: options.expires ?? null
        }))
        console.log(jsonText(created))
      })
    })
  token.command('list')
    .description('list tokens as JSON (never a secret)')
    .addOption(dataOption())
    .addOption(catalogOption())
    .action(async (options: Where) => {
      console.log(jsonText(await withRegistry(wiring, options, async registry => await registry.tokens.list())))
    })
  token.command('revoke <id>')
    .description('revoke a token: its bearer value, its key pair and its temporary credentials stop working')
    .addOption(dataOption())
    .addOption(catalogOption())
    .action(async (id: string, options: Where) => {
      if (!await withRegistry(wiring, options, async registry => await registry.tokens.revoke(id))) {
        // Never the argument: it may be the bearer value itself, given for the id.
        console.error(`error: no token with that id${looksLikeTokenValue(id) ? notAnId : ''}`)
        process.exitCode = 1
        return
      }
      console.log(`revoked token ${id}`)
    })
}
