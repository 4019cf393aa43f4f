/** A cargo's status history told from its rows (domain/cargo-history.ts), table-driven. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cargoHistory, type HistoryRows } from '../../src/domain/cargo-history.js';

const base: HistoryRows = {
  status: 'pending',
  createdAt: 100,
  updatedAt: 100,
  batch: null,
  result: null,
  deliveries: [],
};
const batch = { createdAt: 200, submittedAt: 300 };
const delivery = (trigger: string, createdAt: number, endedAt: number | null, status: string) => ({
  trigger,
  createdAt,
  endedAt,
  status,
});

const cases: [string, HistoryRows, [string, number][]][] = [
  ['pending', base, [['pending', 100]]],
  [
    'batched, not yet submitted',
    { ...base, status: 'batched', batch: { createdAt: 200, submittedAt: null } },
    [
      ['pending', 100],
      ['batched', 200],
    ],
  ],
  [
    'a mailbox-only cargo, completed',
    { ...base, status: 'completed', updatedAt: 400, batch, result: { createdAt: 400, success: true } },
    [
      ['pending', 100],
      ['batched', 200],
      ['processing', 300],
      ['completed', 400],
    ],
  ],
  [
    'a batch refused before submission: failed without processing',
    {
      ...base,
      status: 'failed',
      updatedAt: 400,
      batch: { createdAt: 200, submittedAt: null },
      result: { createdAt: 400, success: false },
    },
    [
      ['pending', 100],
      ['batched', 200],
      ['failed', 400],
    ],
  ],
  [
    'delivered at the second try of a failed round, after a redelivery',
    {
      ...base,
      status: 'callback_delivered',
      updatedAt: 900,
      batch,
      result: { createdAt: 400, success: true },
      deliveries: [
        delivery('result', 400, 500, 'failed'),
        delivery('result', 400, 450, 'delivered'),
        delivery('redeliver', 700, 900, 'delivered'),
        delivery('redeliver', 700, 800, 'delivered'),
      ],
    },
    [
      ['pending', 100],
      ['batched', 200],
      ['processing', 300],
      ['callback_pending', 400],
      ['callback_failed', 500],
      ['callback_pending', 700],
      ['callback_delivered', 900],
    ],
  ],
  [
    'a recovery under way',
    {
      ...base,
      status: 'callback_pending',
      updatedAt: 700,
      batch,
      result: { createdAt: 400, success: true },
      deliveries: [delivery('result', 400, 500, 'failed'), delivery('recovery', 700, null, 'pending')],
    },
    [
      ['pending', 100],
      ['batched', 200],
      ['processing', 300],
      ['callback_pending', 400],
      ['callback_failed', 500],
      ['callback_pending', 700],
    ],
  ],
  [
    'canceled while batched',
    { ...base, status: 'canceled', updatedAt: 250, batch: { createdAt: 200, submittedAt: null } },
    [
      ['pending', 100],
      ['batched', 200],
      ['canceled', 250],
    ],
  ],
  [
    'taken back to pending by a refill: the rows cannot tell when, the last move is at updated_at',
    { ...base, status: 'pending', updatedAt: 260, batch: { createdAt: 200, submittedAt: null } },
    [['pending', 100]],
  ],
];

for (const [name, rows, expected] of cases) {
  test(`cargoHistory: ${name}`, () => {
    assert.deepEqual(
      cargoHistory(rows).map((e) => [e.status, e.at]),
      expected,
    );
  });
}
