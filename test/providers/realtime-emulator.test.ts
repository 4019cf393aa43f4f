/**
 * The real-time endpoint emulator against the official `openai` SDK: what the SDK sends and reads
 * is what a vLLM or Ollama server answers, so the emulator is a fair stand-in for one in the
 * provider's tests.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import OpenAI, { APIError } from 'openai';
import { type RealtimeEmulator, startRealtimeEmulator } from '../helpers/realtime-emulator.js';

describe('the real-time endpoint emulator, through the official openai SDK', () => {
  let emu: RealtimeEmulator;
  let client: OpenAI;
  before(async () => {
    emu = await startRealtimeEmulator({ apiKey: 'sk-local-emulator', models: ['llama-test'] });
    client = new OpenAI({ apiKey: 'sk-local-emulator', baseURL: emu.baseURL, maxRetries: 0 });
  });
  after(() => emu.close());

  test('answers a chat completion and lists its models', async () => {
    const completion = await client.chat.completions.create({
      model: 'llama-test',
      messages: [{ role: 'user', content: 'hello' }],
      max_tokens: 5,
    });
    assert.equal(completion.choices[0]?.message.content, 'echo: hello');
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
    assert.ok((completion.usage?.prompt_tokens ?? 0) > 0);
    const models = await client.models.list();
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['llama-test'],
    );
  });

  test('a wrong key is 401; an unknown model 404', async () => {
    const wrong = new OpenAI({ apiKey: 'sk-wrong-key', baseURL: emu.baseURL, maxRetries: 0 });
    await assert.rejects(wrong.models.list(), (err: unknown) => err instanceof APIError && err.status === 401);
    await assert.rejects(
      client.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
      (err: unknown) => err instanceof APIError && err.status === 404,
    );
  });

  test('scripted 429 with Retry-After, then 500, then an answer', async () => {
    emu.script('flaky', [{ status: 429, retryAfterS: 3, openaiShape: true }, { status: 500 }]);
    const ask = () =>
      client.chat.completions.create({ model: 'llama-test', messages: [{ role: 'user', content: 'flaky' }] });
    await assert.rejects(ask(), (err: unknown) => {
      assert.ok(err instanceof APIError);
      assert.equal(err.status, 429);
      assert.equal(err.headers?.get('retry-after'), '3');
      return true;
    });
    await assert.rejects(ask(), (err: unknown) => err instanceof APIError && err.status === 500);
    assert.equal((await ask()).choices[0]?.message.content, 'echo: flaky');
    assert.equal(emu.tries('flaky'), 3);
  });

  test('the meter sees the most requests in flight at once; a slow answer times a client out', async () => {
    emu.setLatency(150);
    emu.resetMeter();
    try {
      await Promise.all(
        ['a', 'b', 'c', 'd'].map((t) =>
          client.chat.completions.create({ model: 'llama-test', messages: [{ role: 'user', content: t }] }),
        ),
      );
      assert.equal(emu.maxInFlight, 4);
      await assert.rejects(
        client.chat.completions.create(
          { model: 'llama-test', messages: [{ role: 'user', content: 'slow' }] },
          { timeout: 50 },
        ),
        (err: unknown) => err instanceof Error && /timed out/i.test(err.message),
      );
    } finally {
      emu.setLatency(0);
    }
  });
});
