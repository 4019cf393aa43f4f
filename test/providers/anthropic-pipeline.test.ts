/**
 * The Anthropic provider end to end through barge's HTTP API: cargo loaded over HTTP, batched and
 * submitted by a worker of the same service wiring as `barge serve`, against the Message Batches
 * emulator on loopback; results read back from the mailbox, webhooks and GET /usage.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Config } from '../../src/config.js';
import { ManualClock } from '../../src/domain/clock.js';
import { customIdFor } from '../../src/domain/custom-ids.js';
import { type CargoStatus, hasResult } from '../../src/domain/lifecycle.js';
import { POLL_MAX_MS } from '../../src/domain/polling.js';
import {
  REQUEST_EXPIRED_ERROR as EXPIRED_ERROR,
  EXPIRED_ERROR as WINDOW_CLOSED_ERROR,
} from '../../src/domain/records.js';
import { roundUsd } from '../../src/domain/usage.js';
import type { Service } from '../../src/service.js';
import { type AnthropicEmulator, startAnthropicEmulator } from '../helpers/anthropic-emulator.js';
import { createProjectWithKey, fetchResult, loadCargo, testConfig } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness, serveHarness } from '../helpers/harness.js';
import { oneBatchOf } from '../helpers/held-create.js';
import { type ObjectStoreRig, startObjectStoreRig } from '../helpers/object-store.js';
import { startReceiver } from '../helpers/receiver.js';
import { fullSurfaceParams } from '../helpers/request-surface.js';
import { loadOverHttp } from '../helpers/serve.js';
import { eventually, waitFor } from '../helpers/wait.js';

const HOUR = 3_600_000;
const CREATE_PATH = /^\/v1\/messages\/batches$/;

interface CatalogModel {
  id: string;
  routes: { provider: string; model: string }[];
  prices_usd_per_mtok: { input: number; output: number; batch_input: number; batch_output: number };
}
const CATALOG = JSON.parse(readFileSync(new URL('../../models/catalog.json', import.meta.url), 'utf8')) as {
  models: CatalogModel[];
};
const catalogModel = (id: string) => {
  const model = CATALOG.models.find((m) => m.id === id);
  assert.ok(model, `catalog has ${id}`);
  return model;
};
const anthropicModelOf = (id: string) => {
  const route = catalogModel(id).routes.find((r) => r.provider === 'anthropic');
  assert.ok(route, `${id} has an anthropic route`);
  return route.model;
};

const SONNET = 'claude-sonnet-4-5';
const HAIKU = 'claude-haiku-4-5';

interface CreatedRequest {
  custom_id: string;
  params: Record<string, any>;
}

for (const backend of await backends()) {
  describe(`the Anthropic provider through the API on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 22, 12));
    const config: Partial<Config> = {};
    let emulator: AnthropicEmulator;
    let rig: ObjectStoreRig;
    before(async () => {
      emulator = await startAnthropicEmulator();
      rig = await startObjectStoreRig();
      Object.assign(config, rig.config);
      config.providers = {
        ...testConfig().providers,
        anthropic: { apiKey: emulator.apiKey, baseUrl: emulator.url, version: '2023-06-01' },
      };
    });
    after(async () => {
      await emulator.close();
      await rig.close();
    });
    const h = harness(backend, { clock, config });

    let shared: Service | undefined;
    const worker = async () => {
      shared ??= (await h.worker()).worker;
      return shared;
    };
    const load = (key: string, body: unknown) => loadCargo(h.app, key, body);
    const status = async (key: string, id: string) =>
      (await h.app.request('GET', `/cargo/${id}/tracking`, { key })).body.status as CargoStatus;
    const result = (key: string, id: string) => fetchResult(h.app, key, id);
    const creates = () => emulator.log.filter((r) => r.method === 'POST' && CREATE_PATH.test(r.path));
    /** The create calls the emulator answered with a batch, from index `from` of the create log. */
    const createdRequests = (from = 0): CreatedRequest[] =>
      creates()
        .slice(from)
        .filter((r) => r.status === 200)
        .flatMap((r) => (r.body as { requests: CreatedRequest[] }).requests);
    /** The request whose (first) user message is `content`. */
    const requestWith = (requests: CreatedRequest[], content: string) => {
      const found = requests.find((r) => r.params.messages?.[0]?.content === content);
      assert.ok(found, `a request with content ${JSON.stringify(content)} reached the emulator`);
      return found;
    };
    /** What the emulator returned for a custom_id (its result line's `result`). */
    const returned = (customId: string) => {
      for (const batch of emulator.batches()) {
        const line = batch.results?.find((r) => r.custom_id === customId);
        if (line) return line.result as Record<string, any>;
      }
      assert.fail(`the emulator has no result for ${customId}`);
    };
    /** Lets the anthropic groups flush (the provider's default max wait is a minute) and submit. */
    const submit = async () => {
      clock.advance(60_000);
      await (await worker()).runUntilIdle();
    };
    /** Ends every emulator batch and polls until the cargo are finished. */
    const finish = async (key: string, ids: string[]) => {
      emulator.endAll();
      for (let step = 0; step < 5; step++) {
        clock.advance(POLL_MAX_MS);
        await (await worker()).runUntilIdle();
        const statuses = await Promise.all(ids.map((id) => status(key, id)));
        if (statuses.every((s) => hasResult(s))) return;
      }
      assert.fail(`cargo did not finish: ${JSON.stringify(await Promise.all(ids.map((id) => status(key, id))))}`);
    };

    test('a catalog id and anthropic/<model> reach the emulator with the route model, the params as sent, the pinned version and the key; the mailbox holds the message as returned', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const sonnetParams = {
        max_tokens: 120,
        system: 'You answer in one sentence.',
        temperature: 0.3,
        top_k: 5,
        stop_sequences: ['END'],
        messages: [
          { role: 'user', content: 'What does a barge carry?' },
          { role: 'assistant', content: 'Cargo.' },
          { role: 'user', content: [{ type: 'text', text: 'More precisely?' }] },
        ],
      };
      const haikuModel = anthropicModelOf(HAIKU);
      const haikuParams = {
        max_tokens: 4,
        system: 'Be short.',
        top_p: 0.9,
        messages: [{ role: 'user', content: 'Qualified name, please' }],
      };
      const before = creates().length;
      const viaCatalog = await load(key, { params: { model: SONNET, ...sonnetParams }, metadata: { n: 1 } });
      const viaName = await load(key, { params: { model: `anthropic/${haikuModel}`, ...haikuParams } });
      await submit();
      assert.equal(await status(key, viaCatalog), 'processing');
      assert.equal(await status(key, viaName), 'processing');

      const calls = creates().slice(before);
      assert.equal(calls.length, 2, 'one batch per provider model');
      for (const call of calls) {
        assert.equal(call.status, 200);
        assert.equal(call.headers['anthropic-version'], '2023-06-01');
        // SDK 1.x sends the key as `Authorization: Bearer`; the API takes it there or in x-api-key.
        const sentKey = call.headers['x-api-key'] ?? /^Bearer (.+)$/.exec(call.headers.authorization ?? '')?.[1];
        assert.equal(sentKey, emulator.apiKey);
      }
      const requests = createdRequests(before);
      const sonnet = requestWith(requests, 'What does a barge carry?');
      assert.deepEqual(sonnet.params, { model: anthropicModelOf(SONNET), ...sonnetParams });
      assert.equal(Object.keys(sonnet.params)[0], 'model');
      const haiku = requestWith(requests, 'Qualified name, please');
      assert.deepEqual(haiku.params, { model: haikuModel, ...haikuParams });

      await finish(key, [viaCatalog, viaName]);
      for (const [id, request] of [
        [viaCatalog, sonnet],
        [viaName, haiku],
      ] as const) {
        const body = await result(key, id);
        assert.equal(body.success, true);
        assert.equal(body.error_message, null);
        const line = returned(request.custom_id);
        assert.equal(line.type, 'succeeded');
        // Exactly as returned, the emulator's unknown `future_field` included.
        assert.deepEqual(body.response, line.message);
        assert.deepEqual(body.response.future_field, { added_by: 'emulator' });
        assert.equal(body.response.model, request.params.model);
      }
      assert.equal((await result(key, viaName)).response.stop_reason, 'max_tokens');
      assert.deepEqual((await result(key, viaCatalog)).metadata, { n: 1 });
    });

    test('the full request surface reaches the emulator exactly as sent; a tool_use answer is stored as returned', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const params = fullSurfaceParams('Anthropic surface');
      const id = await load(key, { params: { model: SONNET, ...params } });
      const customId = customIdFor(id, null);
      const answer = {
        content: [{ type: 'tool_use', id: 'toolu_02', name: 'find_city', input: { city: 'Paris', country: 'FR' } }],
        stop_reason: 'tool_use',
        usage: {
          input_tokens: 40,
          cache_creation_input_tokens: 2000,
          cache_read_input_tokens: 0,
          cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 1500 },
          output_tokens: 12,
        },
      };
      emulator.setOutcome(customId, { type: 'succeeded', message: answer });
      const before = creates().length;
      await submit();
      const sent = createdRequests(before).find((r) => r.custom_id === customId);
      assert.ok(sent, 'the request reached the emulator');
      assert.deepEqual(sent.params, { model: anthropicModelOf(SONNET), ...params });
      await finish(key, [id]);
      const body = await result(key, id);
      assert.equal(body.success, true, body.error_message);
      assert.deepEqual(body.response, returned(customId).message);
      assert.deepEqual(body.response.content, answer.content);
      assert.deepEqual(body.response.usage, answer.usage);
    });

    test('mixed outcomes: a records cargo keeps input order and fails with `<type>: <message>`; an expired request fails as expired', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const before = creates().length;
      const records = await load(key, {
        params: { model: SONNET, max_tokens: 50 },
        records: [
          { recordId: 'zulu', modelInput: { messages: [{ role: 'user', content: 'records: fine' }] } },
          { recordId: 'alpha', modelInput: { messages: [{ role: 'user', content: 'records: errored' }] } },
        ],
      });
      const expired = await load(key, {
        params: { model: SONNET, max_tokens: 50, messages: [{ role: 'user', content: 'too late' }] },
      });
      const fine = await load(key, {
        params: { model: SONNET, max_tokens: 50, messages: [{ role: 'user', content: 'on time' }] },
      });
      await submit();
      const requests = createdRequests(before);
      assert.equal(requests.length, 4, 'the records and both cargo go in one batch');
      const errored = requestWith(requests, 'records: errored');
      emulator.setOutcome(errored.custom_id, {
        type: 'errored',
        error: { type: 'overloaded_error', message: 'Overloaded' },
      });
      emulator.setOutcome(requestWith(requests, 'too late').custom_id, { type: 'expired' });
      await finish(key, [records, expired, fine]);

      assert.equal(await status(key, records), 'failed');
      const listed = await result(key, records);
      assert.equal(listed.success, false);
      assert.equal(listed.error_message, '1 of 2 records failed');
      assert.equal(listed.response.type, 'records');
      assert.deepEqual(
        listed.response.records.map((r: { recordId: string }) => r.recordId),
        ['zulu', 'alpha'],
      );
      const [zulu, alpha] = listed.response.records;
      assert.equal(zulu.success, true);
      assert.equal(zulu.error, null);
      assert.deepEqual(zulu.response, returned(requestWith(requests, 'records: fine').custom_id).message);
      assert.deepEqual(alpha, {
        recordId: 'alpha',
        success: false,
        response: null,
        error: 'overloaded_error: Overloaded',
      });

      assert.equal(await status(key, expired), 'failed');
      const late = await result(key, expired);
      assert.equal(late.success, false);
      assert.equal(late.response, null);
      assert.equal(late.error_message, EXPIRED_ERROR);

      assert.equal((await result(key, fine)).success, true);
    });

    test('a webhook delivers the real provider result with its response', async () => {
      const receiver = await startReceiver();
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const before = creates().length;
        const id = await load(key, {
          params: { model: SONNET, max_tokens: 30, messages: [{ role: 'user', content: 'call me back' }] },
          callback_url: `${receiver.url}/hook`,
          metadata: { order: 'W-1' },
        });
        await submit();
        const request = requestWith(createdRequests(before), 'call me back');
        await finish(key, [id]);
        await eventually(
          async () => receiver.received.length,
          (n) => n >= 1,
        );
        const payload = JSON.parse(receiver.received[0]?.body ?? '{}');
        assert.equal(payload.cargo_id, id);
        assert.equal(payload.success, true);
        assert.deepEqual(payload.metadata, { order: 'W-1' });
        assert.deepEqual(payload.response, returned(request.custom_id).message);
        assert.deepEqual(payload.response, (await result(key, id)).response);
      } finally {
        await receiver.close();
      }
    });

    test('object delivery writes the real provider result, its response as returned', async () => {
      const { key, projectId } = await createProjectWithKey(h.db.database);
      const bucket = await rig.bucket();
      const connection = await rig.roleConnection(h.db.database, projectId);
      const before = creates().length;
      const id = await load(key, {
        params: { model: SONNET, max_tokens: 30, messages: [{ role: 'user', content: 'write me down' }] },
        callback: { type: 'object_store', connection_id: connection.id, bucket_arn: `arn:aws:s3:::${bucket}` },
      });
      await submit();
      const request = requestWith(createdRequests(before), 'write me down');
      await finish(key, [id]);
      await eventually(
        () => rig.s3.keys(bucket),
        (keys) => keys.length === 1,
      );
      const objectKey = (await rig.s3.keys(bucket))[0] ?? '';
      assert.ok(objectKey.endsWith(`${id}.json`), objectKey);
      const object = JSON.parse((await rig.s3.getObject(bucket, objectKey)).body.toString('utf8'));
      assert.equal(object.cargo_id, id);
      assert.equal(object.success, true);
      assert.equal(object.response_truncated, false);
      assert.deepEqual(object.response, returned(request.custom_id).message);
      assert.equal(await status(key, id), 'callback_delivered');
    });

    test('a 429 with retry-after on create: the batch waits at least retry-after, then completes', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const before = creates().length;
      emulator.faults.failNext(1, { method: 'POST', path: CREATE_PATH, status: 429, retryAfterSeconds: 30 });
      const id = await load(key, {
        params: { model: SONNET, max_tokens: 30, messages: [{ role: 'user', content: 'rate me' }] },
      });
      await submit();
      assert.deepEqual(
        creates()
          .slice(before)
          .map((c) => c.status),
        [429],
      );
      assert.notEqual(await status(key, id), 'processing');
      clock.advance(29_999);
      await (await worker()).runUntilIdle();
      assert.equal(creates().length, before + 1, 'no create before retry-after has passed');
      clock.advance(1);
      await (await worker()).runUntilIdle();
      assert.deepEqual(
        creates()
          .slice(before)
          .map((c) => c.status),
        [429, 200],
      );
      assert.equal(await status(key, id), 'processing');
      await finish(key, [id]);
      assert.equal(await status(key, id), 'completed');
      assert.equal((await result(key, id)).success, true);
    });

    test("GET /usage shows the emulator's tokens, costed at the catalog's batch prices", async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const before = creates().length;
      const ids = [
        await load(key, {
          params: { model: SONNET, max_tokens: 100, messages: [{ role: 'user', content: 'count my tokens, one' }] },
        }),
        await load(key, {
          params: {
            model: SONNET,
            max_tokens: 5,
            system: 'A longer system prompt, so the input counts differ.',
            messages: [{ role: 'user', content: 'count my tokens, two' }],
          },
        }),
      ];
      await submit();
      const requests = createdRequests(before);
      await finish(key, ids);
      const tokens = { input: 0, output: 0 };
      for (const content of ['count my tokens, one', 'count my tokens, two']) {
        const { usage } = returned(requestWith(requests, content).custom_id).message;
        tokens.input += usage.input_tokens;
        tokens.output += usage.output_tokens;
      }
      assert.ok(tokens.input > 0 && tokens.output > 0);
      const prices = catalogModel(SONNET).prices_usd_per_mtok;
      const cost = roundUsd((tokens.input * prices.batch_input + tokens.output * prices.batch_output) / 1_000_000);
      const standard = roundUsd((tokens.input * prices.input + tokens.output * prices.output) / 1_000_000);
      const day = new Date(clock.now()).toISOString().slice(0, 10);
      const res = await h.app.request('GET', `/usage?from=${day}&to=${day}`, { key });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.data.length, 1, res.text);
      const [row] = res.body.data;
      assert.equal(row.date, day);
      assert.equal(row.model, SONNET);
      assert.equal(row.cargo, 2);
      assert.equal(row.requests, 2);
      assert.equal(row.input_tokens, tokens.input);
      assert.equal(row.output_tokens, tokens.output);
      assert.equal(row.cost_usd, cost);
      assert.equal(row.standard_cost_usd, standard);
      assert.equal(res.body.totals.cost_usd, cost);
      assert.equal(res.body.totals.input_tokens, tokens.input);
      assert.equal(res.body.totals.output_tokens, tokens.output);
    });

    // Last: it moves the suite's clock by a day.
    test('a batch past its 24 h deadline is canceled at the provider and its cargo fail as expired', async () => {
      const { key } = await createProjectWithKey(h.db.database);
      const before = creates().length;
      const id = await load(key, {
        params: { model: SONNET, max_tokens: 30, messages: [{ role: 'user', content: 'slow one' }] },
      });
      await submit();
      assert.equal(await status(key, id), 'processing');
      const request = requestWith(createdRequests(before), 'slow one');
      const batch = emulator.batches().find((b) => b.requests.some((r) => r.custom_id === request.custom_id));
      assert.ok(batch);
      clock.advance(23 * HOUR);
      await (await worker()).runUntilIdle();
      assert.equal(batch.status, 'in_progress');
      assert.equal(await status(key, id), 'processing');
      clock.advance(HOUR);
      await (await worker()).runUntilIdle();
      assert.equal(batch.status, 'canceling', 'barge asked the provider to cancel');
      assert.ok(emulator.log.some((r) => r.method === 'POST' && r.path === `/v1/messages/batches/${batch.id}/cancel`));
      assert.equal(await status(key, id), 'processing', 'still waiting for the canceling batch to end');
      emulator.end(batch.id);
      assert.equal(returned(request.custom_id).type, 'canceled');
      await finish(key, [id]);
      assert.equal(await status(key, id), 'failed');
      const body = await result(key, id);
      assert.equal(body.success, false);
      assert.equal(body.response, null);
      // Canceled because its window closed, the request counts as expired (as for svc-mock).
      assert.equal(body.error_message, WINDOW_CLOSED_ERROR);
    });
  });
}

