/** The address policy of production webhooks: which IP addresses a delivery may not connect to. */
import ipaddr from 'ipaddr.js';

/** RFC 8215's local-use NAT64 prefix: a network's own translator, so it leads inside that network. */
const LOCAL_USE_NAT64 = ipaddr.parseCIDR('64:ff9b:1::/48');

/**
 * Which addresses a production webhook may connect to: public unicast only. Refused: loopback,
 * private (RFC 1918, IPv6 unique-local), link-local (which holds the cloud metadata address
 * 169.254.169.254), CGNAT (100.64/10), multicast, unspecified, broadcast and reserved ranges, and
 * the same inside IPv4-mapped or NAT64 IPv6 forms; also the local-use NAT64 prefix and the
 * deprecated IPv4-compatible form (::/96), neither of which leads to a public host.
 */
export function isBlockedAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return true;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (
      v6
        .toByteArray()
        .slice(0, 12)
        .every((byte) => byte === 0)
    )
      return true;
    if (v6.match(LOCAL_USE_NAT64)) return true;
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address();
    else if (v6.range() === 'rfc6052' || v6.range() === 'rfc6145') {
      // NAT64 (well-known prefix, /96) / SIIT: the last 32 bits are an IPv4 address.
      const parts = v6.toByteArray().slice(12);
      parsed = ipaddr.fromByteArray(parts);
    }
  }
  return parsed.range() !== 'unicast';
}
