/**
 * What the batcher reads before it forms: every (provider, model) with pending cargo, in order,
 * and its oldest cargo's time, whichever project holds it; batched or canceled cargo are not
 * pending.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { pendingGroups } from '../../src/store/batches/pending-groups.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { pendingCargoRow } from '../helpers/cargo-rows.js';

const T0 = Date.UTC(2026, 0, 1);

for (const backend of await backends()) {
  describe(`pending groups on ${backend.name}`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await backend.create();
    });
    after(async () => {
      await db.drop();
    });

    test("each group's oldest pending cargo, whichever project holds it", async () => {
      const projects = await Promise.all([1, 2, 3].map(() => createProjectWithKey(db.database)));
      const [first, middle, last] = projects.map((p) => p.projectId).sort() as [string, string, string];
      const at = (minutes: number) => T0 + minutes * 60_000;
      const rows = [
        // mock/svc-mock: the project that sorts last holds the oldest cargo.
        pendingCargoRow(first, { now: at(5) }),
        pendingCargoRow(middle, { now: at(3) }),
        pendingCargoRow(last, { now: at(1) }),
        pendingCargoRow(last, { now: at(9) }),
        // mock/other: the oldest is batched (not pending), the next canceled; the first project's is next.
        pendingCargoRow(middle, { now: at(0), provider_model: 'other', status: 'batched' }),
        pendingCargoRow(last, { now: at(2), provider_model: 'other', status: 'canceled' }),
        pendingCargoRow(first, { now: at(4), provider_model: 'other' }),
        pendingCargoRow(middle, { now: at(6), provider_model: 'other' }),
        // anthropic/claude: one project.
        pendingCargoRow(middle, { now: at(7), provider: 'anthropic', provider_model: 'claude' }),
      ];
      await insertCargo(db.database, rows);

      assert.deepEqual(await pendingGroups(db.database), [
        { provider: 'anthropic', providerModel: 'claude', oldestAt: at(7) },
        { provider: 'mock', providerModel: 'other', oldestAt: at(4) },
        { provider: 'mock', providerModel: 'svc-mock', oldestAt: at(1) },
      ]);
      // The oldest batched: the group's oldest is the next, now another project's.
      await db.database.write
        .updateTable('cargo')
        .set({ status: 'batched' })
        .where('id', '=', (rows[2] as { id: string }).id)
        .execute();
      const svcMock = (await pendingGroups(db.database)).find((g) => g.providerModel === 'svc-mock');
      assert.equal(svcMock?.oldestAt, at(3));
    });
  });
}