/**
 * A `barge serve` child is SIGKILLed while its create call is open at the provider (the emulator has
 * made the batch but withholds the answer); a new child on the same database must find that batch
 * (Anthropic has no idempotency key: by size and creation time), adopt it rather than create a
 * second one, and give every cargo its result. Needs a database another process can open.
 */
for (const backend of await backends({ childProcesses: true })) {
  describe(`barge serve killed during an Anthropic create, on ${backend.name}`, () => {
    const h = serveHarness(backend);
    let emulator: AnthropicEmulator;
    before(async () => {
      emulator = await startAnthropicEmulator();
    });
    after(() => emulator.close());

    test('the restarted process adopts the batch the lost create made; exactly one batch runs, every cargo gets its result', async () => {
      const env = {
        ANTHROPIC_API_KEY: emulator.apiKey,
        ANTHROPIC_BASE_URL: emulator.url,
        BARGE_LEASE_MS: '2000',
        ...oneBatchOf(3),
      };
      const held = emulator.holdNextCreate('on-arrival');
      const first = await h.serveAll(env);
      const { key } = await createProjectWithKey(h.db.database);
      const contents = ['crash 0', 'crash 1', 'crash 2'];
      const ids = await Promise.all(
        contents.map((content) =>
          loadOverHttp(first.url, key, {
            params: { model: SONNET, max_tokens: 20, messages: [{ role: 'user', content }] },
          }),
        ),
      );
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        held.arrived,
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('the create call never arrived')), 15_000);
        }),
      ]);
      clearTimeout(timer);
      // The provider accepted the create: the batch exists while its answer is withheld.
      const ours = () =>
        emulator
          .batches()
          .filter((b) => b.requests.some((r) => contents.includes(String((r.params.messages as any)?.[0]?.content))));
      const [lost] = ours();
      assert.ok(lost);
      assert.equal(lost.requests.length, 3, 'the three cargo went in one batch');
      assert.equal(lost.status, 'in_progress');

      await first.child.stop('SIGKILL');
      held.release();
      const second = await h.serveAll(env);

      const recorded = await waitFor(
        'a job recorded for the batch',
        () =>
          h.db.database.write
            .selectFrom('batches')
            .select(['id', 'job_id', 'status'])
            .where('provider', '=', 'anthropic')
            .where('job_id', 'is not', null)
            .execute(),
        (rows) => rows.length > 0,
        { timeoutMs: 20_000 },
      );
      assert.equal(recorded.length, 1);
      assert.equal(recorded[0]?.job_id, lost.id, 'the batch the lost create made was adopted');
      emulator.end(lost.id);

      const tracking = async (id: string) => {
        const res = await fetch(`${second.url}/cargo/${id}/tracking`, { headers: { 'x-api-key': key } });
        return ((await res.json()) as { status: CargoStatus }).status;
      };
      await waitFor(
        'every cargo finished',
        () => Promise.all(ids.map(tracking)),
        (statuses) => statuses.every((s) => hasResult(s)),
        { timeoutMs: 20_000, intervalMs: 100 },
      );

      const batches = ours();
      const ran = batches.filter((b) => b.status === 'ended' && b.cancelInitiatedAt === null);
      assert.equal(ran.length, 1, 'exactly one batch ran to completion');
      for (const other of batches) if (other !== ran[0]) assert.notEqual(other.cancelInitiatedAt, null);
      for (const [i, id] of ids.entries()) {
        const res = await fetch(`${second.url}/cargo/${id}/result`, { headers: { 'x-api-key': key } });
        assert.equal(res.status, 200);
        const body = (await res.json()) as { success: boolean; response: unknown };
        assert.equal(body.success, true);
        const line = ran[0]?.results?.find(
          (r) =>
            r.custom_id ===
            ran[0]?.requests.find((q) => (q.params.messages as any)[0].content === contents[i])?.custom_id,
        );
        assert.ok(line);
        assert.deepEqual(body.response, line.result.message);
      }
    });
  });
}
