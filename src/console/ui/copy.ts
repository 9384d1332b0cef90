/**
 * A value to copy (a token, a share link, a curl command): a read-only
 * field with a Copy button. The Clipboard API exists only in secure
 * contexts (https, localhost) and may be refused; then the field's text is
 * left selected, and the status says to copy it with the keyboard.
 */
import { h, showStatus } from './dom.js'

export function copyableField (id: string, label: string, value: string, status: HTMLElement): HTMLElement {
  const input = h('input', { type: 'text', readonly: true, id, class: 'copy-value', spellcheck: 'false', autocomplete: 'off' })
  input.value = value
  const copy = h('button', { type: 'button', 'aria-label': `Copy ${label}` }, 'Copy')
  copy.addEventListener('click', () => {
    input.focus()
    input.select()
    const selected = (): void => { showStatus(status, `${label}: selected, copy it with Ctrl+C (or ⌘C).`) }
    if (navigator.clipboard === undefined) return selected()
    navigator.clipboard.writeText(value).then(() => { showStatus(status, `${label}: copied.`) }, selected)
  })
  return h('div', { class: 'field copy' }, h('label', { for: id }, label), h('div', { class: 'inline' }, input, copy))
}
