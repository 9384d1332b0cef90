/**
 * The console's only way to make DOM: elements built from a tag, attributes
 * and children, where every string child becomes a text node. Nothing here
 * parses HTML, so keys, metadata and file names (untrusted) always show as
 * the characters they are.
 */

type Child = Node | string | null | undefined | false
type AttrValue = string | number | boolean | null | undefined | ((event: Event) => void)

export function h<K extends keyof HTMLElementTagNameMap> (tag: K, attrs: Record<string, AttrValue> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value)
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  append(element, ...children)
  return element
}

/**
 * Whether a view is still the one to draw: false once the user went to
 * another (main.ts's `route`), whose view then owns the page. A view asks it
 * after each answer it waits for before drawing into the page.
 */
export type Current = () => boolean

export function append (parent: Node, ...children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    parent.appendChild(typeof child === 'string' ? document.createTextNode(child) : child)
  }
}

/** Replaces every child of `parent`. */
export function replace (parent: Node, ...children: Child[]): void {
  while (parent.firstChild !== null) parent.removeChild(parent.firstChild)
  append(parent, ...children)
}

/**
 * Writes a line into a status element: news in muted text, read out
 * politely; a failure as a visible alert (role=alert is announced at once).
 */
export function showStatus (status: HTMLElement, text: string, failed = false): void {
  status.textContent = text
  status.classList.toggle('alert', failed)
  status.setAttribute('role', failed ? 'alert' : 'status')
}

export function formatSize (bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB']
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) { value /= 1024; unit++ }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`
}

export function formatDate (iso: string): string {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString()
}

/** A modal yes/no question (a native <dialog>: focus trapped, Escape answers no). */
export async function confirmDialog (question: string, details: string[], yes: string): Promise<boolean> {
  return await new Promise(resolve => {
    const list = details.length === 0 ? null : h('ul', { class: 'dialog-list' }, ...details.slice(0, 20).map(d => h('li', {}, d)),
      details.length > 20 ? h('li', {}, `… and ${details.length - 20} more`) : null)
    const dialog = h('dialog', { 'aria-labelledby': 'dialog-title' },
      h('form', { method: 'dialog' },
        h('h2', { id: 'dialog-title' }, question),
        list,
        h('div', { class: 'actions' },
          h('button', { value: 'no', type: 'submit' }, 'Cancel'),
          h('button', { value: 'yes', type: 'submit', class: 'danger' }, yes))))
    dialog.addEventListener('close', () => {
      resolve(dialog.returnValue === 'yes')
      dialog.remove()
    })
    document.body.appendChild(dialog)
    dialog.showModal()
  })
}
