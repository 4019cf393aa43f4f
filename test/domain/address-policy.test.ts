/** The address policy of production webhooks: which IPv4 and IPv6 addresses, in every written form, are refused. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isBlockedAddress } from '../../src/domain/address-policy.js';

function assertAll(addresses: string[], blocked: boolean): void {
  const wrong = addresses.filter((a) => isBlockedAddress(a) !== blocked);
  assert.deepEqual(wrong, [], `${blocked ? 'allowed' : 'blocked'} by mistake: ${wrong.join(', ')}`);
}

describe('isBlockedAddress: production webhooks go to public unicast addresses only', () => {
  test('IPv4 loopback, private, link-local and the cloud metadata address', () => {
    assertAll(
      [
        '127.0.0.1',
        '127.255.255.254',
        '10.0.0.1',
        '10.255.255.255',
        '172.16.0.1',
        '172.31.255.254',
        '192.168.0.1',
        '192.168.255.254',
        '169.254.169.254', // AWS, GCP and Azure instance metadata
        '169.254.0.1',
      ],
      true,
    );
  });

  test('IPv4 CGNAT, unspecified, broadcast, multicast and reserved ranges', () => {
    assertAll(
      [
        '100.64.0.1', // RFC 6598 shared address space
        '100.127.255.254',
        '0.0.0.0', // reaches the local host on Linux
        '0.1.2.3',
        '255.255.255.255',
        '224.0.0.1',
        '239.255.255.250',
        '240.0.0.1',
        '192.0.0.170',
        '192.0.2.1', // TEST-NET-1..3
        '198.51.100.1',
        '203.0.113.1',
        '198.18.0.1', // benchmarking
      ],
      true,
    );
  });

  test('IPv6 loopback, unspecified, link-local, unique-local (AWS metadata), multicast and special ranges', () => {
    assertAll(
      [
        '::1',
        '::',
        'fe80::1',
        'fe80::1%eth0',
        'fc00::1',
        'fd00:ec2::254', // AWS instance metadata over IPv6
        'ff02::1',
        'ff05::2',
        '2001:db8::1', // documentation
        '100::1', // discard-only
        '2002:7f00:1::1', // 6to4 wrapping 127.0.0.1
        '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      ],
      true,
    );
  });

  test('private IPv4 inside IPv6 forms: mapped, NAT64 (well-known and local-use prefixes), SIIT, compatible', () => {
    assertAll(
      [
        '::ffff:127.0.0.1',
        '::ffff:7f00:1',
        '::ffff:10.0.0.1',
        '::ffff:169.254.169.254',
        '::ffff:100.64.0.1',
        '::ffff:0.0.0.0',
        '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
        '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
        '64:ff9b:1::a00:1', // the local-use NAT64 prefix is for internal networks
        '64:ff9b:1:a00:0:100:808:808', // 10.0.0.1 embedded at /48, with public-looking trailing bits
        '::ffff:0:7f00:1', // SIIT (RFC 6145) of 127.0.0.1
        '::127.0.0.1', // deprecated IPv4-compatible form
        '::7f00:1',
      ],
      true,
    );
  });

  test('public addresses, also inside IPv6 forms, are allowed', () => {
    assertAll(
      [
        '8.8.8.8',
        '1.1.1.1',
        '93.184.216.34',
        '100.128.0.1', // just past CGNAT
        '172.32.0.1', // just past 172.16/12
        '2606:4700:4700::1111',
        '2001:4860:4860::8888',
        '2a00:1450:4001:82a::200e',
        '::ffff:8.8.8.8',
        '64:ff9b::808:808', // NAT64 of 8.8.8.8
      ],
      false,
    );
  });

  test('anything that is not an IP address is refused', () => {
    assertAll(['', 'localhost', 'example.com', '256.1.1.1', '::ffff:999.0.0.1', 'fe80::1::2'], true);
  });

  test('short and numeric IPv4 forms are read as the resolver reads them', () => {
    assertAll(['127.1', '0x7f.1', '0x7f000001', '2130706433', '10.1'], true);
  });
});
