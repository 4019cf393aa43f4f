/** Tracking and GET /cargo/{id}/result on every backend: the stored result, 409 before it is ready, 410 once purged. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import type { CargoStatus } from '../../src/domain/lifecycle.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { assertDetail } from '../helpers/assertions.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';
import { RESULT_ENVELOPE_KEYS } from '../helpers/wire-keys.js';

/** decisions.md, status model. */
const DESCRIPTIONS: Record<CargoStatus, string> = {
  pending: 'Waiting to be assigned to a batch',
  batched: 'Assigned to a batch, waiting for submission',
  processing: 'Batch is being processed by the provider',
  completed: 'Processing completed',
  failed: 'Processing failed',
  callback_pending: 'Result ready, delivering callback',
  callback_delivered: 'Callback delivered',
  callback_failed: 'Callback delivery failed after all retries',
  canceled: 'Canceled before processing',
};
const UNFINISHED: CargoStatus[] = ['pending', 'batched', 'processing'];
const WITH_RESULT: CargoStatus[] = ['completed', 'failed', 'callback_pending', 'callback_delivered', 'callback_failed'];

// The model message as the pipeline stores it; a 64-bit id checks the text is passed through untouched.
const RESPONSE_JSON =
  '{"id":"msg_mock_1","type":"message","role":"assistant","content":[{"type":"text","text":"Hi é 😀"}],"model":"svc-mock","stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":4},"trace":12345678901234567890}';

