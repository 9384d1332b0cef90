/**
 * Invites of the user to accounts. The API has no way to create one, so
 * they are made here, for the `fsbucket invite create` command and for
 * tests; the API lists them and lets the user accept or reject them.
 *
 * fsbucket has one local user: every invite in the data directory is that
 * user's. An invite past `expires_on` reads as `expired` and can no longer
 * be answered. An invite is for an account id in the service's form (32
 * lowercase hex digits, as `/accounts/{id}` will name it once accepted) and
 * lasts a whole number of days from 1 to `maxInviteDays`.
 */
import { idFormat, newId } from './context.js'
import { timestamp } from './envelope.js'
import { ManagementError } from './errors.js'
import type { Invite, ManagementStore } from './store.js'

export interface InviteRequest {
  email: string
  accountId: string
  accountName?: string
  roles?: string[]
  invitedBy?: string
  /** Days until the invite expires: 1 to `maxInviteDays` (default 7, as the service's invites). */
  validDays?: number
}

/** The longest an invite lasts, in days. */
export const maxInviteDays = 365

/** Whether `days` is a lifetime an invite may have: a whole number of days from 1 to `maxInviteDays`. */
export function isValidInviteDays (days: number): boolean {
  return Number.isInteger(days) && days >= 1 && days <= maxInviteDays
}

const emailFormat = /^[^\s@]+@[^\s@]+$/

export async function createInvite (store: ManagementStore, request: InviteRequest, now: Date = new Date()): Promise<Invite> {
  if (!emailFormat.test(request.email)) throw new ManagementError('InvalidRequestBody', 'email must be an email address')
  if (!idFormat.test(request.accountId)) throw new ManagementError('InvalidRequestBody', 'account id must be 32 lowercase hex digits')
  const days = request.validDays ?? 7
  if (!isValidInviteDays(days)) throw new ManagementError('InvalidRequestBody', `an invite lasts a whole number of days from 1 to ${maxInviteDays}`)
  const invite: Invite = {
    id: newId(),
    invited_member_id: null,
    invited_member_email: request.email,
    organization_id: request.accountId,
    organization_name: request.accountName ?? request.accountId,
    organization_is_enforcing_twofactor: false,
    invited_by: request.invitedBy ?? 'admin@fsbucket.invalid',
    invited_on: timestamp(now),
    expires_on: timestamp(new Date(now.getTime() + days * 86_400_000)),
    roles: request.roles ?? ['Administrator'],
    status: 'pending'
  }
  await store.update(async tx => { (await tx.invites()).push(invite) })
  return invite
}

/** The invite as the user sees it now (pending invites past their date have expired). */
export function currentInvite (invite: Invite, now: Date): Invite {
  if (invite.status === 'pending' && Date.parse(invite.expires_on) <= now.getTime()) return { ...invite, status: 'expired' }
  return invite
}

export async function answerInvite (store: ManagementStore, id: string, status: unknown, now: Date): Promise<Invite> {
  if (status !== 'accepted' && status !== 'rejected') throw new ManagementError('InvalidInviteStatus')
  return await store.update(async tx => {
    const invites = await tx.invites()
    const index = invites.findIndex(i => i.id === id)
    if (index === -1) throw new ManagementError('InviteNotFound')
    const invite = currentInvite(invites[index], now)
    if (invite.status !== 'pending') throw new ManagementError('InviteNotPending')
    const answered: Invite = { ...invite, status, invited_member_id: status === 'accepted' ? newId() : null }
    invites[index] = answered
    return answered
  })
}
