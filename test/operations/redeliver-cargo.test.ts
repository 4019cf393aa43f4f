/** The redeliverCargo operation on every backend: a fresh delivery on each channel asked for, and its refusals. */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import type { CargoStatus } from '../../src/domain/lifecycle.js';
import { redeliverCargo } from '../../src/operations/redeliver-cargo.js';
import { insertCargo } from '../../src/store/cargo/insert.js';
import { backends, type TestDatabase } from '../helpers/backends.js';
import { depsOf, newProject, refused, value } from './support.js';

const OBJECT_TARGET = JSON.stringify({
  type: 'object_store',
  connection_id: 'conn_00000000000000000000000000',
  bucket_arn: 'arn:aws:s3:::results',
  key_prefix: 'convoy/',
});

for (const backend of await backends()) {
  describe(`redeliverCargo on ${backend.name}`, () => {
    let db: TestDatabase;
    let deps: ReturnType<typeof depsOf>;
    let projectId: string;
    before(async () => {
      db = await backend.create();
      deps = depsOf(db.database);
      projectId = (await newProject(deps)).id;
    });
    after(() => db.drop());

    /** A cargo in this state, written straight to the tables. */
    async function cargo(options: {
      status: CargoStatus;
      callbackUrl?: string;
      callback?: string;
      result?: 'stored' | 'purged';
      deliveries?: ('pending' | 'delivered' | 'failed')[];
    }): Promise<string> {
      const now = deps.clock.now();
      const id = newId('crg', now);
      await insertCargo(db.database, [
        {
          id,
          project_id: projectId,
          status: options.status,
          model: 'svc-mock',
          provider: 'mock',
          provider_model: 'svc-mock',
          request: '{"requests":[{"modelInput":{"messages":[{"role":"user","content":"hi"}]}}]}',
          request_count: 1,
          is_records: 0,
          request_bytes: 70,
          metadata: null,
          result_ttl_seconds: 3600,
          callback_url: options.callbackUrl ?? null,
          callback: options.callback ?? null,
          created_at: now,
          updated_at: now,
        },
      ]);
      if (options.result) {
        await db.database.write
          .insertInto('results')
          .values({
            cargo_id: id,
            success: 1,
            response: options.result === 'purged' ? null : '{"role":"assistant","content":"hello"}',
            error_message: null,
            created_at: now,
            expires_at: now + 3_600_000,
            purged_at: options.result === 'purged' ? now : null,
          })
          .execute();
      }
      for (const status of options.deliveries ?? []) {
        await db.database.write
          .insertInto('deliveries')
          .values({
            id: newId('dlv', now),
            cargo_id: id,
            channel: 'webhook',
            status,
            next_attempt_at: now,
            locked_by: null,
            locked_until: null,
            last_error: null,
            last_status_code: null,
            trigger: 'result',
            created_at: now,
            updated_at: now,
            ended_at: status === 'pending' ? null : now,
          })
          .execute();
      }
      return id;
    }

    const pendingDeliveries = (cargoId: string) =>
      db.database.read
        .selectFrom('deliveries')
        .select(['channel', 'trigger', 'created_at'])
        .where('cargo_id', '=', cargoId)
        .where('status', '=', 'pending')
        .execute();
    const statusOf = async (cargoId: string) =>
      (await db.database.read.selectFrom('cargo').select('status').where('id', '=', cargoId).executeTakeFirstOrThrow())
        .status;

    test('a finished cargo gets a fresh delivery on every channel it asked for', async () => {
      const id = await cargo({
        status: 'callback_failed',
        callbackUrl: 'https://receiver.test/h',
        callback: OBJECT_TARGET,
        result: 'stored',
        deliveries: ['failed'],
      });
      deps.clock.advance(1000);
      assert.deepEqual(value(await redeliverCargo(deps, { cargoId: id })), {
        cargoId: id,
        channels: ['webhook', 'object_store'],
        status: 'callback_pending',
      });
      assert.equal(await statusOf(id), 'callback_pending');
      assert.deepEqual((await pendingDeliveries(id)).map((d) => [d.channel, d.trigger, d.created_at]).sort(), [
        ['object_store', 'redeliver', deps.clock.now()],
        ['webhook', 'redeliver', deps.clock.now()],
      ]);
      // ...and now one is in progress.
      refused(await redeliverCargo(deps, { cargoId: id }), 'delivery_in_progress', /has a delivery in progress$/);
    });

    test('refused: unknown, pending (no result yet), mailbox-only, purged; nothing changes', async () => {
      const pending = await cargo({ status: 'pending', callbackUrl: 'https://receiver.test/h' });
      const mailboxOnly = await cargo({ status: 'completed', result: 'stored' });
      const purged = await cargo({
        status: 'callback_delivered',
        callbackUrl: 'https://receiver.test/h',
        result: 'purged',
        deliveries: ['delivered'],
      });
      refused(
        await redeliverCargo(deps, { cargoId: 'crg_00000000000000000000000000' }),
        'cargo_not_found',
        /^no cargo 'crg_00000000000000000000000000'$/,
      );
      refused(await redeliverCargo(deps, { cargoId: pending }), 'result_not_ready', /has no result yet$/);
      refused(await redeliverCargo(deps, { cargoId: mailboxOnly }), 'no_delivery_requested', /asked for no delivery$/);
      refused(await redeliverCargo(deps, { cargoId: purged }), 'result_purged', /has been purged$/);
      assert.deepEqual(
        [await statusOf(pending), await statusOf(mailboxOnly), await statusOf(purged)],
        ['pending', 'completed', 'callback_delivered'],
      );
      for (const id of [pending, mailboxOnly, purged]) assert.deepEqual(await pendingDeliveries(id), []);
    });
  });
}