for (const backend of await backends()) {
  describe(`tracking and mailbox on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2027, 2, 14, 15, 9, 26, 535));
    const h = harness(backend, { clock });

    async function submit(key: string, extra: Record<string, unknown> = {}): Promise<string> {
      const res = await h.app.request('POST', '/cargo/load', { key, body: mockBody('hi', extra) });
      assert.equal(res.status, 200, res.text);
      return res.body.cargo_id;
    }
    async function submitRaw(key: string, metadataJson: string): Promise<string> {
      const res = await h.app.request('POST', '/cargo/load', {
        key,
        rawBody: `{"params":{"model":"svc-mock","messages":[{"role":"user","content":"hi"}]},"metadata":${metadataJson}}`,
        headers: { 'content-type': 'application/json' },
      });
      assert.equal(res.status, 200, res.text);
      return res.body.cargo_id;
    }
    // The pipeline that moves cargo and writes results is built elsewhere; these stand in for it.
    const setStatus = (cargoId: string, status: CargoStatus, updatedAt = clock.now()) =>
      h.db.database.write
        .updateTable('cargo')
        .set({ status, updated_at: updatedAt })
        .where('id', '=', cargoId)
        .execute();
    const storeResult = (
      cargoId: string,
      result: {
        success: boolean;
        response?: string | null;
        error?: string | null;
        createdAt: number;
        purgedAt?: number;
      },
    ) =>
      h.db.database.write
        .insertInto('results')
        .values({
          cargo_id: cargoId,
          success: result.success ? 1 : 0,
          response: result.response ?? null,
          error_message: result.error ?? null,
          created_at: result.createdAt,
          expires_at: result.createdAt + 2_592_000_000,
          purged_at: result.purgedAt ?? null,
        })
        .execute();
    const tracking = (key: string, cargoId: string) => h.app.request('GET', `/cargo/${cargoId}/tracking`, { key });
    const result = (key: string, cargoId: string) => h.app.request('GET', `/cargo/${cargoId}/result`, { key });

    test("another project's cargo is 404 Cargo not found on tracking and result", async () => {
      const owner = await createProjectWithKey(h.db.database);
      const other = await createProjectWithKey(h.db.database);
      const cargoId = await submit(owner.key);
      assert.equal((await tracking(owner.key, cargoId)).status, 200);
      assertDetail(await tracking(other.key, cargoId), 404, 'Cargo not found');
      assertDetail(await result(other.key, cargoId), 404, 'Cargo not found');

      await setStatus(cargoId, 'completed');
      await storeResult(cargoId, { success: true, response: RESPONSE_JSON, createdAt: clock.now() });
      assert.equal((await result(owner.key, cargoId)).status, 200);
      assertDetail(await result(other.key, cargoId), 404, 'Cargo not found');
      assertDetail(await tracking(other.key, cargoId), 404, 'Cargo not found');
    });

    test('an unknown cargo id is 404 on tracking and result', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      for (const id of ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c', 'nope', 'cargo_123', encodeURIComponent("x' or 1=1 --")]) {
        assertDetail(await tracking(key, id), 404, 'Cargo not found');
        assertDetail(await result(key, id), 404, 'Cargo not found');
      }
    });

    test('tracking: cargo_id, status, status_description, created_at and updated_at as ISO UTC', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const createdAt = clock.now();
      const cargoId = await submit(key);
      const res = await tracking(key, cargoId);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        cargo_id: cargoId,
        status: 'pending',
        status_description: 'Waiting to be assigned to a batch',
        created_at: '2027-03-14T15:09:26.535Z',
        updated_at: '2027-03-14T15:09:26.535Z',
      });
      assert.equal(new Date(res.body.created_at).getTime(), createdAt);

      const updatedAt = createdAt + 61_001;
      for (const status of [...UNFINISHED, ...WITH_RESULT]) {
        await setStatus(cargoId, status, updatedAt);
        const later = await tracking(key, cargoId);
        assert.deepEqual(later.body, {
          cargo_id: cargoId,
          status,
          status_description: DESCRIPTIONS[status],
          created_at: '2027-03-14T15:09:26.535Z',
          updated_at: '2027-03-14T15:10:27.536Z',
        });
      }
    });

    test('tracking never carries the response', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const cargoId = await submit(key, { metadata: { a: 1 } });
      await setStatus(cargoId, 'completed');
      await storeResult(cargoId, { success: true, response: RESPONSE_JSON, createdAt: clock.now() });
      const res = await tracking(key, cargoId);
      assert.deepEqual(Object.keys(res.body).sort(), [
        'cargo_id',
        'created_at',
        'status',
        'status_description',
        'updated_at',
      ]);
      assert.doesNotMatch(res.text, /msg_mock_1/);
    });

    for (const status of UNFINISHED) {
      test(`result of a ${status} cargo is 409 result_not_ready with its status and description`, async () => {
        const { key } = await createProjectWithKey(h.db.database);
        const cargoId = await submit(key);
        await setStatus(cargoId, status);
        const res = await result(key, cargoId);
        assert.equal(res.status, 409, res.text);
        assert.deepEqual(Object.keys(res.body), ['detail']);
        assert.equal(typeof res.body.detail.message, 'string');
        assert.ok(res.body.detail.message.length > 0);
        assert.deepEqual(res.body.detail, {
          error: 'result_not_ready',
          message: res.body.detail.message,
          cargo_id: cargoId,
          status,
          status_description: DESCRIPTIONS[status],
        });
      });
    }

    test('result of a completed cargo: the 200 envelope with the response, metadata and result time', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const cargoId = await submit(key, { metadata: { ticket: 'T-1', n: [1, 2] } });
      const producedAt = Date.UTC(2027, 2, 14, 16, 0, 0, 7);
      await setStatus(cargoId, 'completed');
      await storeResult(cargoId, { success: true, response: RESPONSE_JSON, createdAt: producedAt });
      const res = await result(key, cargoId);
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.deepEqual(Object.keys(res.body), RESULT_ENVELOPE_KEYS);
      assert.deepEqual(res.body, {
        cargo_id: cargoId,
        success: true,
        response: JSON.parse(RESPONSE_JSON),
        error_message: null,
        created_at: '2027-03-14T16:00:00.007Z',
        metadata: { ticket: 'T-1', n: [1, 2] },
      });
      // The stored response text is passed through, not re-serialized (no rounding of large numbers).
      assert.ok(res.text.includes(`"response":${RESPONSE_JSON}`), res.text);
    });

    test('result of a failed cargo: success false, response null, error_message text', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const cargoId = await submit(key);
      await setStatus(cargoId, 'failed');
      await storeResult(cargoId, { success: false, error: 'Provider error: overloaded', createdAt: clock.now() });
      const res = await result(key, cargoId);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        cargo_id: cargoId,
        success: false,
        response: null,
        error_message: 'Provider error: overloaded',
        created_at: new Date(clock.now()).toISOString(),
        metadata: null,
      });
    });

    for (const status of ['callback_pending', 'callback_delivered', 'callback_failed'] as const) {
      test(`result of a ${status} cargo is 200`, async () => {
        const { key } = await createProjectWithKey(h.db.database);
        const cargoId = await submit(key, { callback_url: 'https://example.com/hook' });
        await setStatus(cargoId, status);
        await storeResult(cargoId, { success: true, response: RESPONSE_JSON, createdAt: clock.now() });
        const res = await result(key, cargoId);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.success, true);
        assert.equal(res.body.response.id, 'msg_mock_1');
      });
    }

    test('metadata is echoed in the result exactly as submitted', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const metadataJson = '{"z":"last first","10":1,"2":2,"ünï":"😀 日本","big":98765432109876543210,"f":2.50}';
      const cargoId = await submitRaw(key, metadataJson);
      await setStatus(cargoId, 'completed');
      await storeResult(cargoId, { success: true, response: RESPONSE_JSON, createdAt: clock.now() });
      const res = await result(key, cargoId);
      assert.equal(res.status, 200, res.text);
      assert.ok(res.text.endsWith(`"metadata":${metadataJson}}`), res.text);
    });

    for (const status of ['completed', 'failed', 'callback_failed'] as const) {
      test(`a purged result of a ${status} cargo is 410 result_expired with the last status`, async () => {
        const { key } = await createProjectWithKey(h.db.database);
        const cargoId = await submit(key);
        await setStatus(cargoId, status);
        await storeResult(cargoId, {
          success: status !== 'failed',
          response: null,
          createdAt: clock.now() - 3_600_000,
          purgedAt: clock.now(),
        });
        const res = await result(key, cargoId);
        assert.equal(res.status, 410, res.text);
        assert.deepEqual(Object.keys(res.body), ['detail']);
        assert.equal(typeof res.body.detail.message, 'string');
        assert.deepEqual(res.body.detail, {
          error: 'result_expired',
          message: res.body.detail.message,
          cargo_id: cargoId,
          status,
        });
        assert.equal('status_description' in res.body.detail, false);
        // Tracking still works after the purge: the cargo row stays.
        assert.equal((await tracking(key, cargoId)).body.status, status);
      });
    }
  });
}
