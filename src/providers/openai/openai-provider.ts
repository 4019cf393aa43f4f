/**
 * The OpenAI Batch adapter (spec/providers.md §3): uploads a JSONL input file, creates a batch over
 * `/v1/chat/completions` tagged with barge's batch id, polls it, and streams the output and error
 * files back as results. Translations live in translate-request.ts and translate-response.ts, line
 * reading in result-lines.ts; docs/providers.md ("OpenAI Batch") describes the whole.
 */
import OpenAI, { APIError, toStreamingFile } from 'openai';
import type { Batch } from 'openai/resources/batches';
import { type Clock, DAY_MS } from '../../domain/clock.js';
import { linesOf } from '../jsonl-lines.js';
import {
  CHECK_TIMEOUT_MS,
  checkCapability,
  type FoundJob,
  type JobRef,
  type JobStatus,
  justCreated,
  type Provider,
  type ProviderCapability,
  type ProviderLimits,
  providerCall,
  providerStream,
  type RequestResult,
  SDK_TIMEOUT_MS,
  type SubmissionLookup,
  type SubmitInput,
  type SubmitStep,
  uploadFrom,
} from '../provider.js';
import { inputFileChunks } from './input-file.js';
import { jobStateText, parseJobState } from './job-state.js';
import { type ErrorContext, providerErrorOf } from './provider-errors.js';
import { resultOfLine } from './result-lines.js';
import { CHAT_COMPLETIONS } from './translate-request.js';

/** "The Batch API only supports .jsonl files up to 200 MB" (providers.md §3.1). */
const OPENAI_MAX_FILE_BYTES = 200 * 1024 * 1024;
const MAX_REQUESTS = 50_000;
/**
 * The batcher packs by the stored request bytes; the input line adds its envelope (custom_id,
 * method, url, model) and the renamed fields, well under this many bytes per request. Packing to
 * the file limit less that much for a full batch keeps every file under the limit.
 */
const LINE_ENVELOPE_BYTES = 256;

const OPENAI_LIMITS: ProviderLimits = {
  maxRequests: MAX_REQUESTS,
  maxBytes: OPENAI_MAX_FILE_BYTES - MAX_REQUESTS * LINE_ENVELOPE_BYTES,
  minRequests: 1,
  completionWindowMs: DAY_MS,
  // A batch takes minutes to hours, so a minute spent filling a group is cheap, and fewer, fuller
  // batches spare OpenAI's batch-creation limit (2,000 per hour) and the per-batch upload.
  defaultMaxWaitMs: 60_000,
};

/** Uploaded input files expire after this long even if barge never deletes them (a crash between
 * upload and create); a batch reads its input while validating, long before. */
const INPUT_FILE_TTL_S = 7 * 24 * 3600;
/** findSubmitted looks this far before the submission's start: clocks at OpenAI and here differ. */
const CLOCK_SLACK_MS = 60_000;
/** findSubmitted reads at most this many pages of 100 batches (OpenAI creates ≤ 2,000 per hour). */
const MAX_LIST_PAGES = 20;

const ENDED = new Set(['completed', 'expired', 'cancelled']);
/** Nothing left to cancel. */
const STOPPED = new Set(['cancelling', 'failed', ...ENDED]);

export interface OpenAIProviderOptions {
  /** OPENAI_API_KEY. */
  apiKey: string;
  /** OPENAI_BASE_URL, with `/v1` (default https://api.openai.com/v1). */
  baseUrl: string;
  clock: Clock;
  limits?: Partial<ProviderLimits>;
}

export class OpenAIProvider implements Provider {
  readonly name = 'openai';
  readonly limits: ProviderLimits;
  private readonly client: OpenAI;

  constructor(private readonly options: OpenAIProviderOptions) {
    this.limits = { ...OPENAI_LIMITS, ...options.limits };
    // The pipeline owns retries (with its own backoff and persisted attempt counts); an SDK retry
    // of a create would also risk a second batch.
    this.client = new OpenAI({
      apiKey: options.apiKey,
      baseURL: options.baseUrl,
      maxRetries: 0,
      timeout: SDK_TIMEOUT_MS,
    });
  }

