/** The webhook concurrency key: a receiver's resolved address and port (cached, expiring), not its host name. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HostAddresses } from '../../src/delivery/webhook/host-address.js';

describe('webhook concurrency keys: the resolved address and port, not the host name', () => {
  test('eight names that resolve to one address share one key; another port is another key', async () => {
    const asked: string[] = [];
    const addresses = new HostAddresses(async (name) => {
      asked.push(name);
      return name.endsWith('.other.test') ? ['203.0.113.9'] : ['203.0.113.7', '2001:db8::7'];
    });
    const names = Array.from({ length: 8 }, (_, i) => `https://t${i}.tarpit.test/hook`);
    const keys = await Promise.all(names.map((url) => addresses.key(url)));
    assert.deepEqual(new Set(keys), new Set(['2001:db8::7:443']));
    assert.equal(await addresses.key('https://a.other.test/h'), '203.0.113.9:443');
    assert.equal(await addresses.key('http://t0.tarpit.test:8080/h'), '2001:db8::7:8080');
    // Cached: each name was looked up once.
    await addresses.key('https://t0.tarpit.test/again');
    assert.equal(asked.filter((n) => n === 't0.tarpit.test').length, 1);
  });

  test('IP literals need no lookup; an unresolvable name keys on the name; no URL keys on nothing', async () => {
    const addresses = new HostAddresses(async (name) => {
      if (name === 'gone.test') throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
      throw new Error(`unexpected lookup of ${name}`);
    });
    assert.equal(await addresses.key('http://127.0.0.1:9000/x'), '127.0.0.1:9000');
    assert.equal(await addresses.key('https://[::1]/x'), '::1:443');
    assert.equal(await addresses.key('https://gone.test/x'), 'name:gone.test:443');
    assert.equal(await addresses.key(null), '');
  });

  test('an entry expires, so a name that moves is keyed on its new address', async () => {
    let clock = 0;
    let answer = '198.51.100.1';
    const addresses = new HostAddresses(
      async () => [answer],
      () => clock,
    );
    assert.equal(await addresses.key('https://moving.test/'), '198.51.100.1:443');
    answer = '198.51.100.2';
    clock += 31_000;
    assert.equal(await addresses.key('https://moving.test/'), '198.51.100.2:443');
  });
});
