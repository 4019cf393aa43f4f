/** The submitter's promises through the pipeline: persisted steps, lost creates found, one policy for provider errors. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ManualClock } from '../../src/domain/clock.js';
import { REFUSALS_BEFORE_FAILING } from '../../src/pipeline/provider-errors.js';
import { MockProvider } from '../../src/providers/mock/mock-provider.js';
import {
  type FoundJob,
  type JobRef,
  ProviderError,
  type SubmissionLookup,
  type SubmitInput,
  type SubmitStep,
} from '../../src/providers/provider.js';
import { createProjectWithKey, mockBody } from '../helpers/app.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

/**
 * svc-mock with a scripted submit: it keeps the jobs it created (as a provider would), can lose
 * the answer of a create it accepted, refuse, or take two steps; status and results stay svc-mock's.
 */
class ScriptedProvider extends MockProvider {
  readonly created: { jobId: string; batchId: string; state: string | null }[] = [];
  readonly canceled: string[] = [];
  readonly lookups: SubmissionLookup[] = [];
  readonly states: (string | null)[] = [];
  /** What each submit call does, in order; past the end, it succeeds. */
  script: ('lose-answer' | 'progress' | ProviderError)[] = [];
  /** What findSubmitted shows besides the jobs this provider created for the batch. */
  strangers: FoundJob[] = [];
  match: FoundJob['match'] = 'exact';

  override async submit(input: SubmitInput): Promise<SubmitStep> {
    this.states.push(input.state);
    const next = this.script.shift();
    if (next instanceof ProviderError) throw next;
    if (next === 'progress') return { kind: 'progress', state: `{"step":${this.states.length}}` };
    const step = await super.submit(input);
    if (step.kind !== 'submitted') throw new Error('svc-mock submits in one step');
    this.created.push({ jobId: step.jobId, batchId: input.batchId, state: step.state });
    if (next === 'lose-answer') throw new Error('socket hang up');
    return step;
  }

  override async findSubmitted(lookup: SubmissionLookup): Promise<FoundJob[]> {
    this.lookups.push(lookup);
    const mine = this.created
      .filter((job) => job.batchId === lookup.batchId)
      .map((job) => ({ jobId: job.jobId, state: job.state, match: this.match }));
    return [...mine, ...this.strangers];
  }

  override async cancel(job: JobRef): Promise<void> {
    this.canceled.push(job.jobId);
  }
}

