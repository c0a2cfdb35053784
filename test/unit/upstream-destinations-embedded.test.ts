/**
 * IPv6 addresses that carry an IPv4 address reach it: NAT64's well-known prefix (64:ff9b::/96, a NAT64 gateway on the
 * machine or its network translates to the IPv4 address) and the old IPv4-compatible form (::a.b.c.d). An upstream
 * naming a metadata service that way is refused as it is by its IPv4 address; loopback (::1) and private or public
 * addresses carried that way stay allowed. Nothing is resolved or contacted: every URL here is an address.
 */
import { expect, test } from 'bun:test'
import { isReservedAddress, refusedDestination } from '../../src/upstream/destinations'

test.each([
  ['64:ff9b::a9fe:a9fe', true],
  ['64:ff9b::169.254.169.254', true],
  ['64:ff9b::a9fe:aa02', true], // 169.254.170.2
  ['64:ff9b::6464:64c8', true], // 100.100.100.200
  ['64:ff9b::e000:1', true], // 224.0.0.1
  ['64:ff9b::', true], // 0.0.0.0
  ['::a9fe:a9fe', true],
  ['::169.254.169.254', true],
  ['::6464:64c8', true],
  ['::1', false],
  ['64:ff9b::a00:5', false], // 10.0.0.5
  ['64:ff9b::7f00:1', false], // 127.0.0.1
  ['64:ff9b::5db8:d822', false], // 93.184.216.34
  ['::a00:5', false],
  ['64:ff9c::a9fe:a9fe', false],
])('%s reserved: %p', (address, reserved) => {
  expect(isReservedAddress(address)).toBe(reserved)
})

test.each([
  ['http://[64:ff9b::169.254.169.254]/latest/meta-data/', '64:ff9b::a9fe:a9fe is a reserved address'],
  ['http://[::169.254.169.254]/latest/meta-data/', '::a9fe:a9fe is a reserved address'],
  ['http://[64:FF9B::A9FE:A9FE]:80/', '64:ff9b::a9fe:a9fe is a reserved address'],
])('%s is refused', async (url, why) => {
  const resolve = async () => {
    throw new Error('an address is not resolved')
  }
  expect(await refusedDestination(url, resolve)).toStartWith(why)
})
