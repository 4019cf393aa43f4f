/**
 * The slot policy with plain numbers: no database, no timers. `now` is the epoch time due times
 * are written in, `at` the monotonic time durations are measured in.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  DeliverySlots,
  LEASE_AHEAD_ROUNDS,
  PARK_AFTER_TIMEOUTS,
  PARKED_DEFER_MS,
  SLOW_DEFER_MS,
  type SlotCandidate,
  WAIT_MAX_MS,
} from '../../src/delivery/slots.js';

const NOW = 1_000_000;

let n = 0;
const candidate = (key: string, projectId = 'prj_a'): SlotCandidate => ({ id: `dlv_${n++}`, key, projectId });
const many = (count: number, key: (i: number) => string, projectId = 'prj_a') =>
  Array.from({ length: count }, (_, i) => candidate(key(i), projectId));

/** Plans and admits what the plan leases, as the loop does; returns the plan and what started. */
function claim(slots: DeliverySlots<SlotCandidate>, candidates: SlotCandidate[], at: number, now = NOW) {
  const plan = slots.plan(candidates, now, at);
  const started = [...plan.start, ...plan.ahead].filter((c) => slots.admit(c, c, at));
  return { plan, started };
}

describe('delivery slots: per-host limits', () => {
  test('a host gets at most maxPerHost attempts; its other due deliveries wait while it turns over fast', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 100, maxPerHost: 4 });
    const { plan, started } = claim(
      slots,
      many(10, () => 'webhook:127.0.0.1:80'),
      0,
    );
    assert.equal(plan.start.length, 4);
    assert.equal(started.length, 4);
    // The host is busy but young: nothing is pushed back, the rest waits for a slot.
    const next = slots.plan(
      many(6, () => 'webhook:127.0.0.1:80'),
      NOW,
      10,
    );
    assert.equal(next.start.length, 0);
    assert.equal(next.defer.length, 0);
    // Busy and fast: up to LEASE_AHEAD_ROUNDS rounds are leased ahead.
    assert.equal(next.ahead.length, 6);
    assert.ok(6 <= LEASE_AHEAD_ROUNDS * 4);
  });

  test('deliveries leased ahead start as slots free, and are given back once they waited too long', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 100, maxPerHost: 2 });
    const key = 'webhook:10.0.0.1:443';
    const first = claim(
      slots,
      many(2, () => key),
      0,
    ).started;
    const ahead = claim(
      slots,
      many(3, () => key),
      10,
    );
    assert.equal(ahead.plan.ahead.length, 3);
    assert.equal(ahead.started.length, 0, 'leased ahead: they wait for a slot');
    const freed = slots.finish(first[0] as SlotCandidate, 0, 'answered', 20);
    assert.deepEqual(
      freed.start.map((s) => s.item.id),
      [ahead.plan.ahead[0]?.id],
    );
    const late = slots.freed(10 + WAIT_MAX_MS + 1);
    assert.equal(late.start.length, 0);
    assert.deepEqual(
      late.stale.map((s) => s.id),
      ahead.plan.ahead.slice(1).map((c) => c.id),
    );
    assert.equal(slots.counts.waiting, 0);
  });

  test('a slow host keeps its slots; its other due deliveries are pushed back by about its request time', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 100, maxPerHost: 2 });
    claim(
      slots,
      many(2, () => 'webhook:10.0.0.2:443'),
      0,
    );
    const plan = slots.plan([...many(3, () => 'webhook:10.0.0.2:443'), candidate('webhook:10.0.0.3:443')], NOW, 400);
    assert.deepEqual(
      plan.defer.map((d) => d.until),
      [NOW + 400, NOW + 400, NOW + 400],
    );
    assert.equal(plan.start.length, 1, 'another host starts at once');
    const later = slots.plan(
      many(1, () => 'webhook:10.0.0.2:443'),
      NOW,
      60_000,
    );
    assert.equal(later.defer[0]?.until, NOW + SLOW_DEFER_MS);
  });

  test('the process limit: a delivery with host and project room waits for a slot, and the plan says so', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 8, maxPerHost: 10 });
    assert.equal(
      claim(
        slots,
        many(10, (i) => `webhook:10.0.1.${i}:443`),
        0,
      ).started.length,
      7,
    );
    const plan = slots.plan(
      many(2, (i) => `webhook:10.0.2.${i}:443`, 'prj_b'),
      NOW,
      1,
    );
    assert.equal(plan.start.length, 1);
    assert.equal(plan.roomExhausted, true);
    assert.deepEqual(plan.defer, []);
  });
});