  /**
   * Two steps, each persisted before the next: upload the input file (state: its id), then create
   * the batch from it. A retried create reuses the uploaded file.
   */
  async submit(input: SubmitInput): Promise<SubmitStep> {
    const uploaded = parseJobState(input.state);
    if (!uploaded) {
      const inputFileId = await this.upload(input);
      return { kind: 'progress', state: jobStateText({ inputFileId }) };
    }
    const batch = await this.call(() =>
      this.client.batches.create(
        {
          input_file_id: uploaded.inputFileId,
          endpoint: CHAT_COMPLETIONS,
          completion_window: '24h',
          metadata: { barge_batch_id: input.batchId },
        },
        { signal: input.signal },
      ),
    );
    return { kind: 'submitted', jobId: batch.id, state: jobStateText(uploaded) };
  }

  /** Streams the JSONL as it is produced (the SDK's toStreamingFile: a chunked multipart body). */
  private async upload(input: SubmitInput): Promise<string> {
    const file = await uploadFrom(
      inputFileChunks(input.model, input.requests, OPENAI_MAX_FILE_BYTES),
      (body) =>
        this.client.files.create(
          {
            file: toStreamingFile(body, `barge-${input.batchId}.jsonl`, { type: 'application/jsonl' }),
            purpose: 'batch',
            expires_after: { anchor: 'created_at', seconds: INPUT_FILE_TTL_S },
          },
          { signal: input.signal },
        ),
      (err) => providerErrorOf(err, this.errorContext()),
    );
    return file.id;
  }

  /**
   * Batches tagged with this batch id (`metadata.barge_batch_id`, set by create) created since the
   * submission started, less a minute of clock slack; newest first, so the walk stops at the first
   * older one. Every tagged batch is returned, however late it was created: a create call that
   * stalled past the lease still made a job that someone must adopt or cancel.
   */
  async findSubmitted(lookup: SubmissionLookup, signal?: AbortSignal): Promise<FoundJob[]> {
    const since = lookup.startedAt - CLOCK_SLACK_MS;
    const found: FoundJob[] = [];
    let page = await this.call(() => this.client.batches.list({ limit: 100 }, { signal }));
    for (let pages = 1; ; pages++) {
      let older = false;
      for (const batch of page.data) {
        if (batch.created_at * 1000 < since) {
          older = true;
          break;
        }
        if (batch.metadata?.barge_batch_id === lookup.batchId) {
          found.push({ jobId: batch.id, state: jobStateText({ inputFileId: batch.input_file_id }), match: 'exact' });
        }
      }
      if (older || pages >= MAX_LIST_PAGES || !page.hasNextPage()) return found;
      const current = page;
      page = await this.call(() => current.getNextPage());
    }
  }

  async status(job: JobRef, signal?: AbortSignal): Promise<JobStatus> {
    const batch = await this.retrieve(job, signal);
    if (batch.status === 'failed') return { state: 'failed', message: failureMessage(batch) };
    if (ENDED.has(batch.status)) return { state: 'ended' };
    // validating, in_progress, finalizing, cancelling, and any status OpenAI adds later: the
    // completion deadline still bounds how long barge waits. `expires_at` is that deadline, not
    // an estimate of the end: reporting it would make the poller wait a day. Null lets the poller
    // back off with the job's age.
    return { state: 'running', expectedEndAt: null };
  }

