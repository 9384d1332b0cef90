/**
 * IP address content of A and AAAA records.
 *
 * Parsing is node:net's (strict dotted quads: no leading zeros, no short
 * forms). AAAA content is stored in the RFC 5952 compressed, lowercase form,
 * which the WHATWG URL serializer produces for a bracketed host, so two
 * spellings of one address are one record. Zone indices (`fe80::1%eth0`) are
 * not addresses a DNS record can hold.
 *
 * Proxied records may not point at addresses that cannot be reached from the
 * public internet (the hosted API's 9003): loopback, private, link-local,
 * shared (CGNAT), unspecified, multicast and unique-local ranges.
 */
import { BlockList, isIPv4, isIPv6 } from 'node:net'

/** A valid dotted-quad IPv4 address, or null. */
export function parseIPv4 (content: string): string | null {
  return isIPv4(content) ? content : null
}

/** A valid IPv6 address in its compressed, lowercase form, or null. */
export function parseIPv6 (content: string): string | null {
  if (content.includes('%') || !isIPv6(content)) return null
  return new URL(`http://[${content}]/`).hostname.slice(1, -1)
}

const notProxiable = new BlockList()
notProxiable.addSubnet('0.0.0.0', 8, 'ipv4')
notProxiable.addSubnet('10.0.0.0', 8, 'ipv4')
notProxiable.addSubnet('100.64.0.0', 10, 'ipv4')
notProxiable.addSubnet('127.0.0.0', 8, 'ipv4')
notProxiable.addSubnet('169.254.0.0', 16, 'ipv4')
notProxiable.addSubnet('172.16.0.0', 12, 'ipv4')
notProxiable.addSubnet('192.168.0.0', 16, 'ipv4')
notProxiable.addSubnet('224.0.0.0', 3, 'ipv4')
notProxiable.addAddress('::', 'ipv6')
notProxiable.addAddress('::1', 'ipv6')
notProxiable.addSubnet('fc00::', 7, 'ipv6')
notProxiable.addSubnet('fe80::', 10, 'ipv6')
notProxiable.addSubnet('ff00::', 8, 'ipv6')

/** Whether a proxied record may point at this (valid) address. */
export function isProxiableAddress (address: string): boolean {
  return !notProxiable.check(address, isIPv4(address) ? 'ipv4' : 'ipv6')
}
