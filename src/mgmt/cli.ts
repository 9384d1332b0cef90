/**
 * Command-line side of the management API.
 *
 * - `serve` takes `--api-token`, `--api-email` and `--api-key` (environment
 *   FSBUCKET_API_TOKEN, FSBUCKET_API_EMAIL, FSBUCKET_API_KEY), which the
 *   composition root adds from `managementServeOptions`;
 *   `managementCredentials` (auth.ts) merges them with `<data>/.mgmt/credentials.json`
 *   and the gateway's own token, which the management API accepts too.
 * - `invite create` / `invite list`: the API shows no way to create an
 *   invite, so invites for `PATCH /user/invites/{id}` are made here. Bad
 *   values (`--days` outside 1–365, an `--account` that is not an account
 *   id) are refused as commander refuses any bad option value.
 * - `zone create` / `zone list`: a local stack can be set up without a client.
 */
import { type Command, InvalidArgumentError, Option } from 'commander'
import { catalogOption, dataOption } from '../doors/command-options.js'
import type { BucketRegistry } from '../bucket/index.js'
import { createInvite, isValidInviteDays, maxInviteDays } from './invites.js'
import { ManagementStore } from './store.js'
import { idFormat } from './context.js'
import { ManagementError } from './errors.js'
import { parseZoneName } from './validate/names.js'
import { localAccount } from './routes/accounts.js'

/** `--account`: an account id in the service's form, as the API names accounts. */
function accountId (value: string): string {
  if (!idFormat.test(value)) throw new InvalidArgumentError('expected an account id of 32 lowercase hex digits')
  return value
}

/** `--days`: how long an invite lasts, a whole number of days from 1 to 365. */
function inviteDays (value: string): number {
  const days = /^\d+$/.test(value) ? Number(value) : Number.NaN
  if (!isValidInviteDays(days)) throw new InvalidArgumentError(`expected a whole number of days from 1 to ${maxInviteDays}`)
  return days
}

/** Where a command's registry is: `--data` and `--catalog`. */
interface RegistryOptions {
  data: string
  catalog?: string
}

/** Runs `action` on the management state of the registry `options` name. */
async function withStore<T> (wiring: ManagementCommandWiring, options: RegistryOptions, action: (store: ManagementStore) => Promise<T>): Promise<T> {
  const registry = await wiring.openRegistry(options.data, options.catalog)
  try {
    return await action(new ManagementStore(registry.state('mgmt')))
  } finally {
    await registry.close()
  }
}

async function run (action: () => Promise<void>): Promise<void> {
  try {
    await action()
  } catch (err) {
    if (!(err instanceof ManagementError)) throw err
    console.error(`error: ${err.message} (${err.code})`)
    process.exitCode = 1
  }
}

/** What the commands need from the composition root. */
export interface ManagementCommandWiring {
  /** Opens the registry of the buckets in a data directory (with the catalog `catalog` names, if given). */
  openRegistry: (dataDir: string, catalog?: string) => Promise<BucketRegistry>
}

/** The flags `serve` takes for the management API's credentials (the composition root adds them). */
export function managementServeOptions (): Option[] {
  return [
    new Option('--api-token <token>', 'API token accepted by the management API (/client/v4)').env('FSBUCKET_API_TOKEN'),
    new Option('--api-email <email>', 'email of the key pair accepted by the management API').env('FSBUCKET_API_EMAIL'),
    new Option('--api-key <key>', 'key of the key pair accepted by the management API').env('FSBUCKET_API_KEY')
  ]
}

export function registerManagementCommands (program: Command, wiring: ManagementCommandWiring): void {

  const invite = program.command('invite').description('invites of the local user to accounts (answered with PATCH /client/v4/user/invites/{id})')
  invite.command('create')
    .description('create a pending invite')
    .addOption(dataOption())
    .addOption(catalogOption())
    .requiredOption('--email <email>', 'email of the invited user')
    .requiredOption('--account <id>', 'account id the invite is for (32 lowercase hex digits)', accountId)
    .option('--account-name <name>', 'account name shown in the invite')
    .option('--role <role...>', 'roles granted on acceptance', ['Administrator'])
    .option('--days <n>', `days until the invite expires (1 to ${maxInviteDays})`, inviteDays, 7)
    .action(async (options: RegistryOptions & { email: string, account: string, accountName?: string, role: string[], days: number }) => {
      await run(async () => {
        const created = await withStore(wiring, options, async store => await createInvite(store, {
          email: options.email,
          accountId: options.account,
          accountName: options.accountName,
          roles: options.role,
          validDays: options.days
        }))
        console.log(created.id)
      })
    })
  invite.command('list')
    .description('list invites')
    .addOption(dataOption())
    .addOption(catalogOption())
    .action(async (options: RegistryOptions) => {
      for (const i of await withStore(wiring, options, async store => await store.invites())) {
        console.log(`${i.id}\t${i.status}\t${i.invited_member_email}\t${i.organization_id}\t${i.expires_on}`)
      }
    })

  const zone = program.command('zone').description('zones of the management API')
  zone.command('list')
    .description('list zones')
    .addOption(dataOption())
    .addOption(catalogOption())
    .action(async (options: RegistryOptions) => {
      for (const z of await withStore(wiring, options, async store => await store.zones())) console.log(`${z.id}\t${z.name}\t${z.account.id}`)
    })
  zone.command('create <name>')
    .description('create a zone (as POST /client/v4/zones does)')
    .addOption(dataOption())
    .addOption(catalogOption())
    .addOption(new Option('--account <id>', 'account id owning the zone (32 lowercase hex digits)').default(localAccount.id, 'the local account').argParser(accountId))
    .action(async (name: string, options: RegistryOptions & { account: string }) => {
      await run(async () => {
        if (parseZoneName(name) === null) throw new ManagementError('InvalidZoneName')
        console.log(await createZoneFromCli(wiring, options, name, options.account))
      })
    })
}

async function createZoneFromCli (wiring: ManagementCommandWiring, where: RegistryOptions, name: string, account: string): Promise<string> {
  // The API's own route does the work, so a zone made here is the same as one made over HTTP.
  const { default: Fastify } = await import('fastify')
  const { managementApi } = await import('./plugin.js')
  const registry = await wiring.openRegistry(where.data, where.catalog)
  const app = Fastify()
  await app.register(managementApi, { prefix: '/client/v4', registry, credentials: { tokens: ['cli'], keys: [] } })
  try {
    const response = await app.inject({ method: 'POST', url: '/client/v4/zones', headers: { authorization: 'Bearer cli' }, payload: { name, account: { id: account } } })
    const body = response.json()
    if (body.success !== true) throw new ManagementError('InvalidZoneName', `${body.errors[0]?.message as string} (${body.errors[0]?.code as number})`)
    return `${body.result.id as string}\t${body.result.name as string}`
  } finally {
    await app.close()
    await registry.close()
  }
}