describe('delivery slots: per-project fairness', () => {
  test('a project whose receivers all hang cannot hold every slot: another project starts at once', () => {
    // The audit's set-up: 8 slots, 2 per host, 16 deliveries of one project on 8 hosts that hang.
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 8, maxPerHost: 2 });
    const hanging = many(16, (i) => `webhook:127.0.0.1:${18000 + (i % 8)}`, 'prj_tarpit');
    const first = claim(slots, hanging, 0);
    assert.equal(first.started.length, 7, 'one slot stays free for other projects');
    const rest = hanging.filter((c) => !first.started.includes(c));
    // Seconds later nothing has finished; the victim's delivery comes due behind the tarpit's.
    const victim = candidate('webhook:127.0.0.1:9000', 'prj_victim');
    const second = claim(slots, [...rest, victim], 5000);
    assert.deepEqual(
      second.started.map((c) => c.id),
      [victim.id],
    );
    // The tarpit's are pushed back, so the deliveries behind them come into view.
    assert.equal(second.plan.defer.length, rest.length);
    assert.deepEqual(second.plan.blockedProjects, ['prj_tarpit']);
  });

  test('with several projects busy, one above its share gets no slot a project below it needs', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 16, maxPerHost: 100 });
    const a = claim(
      slots,
      many(20, () => 'webhook:10.1.0.1:443', 'prj_a'),
      0,
    ).started;
    assert.equal(a.length, 14, 'alone, a project may use all but the reserve (16 / 8)');
    const b = claim(
      slots,
      many(10, () => 'webhook:10.1.0.2:443', 'prj_b'),
      1,
    ).started;
    assert.equal(b.length, 2, 'a newcomer gets the reserve at once');
    // A finishes three: with two projects busy the share is 8; A (11 open) is above it, B (2) below.
    for (const c of a.slice(0, 3)) slots.finish(c, 0, 'answered', 2);
    const both = slots.plan(
      [...many(5, () => 'webhook:10.1.0.1:443', 'prj_a'), ...many(5, () => 'webhook:10.1.0.2:443', 'prj_b')],
      NOW,
      2,
    );
    assert.deepEqual(
      both.start.map((c) => c.projectId),
      ['prj_b', 'prj_b', 'prj_b'],
    );
  });

  test('a project alone with fast receivers is not held back below all but the reserve', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 256, maxPerHost: 32 });
    const { started } = claim(
      slots,
      many(300, (i) => `webhook:10.2.0.${i % 10}:443`),
      0,
    );
    assert.equal(started.length, 224);
  });
});

describe('delivery slots: parking a host that keeps timing out', () => {
  test(`after ${PARK_AFTER_TIMEOUTS} timeouts in a row a host gets one probe; an answer gives it full concurrency back`, () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 100, maxPerHost: 4 });
    const key = 'webhook:10.3.0.1:443';
    const first = claim(
      slots,
      many(4, () => key),
      0,
    ).started;
    for (const c of first.slice(0, PARK_AFTER_TIMEOUTS)) slots.finish(c, 0, 'timeout', 30_000);
    slots.finish(first[3] as SlotCandidate, 0, 'timeout', 30_000);
    assert.equal(slots.counts.parked, 1);

    const parked = claim(
      slots,
      many(5, () => key),
      30_001,
    );
    assert.equal(parked.started.length, 1, 'one probe');
    assert.deepEqual(
      parked.plan.defer.map((d) => d.until),
      Array(4).fill(NOW + PARKED_DEFER_MS),
    );
    // While the probe runs, everything else of the host is pushed back.
    const during = slots.plan(
      many(3, () => key),
      NOW,
      31_000,
    );
    assert.equal(during.start.length, 0);
    assert.equal(during.defer.length, 3);
    // Another timeout keeps it parked; an answer ends it.
    slots.finish(parked.started[0] as SlotCandidate, 30_001, 'timeout', 60_000);
    const probe = claim(
      slots,
      many(1, () => key),
      60_001,
    ).started;
    slots.finish(probe[0] as SlotCandidate, 60_001, 'answered', 60_100);
    assert.equal(slots.counts.parked, 0);
    assert.equal(
      slots.plan(
        many(6, () => key),
        NOW,
        60_200,
      ).start.length,
      4,
    );
  });

  test('a refused connection neither parks a host nor ends its parking', () => {
    const slots = new DeliverySlots<SlotCandidate>({ maxInFlight: 100, maxPerHost: 4 });
    const key = 'webhook:10.3.0.2:443';
    const started = claim(
      slots,
      many(4, () => key),
      0,
    ).started;
    for (const c of started) slots.finish(c, 0, 'unreachable', 10);
    assert.equal(slots.counts.parked, 0);
    assert.equal(slots.counts.hosts, 0, 'an idle healthy host is forgotten');
  });
});