  /**
   * The output file (successes; absent when every request failed) and the error file (failures,
   * and on an expired or cancelled batch the requests that never ran), each streamed line by line.
   * A request in neither file yields nothing; the pipeline fails it as missing.
   */
  async *results(job: JobRef, signal?: AbortSignal): AsyncIterable<RequestResult> {
    const batch = await this.retrieve(job, signal);
    for (const fileId of [batch.output_file_id, batch.error_file_id]) {
      // A clean batch has been seen with `error_file_id: ""` (field-notes.md §3.2).
      if (!fileId) continue;
      const response = await this.call(() => this.client.files.content(fileId, { signal }));
      if (!response.body) continue;
      // A consumer that stops early stops the download too (providerStream, linesOf).
      const lines = linesOf(response.body as ReadableStream<Uint8Array>);
      for await (const line of providerStream(lines, (err) => providerErrorOf(err, this.errorContext()))) {
        const result = resultOfLine(line);
        if (result) yield result;
      }
    }
  }

  /** Asks OpenAI to cancel; a batch already ended or cancelling is not an error. */
  async cancel(job: JobRef, signal?: AbortSignal): Promise<void> {
    try {
      await this.client.batches.cancel(job.jobId, { signal });
    } catch (err) {
      const refused = err instanceof APIError && (err.status === 400 || err.status === 409);
      if (!refused) throw providerErrorOf(err, this.errorContext());
      // OpenAI refuses to cancel a batch that is past cancelling; check that this is why.
      const batch = await this.retrieve(job, signal);
      if (!STOPPED.has(batch.status)) throw providerErrorOf(err, this.errorContext());
    }
  }

  /** Deletes the uploaded input file; one already gone (404) is fine. */
  async cleanup(job: JobRef, signal?: AbortSignal): Promise<void> {
    const state = parseJobState(job.state);
    if (!state) return;
    try {
      await this.client.files.delete(state.inputFileId, { signal });
    } catch (err) {
      if (err instanceof APIError && err.status === 404) return;
      throw providerErrorOf(err, this.errorContext());
    }
  }

  /**
   * The two reads behind what the adapter does: list batches (create, poll, cancel) and list batch
   * files (it uploads the input and downloads the results). A key restricted to some endpoints can
   * pass one and fail the other, so each is its own capability. Both are lists of one: nothing is
   * created, nothing billed.
   */
  async check(): Promise<ProviderCapability[]> {
    const toError = (err: unknown) => providerErrorOf(err, this.errorContext());
    const options = { timeout: CHECK_TIMEOUT_MS };
    return Promise.all([
      checkCapability(
        'list batches',
        async () => {
          const page = await this.client.batches.list({ limit: 1 }, options);
          return `listed batches (${page.data.length} seen)`;
        },
        toError,
      ),
      checkCapability(
        'list files',
        async () => {
          const page = await this.client.files.list({ purpose: 'batch', limit: 1 }, options);
          return `listed files of purpose batch (${page.data.length} seen)`;
        },
        toError,
      ),
    ]);
  }

  private retrieve(job: JobRef, signal?: AbortSignal): Promise<Batch> {
    return providerCall(
      () => this.client.batches.retrieve(job.jobId, { signal }),
      (err) =>
        providerErrorOf(err, { ...this.errorContext(), jobJustCreated: justCreated(job, this.options.clock.now()) }),
    );
  }

  private call<T>(call: () => Promise<T>): Promise<T> {
    return providerCall(call, (err) => providerErrorOf(err, this.errorContext()));
  }

  private errorContext(): ErrorContext {
    return { now: this.options.clock.now(), apiKey: this.options.apiKey };
  }
}

/** `code: message` for each of the batch's errors (e.g. `token_limit_exceeded: Enqueued token limit reached …`). */
function failureMessage(batch: Batch): string {
  const errors = batch.errors?.data ?? [];
  if (errors.length === 0) return 'failed: OpenAI failed the batch without saying why';
  const shown = errors.slice(0, 5).map((e) => {
    const where = e.line == null ? '' : ` (line ${e.line})`;
    return `${e.code ?? 'error'}: ${e.message ?? 'no message given'}${where}`;
  });
  const more = errors.length > shown.length ? `; and ${errors.length - shown.length} more` : '';
  return `${shown.join('; ')}${more}`;
}
