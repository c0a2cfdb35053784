/**
 * Where no upstream may send this server: the machine's own services that answer on reserved addresses. An archive's
 * URL and every redirect are the upstream's to choose, so a hostile or compromised upstream could otherwise have the
 * mirror ask a cloud metadata service (169.254.169.254 and its kin, which hand out the machine's credentials), or probe
 * addresses no host serves archives from. Loopback and private networks stay allowed: private registries, their
 * storage and CI's test servers live there. Names are resolved first (metadata.google.internal is 169.254.169.254).
 */
import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'

const RESERVED = new BlockList()

/**
 * An IPv4 range, and the IPv6 forms that carry an address of it (an IPv4-mapped one, ::ffff:a.b.c.d, is checked
 * against the IPv4 rules by the list itself): NAT64's well-known prefix 64:ff9b::/96 (a NAT64 gateway on the machine
 * or its network takes 64:ff9b::a9fe:a9fe to 169.254.169.254) and the old IPv4-compatible ::a.b.c.d, except for
 * "this network" 0.0.0.0/8, whose compatible form ::1 is loopback (:: is reserved below).
 */
function reserveIPv4(network: string, bits: number) {
  RESERVED.addSubnet(network, bits, 'ipv4')
  const [a, b, c, d] = network.split('.').map(Number) as [number, number, number, number]
  const tail = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  RESERVED.addSubnet(`64:ff9b::${tail}`, 96 + bits, 'ipv6')
  if (a !== 0) RESERVED.addSubnet(`::${tail}`, 96 + bits, 'ipv6')
}

// Link-local: the metadata services of AWS, GCP, Azure, Oracle (169.254.169.254) and AWS's containers (169.254.170.2).
reserveIPv4('169.254.0.0', 16)
RESERVED.addSubnet('fe80::', 10, 'ipv6')
// Metadata services outside link-local: Alibaba Cloud's, and AWS's over IPv6.
reserveIPv4('100.100.100.200', 32)
RESERVED.addAddress('fd00:ec2::254', 'ipv6')
// "This network" (0.0.0.0 reaches the machine itself), multicast, reserved and broadcast; the unspecified IPv6 address.
reserveIPv4('0.0.0.0', 8)
reserveIPv4('224.0.0.0', 3)
RESERVED.addSubnet('ff00::', 8, 'ipv6')
RESERVED.addAddress('::', 'ipv6')

/** Whether `address` (an IP address, IPv6 forms of IPv4 ones included) is one no upstream may send this server to. */
export function isReservedAddress(address: string): boolean {
  const family = isIP(address)
  return family !== 0 && RESERVED.check(address, family === 4 ? 'ipv4' : 'ipv6')
}

export type Resolve = (host: string) => Promise<readonly string[]>

const resolveAll: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address)

/**
 * Why `url` may not be asked, or undefined when it may: its host is, or resolves to, a reserved address. A name that
 * does not resolve is left to the request to fail as it would. (The request resolves the name again: a name whose
 * answers change between the two lookups is not caught.)
 */
export async function refusedDestination(url: string, resolve: Resolve = resolveAll): Promise<string | undefined> {
  const parsed = URL.parse(url)
  if (!parsed) return undefined
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1')
  const addresses = isIP(host) ? [host] : await resolve(host).catch(() => [])
  const reserved = addresses.find(isReservedAddress)
  if (reserved === undefined) return undefined
  const at = reserved === host ? reserved : `${host} (${reserved})`
  return `${at} is a reserved address (link-local, a metadata service, multicast or unspecified): not asked`
}
