/**
 * Domain names: zone names, record names and hostnames in record content.
 *
 * A label is 1 to 63 characters of letters, digits, hyphens and underscores,
 * neither starting nor ending with a hyphen (underscores are allowed, as the
 * service allows them, for `_service._proto` names). A name is at most 253
 * characters. The seed asks record labels to start with a letter; names such
 * as `1.example.com` are common and valid DNS, so a leading digit is accepted.
 * A `*` alone is accepted as the first label of a record name (wildcards).
 *
 * Names are compared and stored in lowercase, without a trailing dot.
 */

const label = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/
/** C0 (CR, LF, TAB too), DEL and C1 controls: refused before trimming, which would quietly drop a trailing line break. */
const controlCharacter = /[\u0000-\u001f\u007f-\u009f]/

function normalise (name: string): string {
  return name.trim().toLowerCase().replace(/\.$/, '')
}

/** A hostname (record content of CNAME, SRV targets): lowercase, or null when invalid. */
export function parseHostname (value: string): string | null {
  if (typeof value !== 'string' || controlCharacter.test(value)) return null
  const name = normalise(value)
  if (name.length === 0 || name.length > 253) return null
  return name.split('.').every(l => label.test(l)) ? name : null
}

/** A zone name: a hostname of at least two labels, not an IP address. */
export function parseZoneName (value: string): string | null {
  const name = parseHostname(value)
  if (name === null || !name.includes('.')) return null
  if (/^[0-9.]+$/.test(name)) return null
  return name
}

/** Whether `name` is `zone` itself or a name inside it. */
export function isInZone (name: string, zone: string): boolean {
  return name === zone || name.endsWith(`.${zone}`)
}

/**
 * A record name as given in a request → its fully qualified form in the zone,
 * or null when invalid. `@` (and the empty name) is the apex; a name that
 * already ends with the zone is kept; any other name is relative to the zone.
 */
export function recordFqdn (value: string, zone: string): string | null {
  if (typeof value !== 'string' || controlCharacter.test(value)) return null
  const name = normalise(value)
  if (name === '@' || name === '') return zone
  const fqdn = isInZone(name, zone) ? name : `${name}.${zone}`
  if (fqdn.length > 253) return null
  const labels = fqdn.split('.')
  return labels.every((l, i) => label.test(l) || (i === 0 && l === '*')) ? fqdn : null
}
