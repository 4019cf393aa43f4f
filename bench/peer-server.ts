/**
 * The peers of bench/submit.ts on PostgreSQL: the same durable submit built the usual way. A
 * Fastify route, POST /cargo/load, validates the body against barge's own schema (LoadCargoBody)
 * and hands it to a job queue, answering 200 with the job's id once the queue has it:
 *
 * - `pg-boss`: `send` inserts the job into PostgreSQL and commits before it resolves (durable, as
 *   barge's 200 is). Its own schema in the bench's database, a pool of 10 (barge's default).
 * - `bullmq`: `add` writes the job to Redis. The local Redis keeps nothing on disk, so this peer's
 *   200 is not durable at all; it is there as the fast end of "the usual way".
 *
 * Neither checks an API key, routes a model, applies a rate limit or a storage budget: they do
 * less than barge per request, which is the point of the comparison. Runs as its own process, like
 * the service, so each competes with the load generator for the CPU in the same way.
 *
 * Input: BENCH_PEER = pg-boss | bullmq; BENCH_PEER_URL = the postgres:// URL (pg-boss) or the
 * redis:// URL (bullmq). Output: one JSON line {url} on stdout once listening.
 */
import type { AddressInfo } from 'node:net';
import { Queue } from 'bullmq';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import PgBoss from 'pg-boss';
import { LoadCargoBody } from '../src/http/routes/load-cargo.js';

const QUEUE = 'cargo';
const peer = process.env.BENCH_PEER;
const url = process.env.BENCH_PEER_URL ?? '';

/** The queue's `add`: the job's id once the queue holds it. */
type Enqueue = (job: unknown) => Promise<string>;

async function openQueue(): Promise<{ enqueue: Enqueue; close: () => Promise<void> }> {
  if (peer === 'pg-boss') {
    // No maintenance or schedule timers: the bench measures the sends alone.
    const boss = new PgBoss({
      connectionString: url,
      schema: 'pgboss_bench',
      max: 10,
      supervise: false,
      schedule: false,
    });
    boss.on('error', (err) => process.stderr.write(`pg-boss: ${String(err)}\n`));
    await boss.start();
    await boss.createQueue(QUEUE);
    return {
      enqueue: async (job) => {
        const id = await boss.send(QUEUE, job as object);
        if (id === null) throw new Error('pg-boss send returned no id');
        return id;
      },
      close: () => boss.stop({ graceful: false }),
    };
  }
  if (peer === 'bullmq') {
    const connection = new Redis(url, { maxRetriesPerRequest: null });
    const queue = new Queue(QUEUE, { connection });
    await queue.obliterate({ force: true });
    return {
      enqueue: async (job) => (await queue.add(QUEUE, job)).id ?? '',
      close: async () => {
        await queue.obliterate({ force: true });
        await queue.close();
        connection.disconnect();
      },
    };
  }
  throw new Error('BENCH_PEER must be pg-boss or bullmq');
}

const queue = await openQueue();
// Ajv as barge sets it for this schema (src/http/app.ts): `callback` is a discriminated union.
const app = Fastify({
  bodyLimit: 10 * 1024 * 1024,
  ajv: { customOptions: { removeAdditional: false, coerceTypes: false, discriminator: true } },
});
app.post('/cargo/load', { schema: { body: LoadCargoBody } }, async (request) => ({
  job_id: await queue.enqueue(request.body),
}));

await app.listen({ host: '127.0.0.1', port: 0 });
const { port } = app.server.address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
process.once('SIGTERM', async () => {
  await app.close();
  await queue.close();
  process.exit(0);
});
