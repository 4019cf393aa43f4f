/**
 * The openai-compatible provider's pure parts, table-driven: the request body (the `openai`
 * translation with `max_tokens`), the endpoint's error bodies in the shapes self-hosted servers
 * use, and what an outcome becomes (retry with backoff or Retry-After, expiry at the deadline).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { REALTIME_EXPIRED_ERROR } from '../../src/domain/realtime-requests.js';
import { realtimeChatBody } from '../../src/providers/openai-compatible/chat-request.js';
import { retryDelayMs, settlementOf } from '../../src/providers/openai-compatible/runner.js';
import { errorText } from '../../src/providers/openai-compatible/send-request.js';

describe('openai-compatible translation and outcomes', () => {
  test('the body is the openai translation with the token limit as max_tokens', () => {
    const body = realtimeChatBody(
      'llama',
      JSON.stringify({
        system: 'be brief',
        max_tokens: 64,
        stop_sequences: ['END'],
        temperature: 0,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      }),
    );
    assert.deepEqual(body, {
      model: 'llama',
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
      ],
      max_tokens: 64,
      stop: ['END'],
      temperature: 0,
    });
    assert.equal('max_completion_tokens' in body, false);
  });

  test("the endpoint's error message, in each server's shape", () => {
    const cases: [number, string, string][] = [
      [
        400,
        JSON.stringify({ object: 'error', message: 'context too long', type: 'BadRequestError', code: 400 }),
        'BadRequestError: context too long',
      ],
      [
        422,
        JSON.stringify({ error: { message: 'bad field', type: 'invalid_request_error' } }),
        'invalid_request_error: bad field',
      ],
      [
        404,
        JSON.stringify({ error: 'model "x" not found, try pulling it first' }),
        'http_404: model "x" not found, try pulling it first',
      ],
      [400, JSON.stringify({ detail: 'Input validation error' }), 'http_400: Input validation error'],
      [413, 'Request Entity Too Large', 'http_413: Request Entity Too Large'],
      [400, '', 'http_400: no message given'],
    ];
    for (const [status, body, expected] of cases) assert.equal(errorText(status, body), expected, body);
  });

  test('retries back off exponentially with jitter, up to 5 minutes', () => {
    const mid = () => 0.5;
    assert.deepEqual(
      [1, 2, 3, 4, 10, 30].map((attempts) => retryDelayMs(attempts, mid)),
      [1000, 2000, 4000, 8000, 300_000, 300_000],
    );
    assert.equal(
      retryDelayMs(1, () => 0),
      750,
    );
    assert.equal(
      retryDelayMs(1, () => 1),
      1250,
    );
  });

  test('an outcome becomes an answer, a failure, a retry at Retry-After or the backoff, or expiry past the deadline', () => {
    const now = 1_000_000;
    const request = {
      batchId: 'bat_1',
      customId: 'crg_1',
      model: 'llama',
      input: '{}',
      attempts: 2,
      deadlineAt: now + 60_000,
      leasedUntil: now + 10_000,
    };
    const key = { batchId: 'bat_1', customId: 'crg_1' };
    assert.deepEqual(settlementOf(request, { kind: 'answered', response: '{"id":"x"}' }, now), {
      ...key,
      kind: 'answered',
      response: '{"id":"x"}',
    });
    assert.deepEqual(settlementOf(request, { kind: 'refused', error: 'BadRequestError: no' }, now), {
      ...key,
      kind: 'failed',
      error: 'BadRequestError: no',
    });
    assert.deepEqual(
      settlementOf(request, { kind: 'retry', error: 'rate_limit: slow down', retryAfterMs: 30_000 }, now),
      {
        ...key,
        kind: 'retry',
        at: now + 30_000,
        error: 'rate_limit: slow down',
      },
    );
    const backoff = settlementOf(request, { kind: 'retry', error: 'InternalServerError: x', retryAfterMs: null }, now);
    assert.equal(backoff.kind, 'retry');
    assert.ok(backoff.kind === 'retry' && backoff.at >= now + 1500 && backoff.at <= now + 2500);
    assert.deepEqual(settlementOf(request, { kind: 'retry', error: 'timeout: no answer', retryAfterMs: 60_000 }, now), {
      ...key,
      kind: 'expired',
      error: `${REALTIME_EXPIRED_ERROR} (the last try: timeout: no answer)`,
    });
  });
});
