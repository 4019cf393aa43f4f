/**
 * The admin API's cargo routes on every backend: a cargo's story told over HTTP while the real
 * pipeline moves it and a real loopback receiver answers its webhook (status history, batch and
 * provider job id, result, every attempt); redelivering one (409 delivery_in_progress while a
 * delivery is under way, as the detail says beforehand); the list's filters and cursor; their
 * authorization (401s; another project's: the 404 of an unknown slug).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { deliveryConfig, load } from '../delivery/webhook-support.js';
import { adminClient, assertOtherProjectHidden, assertTokenRequired } from '../helpers/admin.js';
import { createProjectWithKey } from '../helpers/app.js';
import { assertDetail, assertInvalidField } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { startReceiver } from '../helpers/receiver.js';

const UNKNOWN = `crg_${'0'.repeat(26)}`;

for (const backend of await backends()) {
  describe(`the admin API's cargo on ${backend.name}`, () => {
    const clock = new ManualClock(Date.now());
    const h = harness(backend, { clock });
    const admin = adminClient(h);
    /** One retry, a second after the first attempt. */
    const worker = () => h.worker({ latencyMs: 0, ...deliveryConfig({ retryDelaysMs: [1000] }) });

    const routes = (slug: string, id = UNKNOWN): [string, string, unknown?][] => [
      ['GET', `/projects/${slug}/cargo`],
      ['GET', `/projects/${slug}/cargo/${id}`],
      ['POST', `/projects/${slug}/cargo/${id}/redeliver`],
    ];

    test('authorization: 401 without a valid token; a project-limited token gets the 404 of an unknown slug for another project', async () => {
      const own = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      const id = await load(h.app, other.key, 'theirs');
      await assertTokenRequired(admin, routes(other.slug, id));
      const limited = (await admin.token(own.slug)).token;
      await assertOtherProjectHidden(admin, limited, routes(other.slug, id), other.slug);
      // Named under its own project, another project's cargo is not found either.
      assertDetail(await admin.call('GET', `/projects/${own.slug}/cargo/${id}`, limited), 404, `No cargo '${id}'.`);
      assertDetail(
        await admin.call('POST', `/projects/${own.slug}/cargo/${id}/redeliver`, limited),
        404,
        `No cargo '${id}'.`,
      );
      assert.deepEqual((await admin.call('GET', `/projects/${own.slug}/cargo`, limited)).body.data, []);
      // Path parameters that name nothing are a 404, never a database error.
      for (const path of [
        `/projects/${own.slug}/cargo/crg%00x`,
        '/projects/a%00b/cargo',
        `/projects/${own.slug}/cargo/x`,
      ]) {
        assert.equal((await admin.call('GET', path, (await admin.token()).token)).status, 404, path);
      }
    });

    test("a cargo's story: history, batch and job id, result, every attempt against a real receiver; redelivery refused while a delivery is in progress, then taken", async () => {
      let answer = 500;
      const receiver = await startReceiver((_r, _i, res) =>
        res.writeHead(answer, { 'content-type': 'text/plain' }).end(answer === 200 ? 'thanks' : 'receiver is down'),
      );
      try {
        const { slug, key } = await createProjectWithKey(h.db.database);
        const token = (await admin.token(slug)).token;
        const id = await load(h.app, key, 'tell my story', {
          callback_url: `${receiver.url}/hook`,
          metadata: { order: 'A-1' },
        });
        const detail = async () => {
          const res = await admin.call('GET', `/projects/${slug}/cargo/${id}`, token);
          assert.equal(res.status, 200, res.text);
          return res.body;
        };
        const pending = await detail();
        assert.equal(pending.status, 'pending');
        assert.deepEqual(pending.history, [{ status: 'pending', at: pending.created_at }]);
        assert.equal(pending.batch, null);
        assert.deepEqual(pending.redeliver, {
          available: false,
          refusal: { error: 'result_not_ready', message: `Cargo '${id}' has no result yet.` },
        });
        const early = await admin.call('POST', `/projects/${slug}/cargo/${id}/redeliver`, token);
        assertDetail(early, 409, { error: 'result_not_ready', message: `Cargo '${id}' has no result yet.` });

        const { worker: w } = await worker();
        clock.advance(500);
        await w.runUntilIdle();
        // The first attempt failed; its retry is due in a second: a delivery in progress.
        const retrying = await detail();
        assert.equal(retrying.status, 'callback_pending');
        assert.deepEqual(
          retrying.history.map((e: { status: string }) => e.status),
          ['pending', 'batched', 'processing', 'callback_pending'],
        );
        assert.equal(retrying.model, 'svc-mock');
        assert.equal(retrying.provider, 'mock');
        assert.deepEqual(retrying.metadata, { order: 'A-1' });
        assert.equal(retrying.callback_url, `${receiver.url}/hook`);
        assert.match(retrying.batch.job_id, /^job_/);
        assert.equal(retrying.batch.status, 'ended');
        assert.equal(retrying.history[1].at, retrying.batch.created_at);
        assert.equal(retrying.history[2].at, retrying.batch.submitted_at);
        assert.equal(retrying.history[3].at, retrying.result.created_at);
        assert.equal(retrying.result.success, true);
        assert.equal(retrying.result.purged_at, null);
        assert.ok(!JSON.stringify(retrying).includes('"content"'), 'never the response body');
        assert.equal(retrying.deliveries.length, 1);
        assert.equal(retrying.deliveries[0].status, 'pending');
        assert.equal(retrying.deliveries[0].next_attempt_at, new Date(clock.now() + 1000).toISOString());
        assert.equal(retrying.attempts.length, 1);
        const first = retrying.attempts[0];
        assert.deepEqual(
          [first.attempt, first.trigger, first.channel, first.status_code, first.error_class, first.response_excerpt],
          [1, 'result', 'webhook', 500, 'http_status', 'receiver is down'],
        );
        assert.equal(first.delivery_id, retrying.deliveries[0].id);
        assert.ok(Number.isInteger(first.duration_ms) && first.duration_ms >= 0);
        assert.equal(retrying.attempts_omitted, 0);
        const inProgress = {
          error: 'delivery_in_progress',
          message: `Cargo '${id}' has a delivery in progress.`,
        };
        assert.deepEqual(retrying.redeliver, { available: false, refusal: inProgress });
        assertDetail(await admin.call('POST', `/projects/${slug}/cargo/${id}/redeliver`, token), 409, inProgress);

        clock.advance(1000);
        await w.runUntilIdle();
        const failed = await detail();
        assert.equal(failed.status, 'callback_failed');
        assert.match(failed.status_description, /^Delivery failed after 2 attempts/);
        assert.equal(failed.history.at(-1).status, 'callback_failed');
        assert.equal(failed.history.at(-1).at, failed.deliveries[0].ended_at);
        assert.deepEqual(failed.redeliver, { available: true, refusal: null });

        clock.advance(1000);
        const scheduled = await admin.call('POST', `/projects/${slug}/cargo/${id}/redeliver`, token);
        assert.equal(scheduled.status, 200, scheduled.text);
        assert.deepEqual(scheduled.body, { cargo_id: id, channels: ['webhook'], status: 'callback_pending' });
        assert.equal((await detail()).redeliver.refusal.error, 'delivery_in_progress');
        answer = 200;
        await w.runUntilIdle();
        const delivered = await detail();
        assert.equal(delivered.status, 'callback_delivered');
        assert.deepEqual(
          delivered.history.map((e: { status: string }) => e.status),
          [
            'pending',
            'batched',
            'processing',
            'callback_pending',
            'callback_failed',
            'callback_pending',
            'callback_delivered',
          ],
        );
        const times = delivered.history.map((e: { at: string }) => Date.parse(e.at));
        assert.deepEqual(
          times,
          [...times].sort((a, b) => a - b),
          'oldest first',
        );
        assert.deepEqual(
          delivered.attempts.map((a: { trigger: string; status_code: number }) => [a.trigger, a.status_code]),
          [
            ['result', 500],
            ['result', 500],
            ['redeliver', 200],
          ],
        );
        assert.equal(delivered.attempts[2].response_excerpt, 'thanks');
        assert.equal(delivered.attempts[2].error_class, null);
        assert.equal(receiver.received.length, 3);
      } finally {
        await receiver.close();
      }
    });

    test('redeliver refusals: a cargo that asked for no delivery (422), an unknown cargo (404)', async () => {
      const { slug, key } = await createProjectWithKey(h.db.database);
      const token = (await admin.token()).token;
      const mailboxOnly = await load(h.app, key, 'no callback');
      const { worker: w } = await worker();
      clock.advance(500);
      await w.runUntilIdle();
      const refusal = { error: 'no_delivery_requested', message: `Cargo '${mailboxOnly}' asked for no delivery.` };
      assertDetail(await admin.call('POST', `/projects/${slug}/cargo/${mailboxOnly}/redeliver`, token), 422, refusal);
      const shown = (await admin.call('GET', `/projects/${slug}/cargo/${mailboxOnly}`, token)).body;
      assert.equal(shown.status, 'completed');
      assert.deepEqual(shown.history.at(-1).status, 'completed');
      assert.deepEqual(shown.redeliver, { available: false, refusal });
      assertDetail(
        await admin.call('POST', `/projects/${slug}/cargo/${UNKNOWN}/redeliver`, token),
        404,
        `No cargo '${UNKNOWN}'.`,
      );
      assertDetail(await admin.call('GET', `/projects/${slug}/cargo/${UNKNOWN}`, token), 404, `No cargo '${UNKNOWN}'.`);
    });

    test('the list: newest first, filters by status, model and time, cursor pages, refusals', async () => {
      const { slug, key } = await createProjectWithKey(h.db.database);
      const token = (await admin.token(slug)).token;
      const ids: string[] = [];
      for (const content of ['one', 'two', 'three']) {
        ids.push(await load(h.app, key, content));
        clock.advance(10);
      }
      const list = (query: string) => admin.call('GET', `/projects/${slug}/cargo${query}`, token);
      const all = await list('');
      assert.equal(all.status, 200, all.text);
      assert.deepEqual(
        all.body.data.map((c: { cargo_id: string }) => c.cargo_id),
        [...ids].reverse(),
      );
      assert.deepEqual(Object.keys(all.body.data[0]).sort(), [
        'cargo_id',
        'created_at',
        'model',
        'status',
        'status_description',
        'updated_at',
      ]);
      assert.equal(all.body.data[0].model, 'svc-mock');
      assert.equal(all.body.has_more, false);

      const first = await list('?limit=2');
      assert.deepEqual(first.body.data.length, 2);
      assert.equal(first.body.has_more, true);
      const second = await list(`?limit=2&after=${first.body.last_id}`);
      assert.deepEqual(
        second.body.data.map((c: { cargo_id: string }) => c.cargo_id),
        [ids[0]],
      );
      assert.equal(second.body.has_more, false);

      const created = all.body.data.map((c: { created_at: string }) => c.created_at);
      const middle = await list(`?created_after=${created[2]}&created_before=${created[0]}`);
      assert.deepEqual(
        middle.body.data.map((c: { cargo_id: string }) => c.cargo_id),
        [ids[1]],
      );
      assert.equal((await list('?status=pending')).body.data.length, 3);
      assert.equal((await list('?status=callback_failed')).body.data.length, 0);
      assert.equal((await list('?model=other')).body.data.length, 0);

      assertInvalidField(await list('?limit=0'), 'limit');
      assertInvalidField(await list('?after=nope'), 'after');
      assertInvalidField(await list('?created_after=yesterday'), 'created_after');
      assert.equal((await list('?status=lost')).status, 400);
      assert.equal((await list('?bogus=1')).status, 400);
      // Text PostgreSQL cannot hold is refused before any query.
      assertInvalidField(await list('?model=a%00b'), 'model');
    });
  });
}
