/** The management API v4 door: the plugin, its credentials and its command-line commands. */
export { managementApi, type ManagementApiOptions } from './plugin.js'
export { loadCredentials, type ManagementCredentials, type ApiKey } from './auth.js'
export { ManagementErrors, ManagementError } from './errors.js'
export { ManagementStore } from './store.js'
export { createInvite } from './invites.js'
