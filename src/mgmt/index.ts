/** The management API v4 door: the plugin, its credentials and its command-line commands. */
export { managementApi } from './plugin.js'
export type { ManagementCredentials } from './auth.js'
export { ManagementStore } from './store.js'
export { createInvite } from './invites.js'
export type { ShareEndpoint } from './routes/share-links.js'
