/**
 * BARGE_MODELS_FILE as the built `barge serve` reads it: a good file replaces the shipped catalog
 * (GET /models shows its models), a bad one stops the process before it listens, with a message
 * that names the file and the entry at fault.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createProjectWithKey } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { serveHarness } from '../helpers/harness.js';
import { freePort } from '../helpers/wait.js';

for (const backend of await backends({ childProcesses: true })) {
  describe(`barge serve with BARGE_MODELS_FILE on ${backend.name}`, () => {
    const h = serveHarness(backend);
    const dir = mkdtempSync(join(tmpdir(), 'barge-serve-models-'));
    after(() => rmSync(dir, { recursive: true, force: true }));
    const file = (name: string, models: unknown[]) => {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify({ models }));
      return path;
    };

    test('without it, the shipped catalog is found by the built command', async () => {
      const { child, url } = await h.serveAll({ ANTHROPIC_API_KEY: 'sk-ant-test-0000000000' });
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const res = await fetch(`${url}/models`, { headers: { 'x-api-key': key } });
        assert.equal(res.status, 200);
        const ids = ((await res.json()) as { data: { id: string }[] }).data.map((m) => m.id);
        assert.ok(ids.includes('svc-mock') && ids.includes('claude-sonnet-4-5'), ids.join(', '));
      } finally {
        await child.stop('SIGTERM');
      }
    });

    test('a good file replaces the catalog: GET /models lists its models, and only the enabled ones', async () => {
      const path = file('good.json', [
        { id: 'house-model', routes: [{ provider: 'openai', model: 'gpt-4o-mini' }], max_output_tokens: 2000 },
        { id: 'house-claude', routes: [{ provider: 'anthropic', model: 'claude-haiku-4-5-20251001' }] },
      ]);
      const { child, url } = await h.serveAll({ BARGE_MODELS_FILE: path, OPENAI_API_KEY: 'sk-test-0000000000' });
      try {
        const { key } = await createProjectWithKey(h.db.database);
        const res = await fetch(`${url}/models`, { headers: { 'x-api-key': key } });
        assert.equal(res.status, 200);
        const data = ((await res.json()) as { data: { id: string; provider: string }[] }).data;
        assert.deepEqual(
          data.map((m) => `${m.id}:${m.provider}`),
          ['svc-mock:mock', 'house-model:openai'],
        );
      } finally {
        await child.stop('SIGTERM');
      }
    });

    test('a bad file stops barge serve with a message naming the file and the entry', async () => {
      const path = file('bad.json', [
        { id: 'fine', routes: [{ provider: 'openai', model: 'gpt-4o' }] },
        { id: 'gpt-4o', routes: [{ provider: 'azure', model: 'gpt-4o' }] },
      ]);
      const child = h.spawn(['serve', '--role', 'all'], {
        BARGE_DATABASE_URL: h.db.url,
        BARGE_LOG_LEVEL: 'warn',
        BARGE_MODELS_FILE: path,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
      });
      const exit = await Promise.race([
        child.exited,
        new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000)),
      ]);
      assert.notEqual(exit, 'running', 'barge serve should stop');
      assert.equal(exit === 'running' ? null : exit.code, 1, child.stderr);
      assert.ok(
        child.stderr.includes(`BARGE_MODELS_FILE ${path}: models[1] ("gpt-4o"): routes[0].provider must be one of`),
        child.stderr,
      );
      assert.ok(!child.lines.some((line) => line.includes('listening on')), 'it never listened');
    });
  });
}
