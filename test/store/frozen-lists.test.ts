/**
 * The migrations keep frozen copies of the status and channel lists of cargo, deliveries and
 * recoveries (never imports of live code); the database must still take every value the live
 * lists name, and refuse others.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import {
  ALL_CARGO_STATUSES,
  ALL_CHANNELS,
  DELIVERY_STATUSES,
  RECOVERABLE_CARGO_STATUSES,
  RECOVERY_STATUSES,
} from '../../src/domain/lifecycle.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends, type TestDatabase } from '../helpers/backends.js';

for (const backend of await backends()) {
  describe(`the schema takes every live status and channel on ${backend.name}`, () => {
    let db: TestDatabase;
    before(async () => {
      db = await backend.create();
    });
    after(async () => {
      await db.drop();
    });

    const cargo = (projectId: string, status: string) => ({
      id: newId('crg'),
      project_id: projectId,
      status: status as 'pending',
      model: 'svc-mock',
      provider: 'mock',
      provider_model: 'svc-mock',
      request_count: 0,
      is_records: 0,
      request_bytes: 15,
      result_ttl_seconds: 3600,
      callback_url: null,
      callback: null,
      created_at: 0,
      updated_at: 0,
    });

    test('cargo statuses', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      for (const status of ALL_CARGO_STATUSES) {
        await db.database.write.insertInto('cargo').values(cargo(projectId, status)).execute();
      }
      await assert.rejects(db.database.write.insertInto('cargo').values(cargo(projectId, 'lost')).execute());
    });

    test('delivery channels and statuses', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      const row = cargo(projectId, 'callback_pending');
      await db.database.write.insertInto('cargo').values(row).execute();
      const delivery = (channel: string, status: string) => ({
        id: newId('dlv'),
        cargo_id: row.id,
        channel: channel as 'webhook',
        status: status as 'pending',
        next_attempt_at: 0,
        locked_by: null,
        locked_until: null,
        last_error: null,
        last_status_code: null,
        trigger: 'redeliver',
        created_at: 0,
        updated_at: 0,
        ended_at: null,
      });
      for (const channel of ALL_CHANNELS) {
        for (const status of Object.values(DELIVERY_STATUSES)) {
          await db.database.write.insertInto('deliveries').values(delivery(channel, status)).execute();
        }
      }
      await assert.rejects(db.database.write.insertInto('deliveries').values(delivery('pigeon', 'pending')).execute());
    });

    test('bulk recovery statuses and the cargo statuses it redelivers', async () => {
      const { projectId } = await createProjectWithKey(db.database);
      const recovery = (status: string, cargoStatus: string) => ({
        id: newId('rcv'),
        project_id: projectId,
        status: status as 'running',
        cargo_status: cargoStatus as 'callback_failed',
        since: 0,
        until: 1,
        total: 0,
        cursor: null,
        next_run_at: 0,
        locked_by: null,
        locked_until: null,
        created_at: 1,
        updated_at: 1,
        finished_at: null,
      });
      for (const status of Object.values(RECOVERY_STATUSES)) {
        for (const cargoStatus of RECOVERABLE_CARGO_STATUSES) {
          await db.database.write.insertInto('recoveries').values(recovery(status, cargoStatus)).execute();
        }
      }
      await assert.rejects(
        db.database.write.insertInto('recoveries').values(recovery('paused', 'callback_failed')).execute(),
      );
      await assert.rejects(db.database.write.insertInto('recoveries').values(recovery('running', 'pending')).execute());
    });
  });
}
