/** The cargo lifecycle as a graph: every status reachable, the ends where the document puts them. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ALL_CARGO_STATUSES,
  CARGO_MOVES,
  type CargoStatus,
  canMove,
  hasResult,
  statusAfterResult,
} from '../../src/domain/lifecycle.js';

describe('cargo lifecycle', () => {
  const next = (from: CargoStatus) => ALL_CARGO_STATUSES.filter((to) => to !== from && canMove(from, to)).sort();

  test('every status is reachable from pending', () => {
    const seen = new Set<CargoStatus>(['pending']);
    const queue: CargoStatus[] = ['pending'];
    while (queue.length > 0) {
      for (const to of next(queue.shift() as CargoStatus)) {
        if (!seen.has(to)) {
          seen.add(to);
          queue.push(to);
        }
      }
    }
    assert.deepEqual([...seen].sort(), [...ALL_CARGO_STATUSES].sort());
  });

  test('moves go forward until a result exists; after that only deliveries move a cargo', () => {
    assert.deepEqual(next('pending'), ['batched', 'canceled']);
    assert.deepEqual(next('batched'), ['callback_pending', 'canceled', 'completed', 'failed', 'processing']);
    assert.deepEqual(next('processing'), ['callback_pending', 'completed', 'failed']);
    assert.deepEqual(next('callback_pending'), ['callback_delivered', 'callback_failed']);
    // Terminal but for an operator's redelivery.
    for (const end of ['completed', 'failed', 'callback_delivered', 'callback_failed'] as const) {
      assert.deepEqual(next(end), ['callback_pending'], end);
    }
    // Canceled is final: no delivery, not even an operator's redelivery.
    assert.deepEqual(next('canceled'), []);
    assert.ok(hasResult('canceled'));
    assert.equal(canMove('processing', 'canceled'), false);
    assert.equal(canMove('processing', 'pending'), false);
    assert.equal(canMove('callback_delivered', 'completed'), false);
  });

  test('every move names real statuses, and a result is there exactly where moves say so', () => {
    for (const [name, move] of Object.entries(CARGO_MOVES)) {
      for (const status of [...move.from, ...move.to]) assert.ok(ALL_CARGO_STATUSES.includes(status), name);
    }
    for (const status of CARGO_MOVES.result.to) assert.ok(hasResult(status));
    for (const status of CARGO_MOVES.result.from) assert.ok(!hasResult(status));
    assert.ok(!hasResult('pending'));
    assert.equal(statusAfterResult(true, 0), 'completed');
    assert.equal(statusAfterResult(false, 0), 'failed');
    assert.equal(statusAfterResult(true, 2), 'callback_pending');
  });
});