for (const backend of await backends()) {
  describe(`submitting batches on ${backend.name}`, () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 26, 12));
    const h = harness(backend, { clock });

    const start = async (provider: ScriptedProvider) => {
      const { worker } = await h.worker({ providers: [provider] });
      const { key } = await createProjectWithKey(h.db.database);
      const res = await h.app.request('POST', '/cargo/load', { key, body: mockBody('to the provider') });
      assert.equal(res.status, 200, res.text);
      const cargoId = res.body.cargo_id as string;
      const batch = async () => {
        const cargo = await h.db.database.read
          .selectFrom('cargo')
          .select('batch_id')
          .where('id', '=', cargoId)
          .executeTakeFirstOrThrow();
        return h.db.database.read
          .selectFrom('batches')
          .selectAll()
          .where('id', '=', cargo.batch_id as string)
          .executeTakeFirstOrThrow();
      };
      const result = async () => (await h.app.request('GET', `/cargo/${cargoId}/result`, { key })).body;
      return { worker, batch, result };
    };
    const provider = () => new ScriptedProvider(clock, { latencyMs: 1000 });

    test('a create whose answer was lost is found and adopted, never made twice', async () => {
      const p = provider();
      p.script = ['lose-answer'];
      const { worker, batch, result } = await start(p);
      clock.advance(500);
      await worker.runUntilIdle();
      const lost = await batch();
      assert.equal(lost.status, 'submitting');
      assert.equal(lost.submit_started_at, clock.now(), 'the intent was recorded before the call');
      assert.equal(p.created.length, 1);

      clock.advance(60_000);
      await worker.runUntilIdle();
      assert.equal(p.created.length, 1, 'no second job');
      assert.equal(p.lookups[0]?.startedAt, lost.submit_started_at);
      const adopted = await batch();
      assert.equal(adopted.job_id, p.created[0]?.jobId);
      clock.advance(1000);
      await worker.runUntilIdle();
      assert.equal((await result()).success, true);
    });

    test('one candidate is adopted; candidates that cannot be told apart are canceled and the batch sent afresh', async () => {
      const single = provider();
      single.script = ['lose-answer'];
      single.match = 'candidate';
      const first = await start(single);
      clock.advance(500);
      await first.worker.runUntilIdle();
      clock.advance(60_000);
      await first.worker.runUntilIdle();
      assert.equal((await first.batch()).job_id, single.created[0]?.jobId);
      assert.deepEqual(single.canceled, []);

      const two = provider();
      two.script = ['lose-answer'];
      two.match = 'candidate';
      two.strangers = [{ jobId: 'job_of_a_stranger', state: null, match: 'candidate' }];
      const second = await start(two);
      clock.advance(500);
      await second.worker.runUntilIdle();
      clock.advance(60_000);
      await second.worker.runUntilIdle();
      assert.deepEqual(two.canceled.sort(), [two.created[0]?.jobId, 'job_of_a_stranger'].sort());
      assert.equal(two.created.length, 2);
      assert.equal((await second.batch()).job_id, two.created[1]?.jobId, 'the fresh job is the batch’s');
    });

    test('a step short of the job is persisted and handed to the next step', async () => {
      const p = provider();
      p.script = ['progress', new ProviderError('retryable', 'api_error: overloaded')];
      const { worker, batch } = await start(p);
      clock.advance(500);
      await worker.runUntilIdle();
      assert.equal((await batch()).provider_state, '{"step":1}');
      clock.advance(60_000);
      await worker.runUntilIdle();
      assert.deepEqual(p.states, [null, '{"step":1}', '{"step":1}'], 'the retry resumes from the saved step');
      assert.notEqual((await batch()).job_id, null);
    });

    test('a rate-limited submit waits what the provider asked', async () => {
      const p = provider();
      p.script = [new ProviderError('rate_limited', 'rate_limit_error: slow down', 42_000)];
      const { worker, batch } = await start(p);
      clock.advance(500);
      await worker.runUntilIdle();
      const waiting = await batch();
      assert.equal(waiting.next_check_at, clock.now() + 42_000);
      assert.equal(waiting.last_error, 'rate_limit_error: slow down');
      clock.advance(41_000);
      await worker.runUntilIdle();
      assert.equal(p.states.length, 1, 'not before its time');
      clock.advance(1_000);
      await worker.runUntilIdle();
      assert.notEqual((await batch()).job_id, null);
    });

    test('a batch the provider refuses fails its cargo after a bounded number of tries, with the provider text', async () => {
      const p = provider();
      p.script = Array.from(
        { length: REFUSALS_BEFORE_FAILING },
        () => new ProviderError('rejected', 'invalid_request_error: requests.0.params.model: unknown model'),
      );
      const { worker, batch, result } = await start(p);
      clock.advance(500);
      for (let i = 0; i < REFUSALS_BEFORE_FAILING; i++) {
        await worker.runUntilIdle();
        clock.advance(600_000);
      }
      await worker.runUntilIdle();
      assert.equal(p.states.length, REFUSALS_BEFORE_FAILING);
      const ended = await batch();
      assert.equal(ended.status, 'ended');
      assert.equal(ended.end_reason, 'failed');
      const body = await result();
      assert.equal(body.success, false);
      assert.equal(
        body.error_message,
        'errored: the provider refused the batch: invalid_request_error: requests.0.params.model: unknown model',
      );
    });
  });
}
