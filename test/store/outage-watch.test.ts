/**
 * The outage watch's reports, on real timers: one outage reported once when it starts and once when
 * its probe answers; an attempt that began before the outage was seen over (a connection refused
 * while the database was starting, answered after the probe's success) starts no second one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type OutageEvent, OutageWatch } from '../../src/store/outage.js';
import { waitFor } from '../helpers/wait.js';

const refused = () =>
  Object.assign(new Error('the database system is not yet accepting connections'), { code: '57P03' });

test('an attempt begun before the recovery starts no new outage; one begun after it does', async () => {
  let answering = false;
  const events: OutageEvent['state'][] = [];
  const watch = new OutageWatch(
    async () => {
      if (!answering) throw refused();
    },
    (event) => events.push(event.state),
  );
  try {
    const before = Date.now();
    watch.failed(refused());
    watch.failed(refused()); // the same outage: not reported again
    answering = true;
    await waitFor(
      'the recovery',
      () => events.length,
      (n) => n === 2,
      { timeoutMs: 3000 },
    );
    assert.deepEqual(events, ['down', 'up']);

    watch.failed(refused(), before);
    assert.deepEqual(events, ['down', 'up'], 'a stale attempt reports nothing');
    assert.equal(watch.down, false);

    watch.failed(refused());
    assert.deepEqual(events, ['down', 'up', 'down'], 'a new attempt after the recovery starts a new outage');
  } finally {
    watch.close();
  }
});
