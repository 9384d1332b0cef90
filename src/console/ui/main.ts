/**
 * The web console's entry point: checks whether the server wants a token
 * (asking for it before anything about the buckets shows), then draws the
 * view the location hash names: `#/` buckets, `#/objects?bucket=&prefix=`
 * the object browser, `#/settings?bucket=` a bucket's settings, `#/tokens`
 * the scoped tokens (offered to admin read-write credentials only: what the
 * signed-in credentials may do is asked once, scope.ts).
 */
import './console.css'
import { ApiError, gateway, needsToken, scopedTokensOnly, tokens, withoutToken } from './api.js'
import { renderBuckets } from './buckets.js'
import { h, replace, type Current } from './dom.js'
import { renderObjects } from './objects.js'
import { can, loadScope } from './scope.js'
import { renderSettings } from './settings.js'
import { renderTokens } from './tokens.js'

const main = document.getElementById('main') as HTMLElement
const session = document.getElementById('session') as HTMLElement

/** Whether the server took the credentials of this tab (none, on a server without a token) and said what they may do. */
let signedIn = false

/** The header's links: Tokens for signed-in credentials that may manage them (a server without a token included), and a way to forget a token kept in this tab. */
function showSession (): void {
  const tokensLink = signedIn && can('account:write') ? h('a', { href: '#/tokens', class: 'button' }, 'Tokens') : null
  if (tokens.get() === null) return replace(session, tokensLink)
  const signOut = h('button', { type: 'button' }, 'Forget token')
  signOut.addEventListener('click', () => {
    tokens.clear()
    location.hash = '#/'
    void start()
  })
  replace(session, tokensLink, ' ', signOut)
}

/**
 * Whether the server said it has no token of its own (40301): the prompt
 * asks for a scoped one. One missing where a token is configured (401)
 * says the server has one. A token it refuses (40300: revoked, expired)
 * says nothing of that, so the server is asked without one.
 */
let scopedOnly = false

async function learnFrom (err: unknown): Promise<void> {
  if (scopedTokensOnly(err)) scopedOnly = true
  else if (err instanceof ApiError && err.status === 401) scopedOnly = false
  else {
    const plain = await withoutToken('/')
    if (scopedTokensOnly(plain)) scopedOnly = true
    else if (plain instanceof ApiError && plain.status === 401) scopedOnly = false
  }
}

function showTokenPrompt (rejected: boolean): void {
  // A route still waiting for an answer must not draw over the prompt.
  routes++
  signedIn = false
  showSession()
  const input = h('input', { id: 'token', type: 'password', required: true, autocomplete: 'off' })
  const form = h('form', { class: 'token-prompt', 'aria-labelledby': 'token-title' },
    h('h2', { id: 'token-title' }, 'This server needs a token'),
    h('p', {}, scopedOnly
      ? 'It was started without --token and listens beyond loopback, so only a scoped token opens it (fsbucket token create, on the server\'s data directory). It is kept in this tab only.'
      : 'Enter the token the server was started with (--token or FSBUCKET_TOKEN), or a scoped token. It is kept in this tab only.'),
    rejected ? h('p', { role: 'alert', class: 'error' }, 'The token was not accepted.') : null,
    h('div', { class: 'field' }, h('label', { for: 'token' }, 'Token'), input),
    h('button', { type: 'submit' }, 'Continue'))
  form.addEventListener('submit', event => {
    event.preventDefault()
    tokens.set(input.value.trim())
    void start()
  })
  replace(main, form)
  input.focus()
}

/** How many times a view was drawn: only the latest `route` may draw, whatever order the answers come in. */
let routes = 0

async function route (): Promise<void> {
  const [view, rawQuery] = location.hash.replace(/^#/, '').split('?')
  const query = new URLSearchParams(rawQuery ?? '')
  const bucket = query.get('bucket')
  const mine = ++routes
  // A view whose answers come after the user went elsewhere draws nothing: drawn, it would act on what is no longer shown.
  const current: Current = () => mine === routes
  try {
    if (view === '/objects' && bucket !== null) await renderObjects(main, bucket, query.get('prefix') ?? '', current)
    else if (view === '/settings' && bucket !== null) await renderSettings(main, bucket, current)
    else if (view === '/tokens' && can('account:write')) await renderTokens(main, current)
    else await renderBuckets(main)
  } catch (err) {
    if (!current()) return
    if (needsToken(err)) {
      await learnFrom(err)
      if (!current()) return
      return showTokenPrompt(tokens.get() !== null)
    }
    replace(main, h('p', { role: 'alert', class: 'error' }, `Something went wrong: ${(err as Error).message}`),
      h('p', {}, h('a', { href: '#/' }, 'Back to the buckets')))
  }
}

/** Asks the server whether we may list buckets before showing anything. */
async function start (): Promise<void> {
  signedIn = false
  showSession()
  try {
    await gateway('/')
  } catch (err) {
    if (needsToken(err)) {
      const rejected = tokens.get() !== null
      tokens.clear()
      await learnFrom(err)
      return showTokenPrompt(rejected)
    }
    replace(main, h('p', { role: 'alert', class: 'error' }, (err as Error).message))
    return
  }
  await loadScope()
  signedIn = true
  showSession()
  await route()
}

window.addEventListener('hashchange', () => { void route() })
void start()
