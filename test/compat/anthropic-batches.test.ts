/**
 * barge's Message Batches endpoints driven by the official `@anthropic-ai/sdk`, unchanged but for
 * its base URL and key, on every backend: the whole cycle (create, poll, list, results, cancel,
 * delete) over one batch that mixes svc-mock, an Anthropic model (the Anthropic emulator) and an
 * OpenAI model (the OpenAI emulator); then the errors, in Anthropic's shape and status codes.
 * The workers run step by step on a ManualClock the emulators share.
 */
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { describe, test } from 'node:test';
import Anthropic from '@anthropic-ai/sdk';
import { setProjectModels } from '../../src/operations/set-project-models.js';
import { setSpendBudget } from '../../src/operations/set-spend-budget.js';
import type { Service } from '../../src/service.js';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { compatSuite } from '../helpers/compat.js';

const user = (content: string) => [{ role: 'user' as const, content }];

for (const backend of await backends()) {
  describe(`Message Batches through @anthropic-ai/sdk on ${backend.name}`, () => {
    const { clock, h, anthropic, openai } = compatSuite(backend);

    const client = (key: string) => new Anthropic({ apiKey: key, baseURL: h.app.url, maxRetries: 0 });
    /** Runs the workers a minute of the clock at a time until the batch has ended. */
    const untilEnded = async (worker: Service, sdk: Anthropic, id: string) => {
      for (let i = 0; i < 30; i++) {
        const batch = await sdk.messages.batches.retrieve(id);
        if (batch.processing_status === 'ended') return batch;
        clock.advance(60_000);
        await worker.runUntilIdle();
      }
      assert.fail(`batch ${id} did not end`);
    };

    test('the whole cycle across svc-mock, Anthropic and OpenAI models: create, poll, list, results in order, GET /cargo, delete', async () => {
      const { worker } = await h.worker({ latencyMs: 0, settings: { batchMaxWaitMs: 0 } });
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      const requests = [
        { custom_id: 'mock-1', params: { model: 'svc-mock', max_tokens: 50, messages: user('Hello from the river') } },
        {
          custom_id: 'claude-2',
          params: { model: 'claude-sonnet-4-5', max_tokens: 40, messages: user('Name a barge.') },
        },
        { custom_id: 'gpt-3', params: { model: 'gpt-4o-mini', max_tokens: 30, messages: user('Name a lock.') } },
        { custom_id: 'mock-fail-4', params: { model: 'svc-mock', messages: user('please svc-mock:fail now') } },
      ];
      const created = await sdk.messages.batches.create({ requests } as never);
      assert.match(created.id, /^msgbatch_[0-9a-z]{26}$/);
      assert.equal(created.type, 'message_batch');
      assert.equal(created.processing_status, 'in_progress');
      assert.deepEqual(created.request_counts, { processing: 4, succeeded: 0, errored: 0, canceled: 0, expired: 0 });
      assert.equal(created.results_url, null);
      assert.equal(created.archived_at, null);
      assert.equal(Date.parse(created.expires_at) - Date.parse(created.created_at), 24 * 60 * 60 * 1000);

      const ended = await untilEnded(worker, sdk, created.id);
      assert.deepEqual(ended.request_counts, { processing: 0, succeeded: 3, errored: 1, canceled: 0, expired: 0 });
      assert.equal(ended.results_url, `${h.app.url}/v1/messages/batches/${created.id}/results`);
      assert.ok(ended.ended_at);

      const lines = [];
      for await (const line of await sdk.messages.batches.results(created.id)) lines.push(line);
      assert.deepEqual(
        lines.map((l) => l.custom_id),
        requests.map((r) => r.custom_id),
        'results in submission order',
      );
      const [mock, claude, gpt, failed] = lines;
      assert.equal(mock?.result.type, 'succeeded');
      assert.equal(mock?.result.type === 'succeeded' && mock.result.message.model, 'svc-mock');
      assert.equal(claude?.result.type === 'succeeded' && claude.result.message.model, 'claude-sonnet-4-5-20250929');
      assert.equal(gpt?.result.type === 'succeeded' && gpt.result.message.model, 'gpt-4o-mini');
      assert.deepEqual(failed?.result.type === 'errored' && failed.result.error.error.type, 'invalid_request_error');
      assert.ok(anthropic().batches().length > 0 && openai().batches().length > 0, 'both emulators ran a job');

      // Each request is a cargo of the project, listed with exactly {batch_id, custom_id}.
      const listed = await fetch(`${h.app.url}/cargo?limit=10`, { headers: { 'x-api-key': key } }).then(
        (r) => r.json() as Promise<any>,
      );
      assert.deepEqual(
        listed.data.map((c: { metadata: unknown }) => c.metadata).reverse(),
        requests.map((r) => ({ batch_id: created.id, custom_id: r.custom_id })),
      );

      const second = await sdk.messages.batches.create({
        requests: [{ custom_id: 'only', params: { model: 'svc-mock', max_tokens: 5, messages: user('second') } }],
      });
      const seen = [];
      for await (const batch of sdk.messages.batches.list({ limit: 1 })) seen.push(batch.id);
      assert.deepEqual(seen, [second.id, created.id], 'newest first, a page of one at a time');
      const newer = await sdk.messages.batches.list({ before_id: created.id });
      assert.deepEqual(
        newer.data.map((b) => b.id),
        [second.id],
      );

      await assert.rejects(sdk.messages.batches.delete(second.id), (err: unknown) => {
        assert.ok(err instanceof Anthropic.BadRequestError);
        assert.equal((err.error as { error: { type: string } }).error.type, 'invalid_request_error');
        return true;
      });
      assert.deepEqual(await sdk.messages.batches.delete(created.id), {
        id: created.id,
        type: 'message_batch_deleted',
      });
      await assert.rejects(sdk.messages.batches.retrieve(created.id), Anthropic.NotFoundError);
      const cargo = await fetch(`${h.app.url}/cargo?limit=10`, { headers: { 'x-api-key': key } }).then(
        (r) => r.json() as Promise<any>,
      );
      assert.equal(cargo.data.length, 5, 'the cargo of a deleted batch stay');
    });

    test('cancel: pending requests are canceled at once; those with a provider finish (canceling, then ended)', async () => {
      const { worker } = await h.worker({ latencyMs: 120_000, settings: { batchMaxWaitMs: 0 } });
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      const pending = await sdk.messages.batches.create({
        requests: ['a', 'b', 'c'].map((id) => ({
          custom_id: id,
          params: { model: 'svc-mock', max_tokens: 5, messages: user(`cancel me ${id}`) },
        })),
      });
      const canceled = await sdk.messages.batches.cancel(pending.id);
      assert.equal(canceled.processing_status, 'ended', 'nothing was with a provider');
      assert.deepEqual(canceled.request_counts, { processing: 0, succeeded: 0, errored: 0, canceled: 3, expired: 0 });
      assert.ok(canceled.cancel_initiated_at);
      const lines = [];
      for await (const line of await sdk.messages.batches.results(pending.id)) lines.push(line);
      assert.deepEqual(
        lines.map((l) => [l.custom_id, l.result.type]),
        [
          ['a', 'canceled'],
          ['b', 'canceled'],
          ['c', 'canceled'],
        ],
      );

      const running = await sdk.messages.batches.create({
        requests: [{ custom_id: 'busy', params: { model: 'svc-mock', max_tokens: 5, messages: user('already sent') } }],
      });
      await worker.runUntilIdle();
      const canceling = await sdk.messages.batches.cancel(running.id);
      assert.equal(canceling.processing_status, 'canceling', 'its request is with the provider');
      clock.advance(121_000);
      await worker.runUntilIdle();
      const done = await untilEnded(worker, sdk, running.id);
      assert.deepEqual(done.request_counts, { processing: 0, succeeded: 1, errored: 0, canceled: 0, expired: 0 });
      assert.equal((await sdk.messages.batches.cancel(running.id)).processing_status, 'ended', 'an ended batch stays');
    });

    test('errors in Anthropic’s shape: a refused key, an unknown batch, an invalid request named by its index', async () => {
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const sdk = client(key);
      await assert.rejects(client(`barge_sk_${'x'.repeat(32)}`).messages.batches.list(), (err: unknown) => {
        assert.ok(err instanceof Anthropic.AuthenticationError);
        assert.deepEqual(err.error, {
          type: 'error',
          error: { type: 'authentication_error', message: 'Invalid API key.' },
        });
        return true;
      });
      const anonymous = await fetch(`${h.app.url}/v1/messages/batches`);
      assert.equal(anonymous.status, 401);
      assert.equal(((await anonymous.json()) as any).error.type, 'authentication_error');
      const viaHeader = await fetch(`${h.app.url}/v1/messages/batches`, { headers: { 'x-api-key': key } });
      assert.equal(viaHeader.status, 200, 'x-api-key works as well as Bearer');

      await assert.rejects(sdk.messages.batches.retrieve('msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c'), (err: unknown) => {
        assert.ok(err instanceof Anthropic.NotFoundError);
        assert.equal((err.error as { error: { type: string } }).error.type, 'not_found_error');
        return true;
      });
      await assert.rejects(sdk.messages.batches.retrieve('not-an-id'), Anthropic.NotFoundError);

      const invalid = {
        requests: [
          { custom_id: 'ok', params: { model: 'svc-mock', messages: user('fine') } },
          { custom_id: 'hot', params: { model: 'svc-mock', temperature: 2, messages: user('too hot') } },
        ],
      };
      await assert.rejects(sdk.messages.batches.create(invalid as never), (err: unknown) => {
        assert.ok(err instanceof Anthropic.BadRequestError);
        assert.equal(err.status, 400);
        const body = err.error as { type: string; error: { type: string; message: string } };
        assert.equal(body.type, 'error');
        assert.equal(body.error.type, 'invalid_request_error');
        assert.equal(body.error.message, 'requests.1.params.temperature: must be <= 1');
        return true;
      });
      for (const [requests, message] of [
        [
          [{ custom_id: 'x y', params: {} }],
          "requests.0.custom_id: String should match pattern '^[a-zA-Z0-9_-]{1,64}$'",
        ],
        [
          [
            { custom_id: 'same', params: { model: 'svc-mock', messages: user('a') } },
            { custom_id: 'same', params: { model: 'svc-mock', messages: user('b') } },
          ],
          'requests.1.custom_id: Duplicate custom_id "same" in the batch',
        ],
        [[], 'requests: List should have at least 1 item after validation, not 0'],
        [[{ custom_id: 'u', params: { model: 'no-such-model', messages: user('x') } }], 'requests.0.params.model:'],
        [
          [{ custom_id: 's', params: { model: 'svc-mock', stream: true, messages: user('x') } }],
          'requests.0.params.stream: is not a known field',
        ],
      ] as const) {
        await assert.rejects(sdk.messages.batches.create({ requests } as never), (err: unknown) => {
          assert.ok(err instanceof Anthropic.BadRequestError, String(err));
          assert.ok((err.error as { error: { message: string } }).error.message.startsWith(message), String(err));
          return true;
        });
      }
      const refused = await fetch(`${h.app.url}/v1/messages/batches`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: '{"requests": [{"custom_id": "a", "params": {"model": "svc-mock", "messages": [',
      });
      assert.equal(refused.status, 400);
      assert.equal(((await refused.json()) as any).error.type, 'invalid_request_error');
      const listed = await sdk.messages.batches.list();
      assert.deepEqual(listed.data, [], 'no refused batch is visible');
      const cargo = await fetch(`${h.app.url}/cargo`, { headers: { 'x-api-key': key } }).then(
        (r) => r.json() as Promise<any>,
      );
      assert.deepEqual(cargo.data, [], 'and none of their requests became a cargo');
    });

    test('the project’s model policy and spend budget hold for every request: 403 and 402 naming the index, nothing created', async () => {
      const { key, slug } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const deps = { database: h.db.database, clock };
      assert.ok((await setProjectModels(deps, { slug, allow: ['svc-mock', 'gpt-*'] })).ok);
      const sdk = client(key);
      const requests = [
        { custom_id: 'ok', params: { model: 'svc-mock', max_tokens: 10, messages: user('fine') } },
        { custom_id: 'claude', params: { model: 'claude-sonnet-4-5', max_tokens: 10, messages: user('not mine') } },
      ];
      await assert.rejects(sdk.messages.batches.create({ requests }), (err: unknown) => {
        assert.ok(err instanceof Anthropic.PermissionDeniedError, String(err));
        const body = err.error as { error: { type: string; message: string } };
        assert.equal(body.error.type, 'permission_error');
        assert.equal(
          body.error.message,
          "requests.1.params.model: This project may not use the model 'claude-sonnet-4-5'.",
        );
        return true;
      });
      assert.ok((await setSpendBudget(deps, { slug, mode: 'own', monthlyUsd: 0.001 })).ok);
      const costly = [
        { custom_id: 'a', params: { model: 'gpt-4o-mini', max_tokens: 4000, messages: user('x') } },
        { custom_id: 'b', params: { model: 'gpt-4o-mini', max_tokens: 4000, messages: user('y') } },
      ];
      await assert.rejects(sdk.messages.batches.create({ requests: costly }), (err: unknown) => {
        assert.equal((err as { status: number }).status, 402);
        assert.equal((err as { error: { error: { type: string } } }).error.error.type, 'billing_error');
        return true;
      });
      assert.deepEqual((await sdk.messages.batches.list()).data, []);
    });

    test('413 for a body declared over 256 MB, answered before it is read', async () => {
      const { key } = await createProjectWithKey(h.db.database, { now: clock.now() });
      const url = new URL('/v1/messages/batches', h.app.url);
      const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(url, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': String(300 * 1024 * 1024),
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (c: string) => {
            body += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.write('{"requests": [');
      });
      assert.equal(answer.status, 413);
      assert.equal(JSON.parse(answer.body).error.type, 'request_too_large');
    });
  });
}
