/**
 * SpendBudget's counting between its reads of the counters, on every backend: a reservation whose
 * insert commits while a read of the counters is under way (after the read's snapshot, before it
 * returns) still counts, so one process never passes a budget.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { ApiError } from '../../src/domain/errors.js';
import { SpendBudget } from '../../src/http/spend-budget.js';
import type { Database } from '../../src/store/database.js';
import { reservedCargoStatements } from '../../src/store/spend-usage.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';

/**
 * A database whose reads (of SpendBudget: raw queries through `read`'s executor) hold their result,
 * once `hold` was called, until `release`: the query has run (its snapshot is taken) and its
 * connection is given back, but the caller does not have the answer yet.
 */
function withHeldReads(database: Database) {
  let gate: Promise<void> | null = null;
  let open = () => {};
  let held = 0;
  const executor = database.read.getExecutor();
  const heldExecutor = new Proxy(executor, {
    get(target, prop) {
      if (prop === 'executeQuery') {
        return async (...args: Parameters<typeof executor.executeQuery>) => {
          const result = await target.executeQuery(...args);
          if (gate) {
            held++;
            await gate;
          }
          return result;
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const read = new Proxy(database.read, {
    get(target, prop) {
      if (prop === 'getExecutor') return () => heldExecutor;
      const value = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return {
    database: { ...database, read } as Database,
    hold() {
      gate = new Promise((resolve) => {
        open = resolve;
      });
    },
    release() {
      gate = null;
      open();
    },
    held: () => held,
  };
}

const ESTIMATE = 1_000; // nano-USD
const BUDGETS = { month: ESTIMATE, day: null };

for (const backend of await backends()) {
  describe(`spend budget reads on ${backend.name}`, () => {
    test('a reservation committed while a read is under way counts after the read returns', async () => {
      const db = await backend.create();
      try {
        const { projectId } = await createProjectWithKey(db.database);
        const gate = withHeldReads(db.database);
        // checkMs 0: every check reads the counters.
        const budget = new SpendBudget(gate.database, new ManualClock(Date.now()), {
          defaultMonthlyUsd: null,
          checkMs: 0,
        });

        const first = await budget.check(projectId, BUDGETS, ESTIMATE);
        // A second submit's check starts a read; its snapshot holds nothing of the first cargo.
        gate.hold();
        const second = budget.check(projectId, BUDGETS, 1);
        second.catch(() => {});
        while (gate.held() === 0) await new Promise((resolve) => setImmediate(resolve));
        // The first cargo's insert commits its reservation, and the route settles it.
        await db.database.writeAll(reservedCargoStatements(db.database, [{ projectId, reservedNusd: ESTIMATE }]));
        budget.settle(first, true);
        gate.release();

        await assert.rejects(second, (err: unknown) => err instanceof ApiError && err.statusCode === 402);
        // The next read holds the commit: still one reservation counted, not two.
        await assert.rejects(
          budget.check(projectId, BUDGETS, 1),
          (err: unknown) => err instanceof ApiError && err.statusCode === 402,
        );
        const fits = await budget.check(projectId, { month: ESTIMATE + 1, day: null }, 1);
        budget.settle(fits, false);
      } finally {
        await db.drop();
      }
    });
  });
}
