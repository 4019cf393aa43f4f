/**
 * A local emulator of OpenAI's Files and Batch APIs for `/v1/chat/completions` (base URL with
 * `/v1`, as the SDK expects), for tests of barge's OpenAI adapter. Wire formats follow
 * ../shared/spec/providers.md §3, field-notes.md §3.2 and the official `openai` SDK;
 * test/providers/openai-emulator.test.ts checks it with that SDK. The Files API lives in
 * openai-emulator-files.ts, the file lines and error shapes in openai-emulator-lines.ts.
 *
 * It checks what the real API checks, when the real API checks it: `Authorization: Bearer` on
 * every call; the upload (openai-emulator-files.ts); the batch create body (`input_file_id` of a
 * batch file, `endpoint`, `completion_window: "24h"`, `metadata` ≤ 16 pairs) with a 400; the input
 * lines only while `validating` (JSON, unique `custom_id`, `method: POST`, `url` equal to the
 * endpoint, one `body.model` per file, ≤ 50,000 lines): a bad file makes the batch `failed` with
 * `errors.data[]`, never a 400.
 *
 * Batches walk `validating` → `in_progress` → `finalizing` → `completed`, or `failed`, `expired`,
 * `cancelling` → `cancelled`. Output and error files are shuffled JSONL with the traps users hit:
 * when every request failed the batch is `completed` with `output_file_id: null`; an expired or
 * cancelled batch keeps a partial output file (requests with an explicit outcome count as done;
 * the others go to the error file as `batch_expired` / `batch_cancelled`, not counted as failed).
 * Test controls: `step`/`endAll`, `stepEveryRetrieves`, a clock past `expires_at`, `expire`,
 * `failNextValidation` (e.g. `token_limit_exceeded`), per custom_id outcomes, and `faults`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  EXTRA_FIELD,
  type ProviderDialect,
  type Route,
  randomId,
  seededRandom,
  shuffled,
  startEmulatorServer,
} from './emulator-http.js';
import { FileStore } from './openai-emulator-files.js';
import {
  type BatchError,
  CHAT_COMPLETIONS,
  cursorPage,
  type InputLine,
  type OpenAIOutcome,
  openAIError,
  openAIErrorBody,
  type ResultLine,
  resultLine,
  stoppedLine,
  validateInput,
} from './openai-emulator-lines.js';

export type { BatchError, InputLine, OpenAIOutcome } from './openai-emulator-lines.js';

export interface OpenAIEmulatorOptions {
  apiKey?: string;
  /** Real limits by default; tests lower them to check the refusals cheaply. */
  maxRequests?: number;
  maxFileBytes?: number;
  /** Milliseconds since the epoch; a batch retrieved past its `expires_at` ends `expired`. */
  clock?: () => number;
  /** A batch takes one status step by itself on every Nth retrieve (0: only `step`/`endAll`). */
  stepEveryRetrieves?: number;
  /** A batch walks every status to its end on its first retrieve: a provider with no latency (the bench). */
  endOnRetrieve?: boolean;
  /** Decides a request's outcome when no `setOutcome` applies (undefined: the default). */
  outcome?: (line: InputLine) => OpenAIOutcome | undefined;
  /** Seed of the output shuffle. */
  seed?: number;
}

type Status =
  | 'validating'
  | 'failed'
  | 'in_progress'
  | 'finalizing'
  | 'completed'
  | 'expired'
  | 'cancelling'
  | 'cancelled';
const TERMINAL: readonly Status[] = ['failed', 'completed', 'expired', 'cancelled'];
type Stamp = `${Exclude<Status, 'validating'>}_at`;

interface Batch {
  id: string;
  inputFileId: string;
  metadata: Record<string, string> | null;
  status: Status;
  createdAt: number;
  stamps: Partial<Record<Stamp, number>>;
  model: string | null;
  /** Known once validated. */
  lines: InputLine[] | null;
  /** Known once processed (finalizing), or stopped early. */
  results: ResultLine[] | null;
  errors: BatchError[] | null;
  outputFileId: string | null;
  errorFileId: string | null;
  retrieves: number;
}

const DAY_S = 24 * 60 * 60;
const CREATE_FIELDS = ['input_file_id', 'endpoint', 'completion_window', 'metadata', 'output_expires_after'];

export async function startOpenAIEmulator(options: OpenAIEmulatorOptions = {}) {
  const apiKey = options.apiKey ?? 'sk-test-key';
  const maxRequests = options.maxRequests ?? 50_000;
  const maxFileBytes = options.maxFileBytes ?? 200 * 1024 * 1024;
  const clock = options.clock ?? Date.now;
  const seconds = () => Math.floor(clock() / 1000);
  const random = seededRandom(options.seed ?? 1);
  const files = new FileStore(seconds, maxFileBytes);
  const batches = new Map<string, Batch>();
  const outcomes = new Map<string, OpenAIOutcome>();
  const validationFailures: BatchError[][] = [];
  const chosenOutcome = (line: InputLine) => outcomes.get(line.custom_id) ?? options.outcome?.(line);

  const dialect: ProviderDialect = {
    errorBody: (status, message) => openAIErrorBody(status, message),
    // The multipart envelope adds a little to the file; the file itself is checked at upload.
    maxBodyBytes: maxFileBytes + 64 * 1024,
    tooLarge: () => openAIError(400, 'File is too large.', 'file'),
    responseHeaders: () => ({ 'x-request-id': randomId('req_', 32, 'hex'), 'openai-version': '2020-10-01' }),
    checkHeaders(headers: IncomingHttpHeaders) {
      const key = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
      if (!key) throw openAIError(401, "You didn't provide an API key (Authorization: Bearer YOUR_KEY).");
      if (key !== apiKey) {
        throw openAIError(
          401,
          `Incorrect API key provided: ${key.slice(0, 3)}****${key.slice(-4)}.`,
          null,
          'invalid_api_key',
        );
      }
    },
  };

  function find(id: string): Batch {
    const batch = batches.get(id);
    if (!batch) throw openAIError(404, `No batch found with id '${id}'.`, 'batch_id');
    return batch;
  }

  function view(batch: Batch) {
    const results = batch.results ?? [];
    let input = 0;
    let output = 0;
    for (const r of results) {
      input += r.usage?.prompt_tokens ?? 0;
      output += r.usage?.completion_tokens ?? 0;
    }
    const stamp = (name: Stamp) => batch.stamps[name] ?? null;
    return {
      id: batch.id,
      object: 'batch',
      endpoint: CHAT_COMPLETIONS,
      model: batch.model,
      errors: batch.errors ? { object: 'list', data: batch.errors } : null,
      input_file_id: batch.inputFileId,
      completion_window: '24h',
      status: batch.status,
      output_file_id: batch.outputFileId,
      error_file_id: batch.errorFileId,
      created_at: batch.createdAt,
      in_progress_at: stamp('in_progress_at'),
      expires_at: batch.createdAt + DAY_S,
      finalizing_at: stamp('finalizing_at'),
      completed_at: stamp('completed_at'),
      failed_at: stamp('failed_at'),
      expired_at: stamp('expired_at'),
      cancelling_at: stamp('cancelling_at'),
      cancelled_at: stamp('cancelled_at'),
      request_counts: {
        total: batch.lines?.length ?? 0,
        completed: results.filter((r) => r.kind === 'succeeded').length,
        failed: results.filter((r) => r.kind === 'failed').length,
      },
      usage: {
        input_tokens: input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: input + output,
      },
      metadata: batch.metadata,
      ...EXTRA_FIELD,
    };
  }

  function create(body: unknown): Batch {
    const given = (body ?? {}) as Record<string, unknown>;
    const unknown = Object.keys(given).find((key) => !CREATE_FIELDS.includes(key));
    if (unknown) throw openAIError(400, `Unrecognized request argument supplied: ${unknown}`);
    for (const key of ['input_file_id', 'endpoint', 'completion_window']) {
      if (typeof given[key] !== 'string') throw openAIError(400, `Missing required parameter: '${key}'.`, key);
    }
    if (given.endpoint !== CHAT_COMPLETIONS) {
      throw openAIError(
        400,
        `This emulator takes endpoint ${CHAT_COMPLETIONS} only, not ${given.endpoint}.`,
        'endpoint',
      );
    }
    if (given.completion_window !== '24h') {
      throw openAIError(
        400,
        "Invalid value for 'completion_window': expected '24h'.",
        'completion_window',
        'invalid_value',
      );
    }
    const metadata = (given.metadata ?? null) as Record<string, unknown> | null;
    const pairs = Object.entries(metadata ?? {});
    if (
      (metadata !== null && typeof metadata !== 'object') ||
      pairs.length > 16 ||
      pairs.some(([key, value]) => key.length > 64 || typeof value !== 'string' || value.length > 512)
    ) {
      throw openAIError(
        400,
        'Invalid metadata: up to 16 pairs, keys up to 64 and string values up to 512 characters.',
        'metadata',
      );
    }
    const file = files.get(given.input_file_id as string);
    if (!file || file.deleted)
      throw openAIError(400, `Invalid 'input_file_id': '${given.input_file_id}'.`, 'input_file_id');
    if (file.purpose !== 'batch') throw openAIError(400, "The input file must have purpose 'batch'.", 'input_file_id');
    const batch: Batch = {
      id: randomId('batch_', 32, 'hex'),
      inputFileId: file.id,
      metadata: metadata as Record<string, string> | null,
      status: 'validating',
      createdAt: seconds(),
      stamps: {},
      model: null,
      lines: null,
      results: null,
      errors: null,
      outputFileId: null,
      errorFileId: null,
      retrieves: 0,
    };
    batches.set(batch.id, batch);
    server.faults.batchCreated(batch.id);
    return batch;
  }

  function moveTo(batch: Batch, status: Exclude<Status, 'validating'>): void {
    batch.status = status;
    batch.stamps[`${status}_at`] = seconds();
  }

  /** One status step; `endAll` repeats it until every batch is terminal. */
  function step(batch: Batch): void {
    switch (batch.status) {
      case 'validating': {
        const injected = validationFailures.shift();
        const { lines, errors } = validateInput(files.find(batch.inputFileId).content.toString('utf8'), maxRequests);
        if (injected || errors.length > 0) {
          batch.errors = injected ?? errors;
          moveTo(batch, 'failed');
          return;
        }
        batch.lines = lines;
        batch.model = (lines[0]?.body.model as string) ?? null;
        moveTo(batch, 'in_progress');
        return;
      }
      case 'in_progress':
        batch.results = (batch.lines ?? []).map((line) =>
          resultLine(line, chosenOutcome(line) ?? { type: 'succeeded' }),
        );
        moveTo(batch, 'finalizing');
        return;
      case 'finalizing':
        writeFiles(batch);
        moveTo(batch, 'completed');
        return;
      case 'cancelling':
        stop(batch, 'cancelled');
        return;
      default:
        return;
    }
  }

  /** Ends a batch early: finished requests (explicit outcome, or all once finalizing) keep their results. */
  function stop(batch: Batch, status: 'cancelled' | 'expired'): void {
    batch.results ??= (batch.lines ?? []).map((line) => {
      const outcome = chosenOutcome(line);
      return outcome ? resultLine(line, outcome) : stoppedLine(line, status);
    });
    writeFiles(batch);
    moveTo(batch, status);
  }

  function writeFiles(batch: Batch): void {
    const results = shuffled(batch.results ?? [], random);
    const write = (kind: 'output' | 'error', lines: ResultLine[]) =>
      lines.length === 0
        ? null
        : files.store(
            `batch_${batch.id}_${kind}.jsonl`,
            'batch_output',
            Buffer.from(`${lines.map((r) => r.text).join('\n')}\n`),
          ).id;
    batch.outputFileId = write(
      'output',
      results.filter((r) => r.kind === 'succeeded'),
    );
    batch.errorFileId = write(
      'error',
      results.filter((r) => r.kind !== 'succeeded'),
    );
  }

  function retrieve(batch: Batch): void {
    batch.retrieves++;
    if (!TERMINAL.includes(batch.status) && clock() >= (batch.createdAt + DAY_S) * 1000) {
      stop(batch, 'expired');
      return;
    }
    if (options.endOnRetrieve) {
      while (!TERMINAL.includes(batch.status)) step(batch);
      return;
    }
    const every = options.stepEveryRetrieves ?? 0;
    if (every > 0 && batch.retrieves % every === 0) step(batch);
  }

  function cancel(batch: Batch): void {
    if (batch.status === 'cancelling' || batch.status === 'cancelled') return;
    if (TERMINAL.includes(batch.status)) throw openAIError(400, `Cannot cancel a batch with status '${batch.status}'.`);
    moveTo(batch, 'cancelling');
  }

  function list(query: Record<string, string>) {
    const newestFirst = [...batches.values()].reverse();
    return cursorPage(newestFirst, query, { defaultLimit: 20, maxLimit: 100 }, view);
  }

  const routes: Route[] = [
    ...files.routes(),
    { method: 'POST', path: /^\/v1\/batches$/, handle: ({ body }) => ({ json: view(create(body)) }) },
    { method: 'GET', path: /^\/v1\/batches$/, handle: ({ query }) => ({ json: list(query) }) },
    {
      method: 'GET',
      path: /^\/v1\/batches\/([^/]+)$/,
      readsBatch: ([id]) => id as string,
      handle: ({ params: [id] }) => {
        const batch = find(id as string);
        retrieve(batch);
        return { json: view(batch) };
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/batches\/([^/]+)\/cancel$/,
      body: 'none',
      handle: ({ params: [id] }) => {
        const batch = find(id as string);
        cancel(batch);
        return { json: view(batch) };
      },
    },
  ];

  const server = await startEmulatorServer(dialect, routes);
  return {
    /** The SDK's `baseURL` (with `/v1`). */
    baseURL: `${server.url}/v1`,
    url: server.url,
    apiKey,
    /** Every request received, in order (method, path, query, headers, parsed body, status). */
    log: server.log,
    faults: server.faults,
    /** Holds the next batch create call open (see Faults.holdNext). */
    holdNextCreate: (apply?: 'on-arrival' | 'on-release') =>
      server.faults.holdNext({ method: 'POST', path: /^\/v1\/batches$/ }, apply),
    batch: (id: string) => batches.get(id),
    batches: () => [...batches.values()],
    /** Stored files (uploads and outputs), deleted ones included. */
    file: (id: string) => files.get(id),
    files: () => files.all(),
    setOutcome: (customId: string, outcome: OpenAIOutcome) => void outcomes.set(customId, outcome),
    /** The next batch to leave `validating` fails with these errors (e.g. `token_limit_exceeded`). */
    failNextValidation: (errors: BatchError[]) => void validationFailures.push(errors),
    step: (id: string) => step(find(id)),
    /** Walks every batch to a terminal status. */
    endAll: () => {
      for (const batch of batches.values()) while (!TERMINAL.includes(batch.status)) step(batch);
    },
    /** Ends a batch as if its 24 hours ran out. */
    expire: (id: string) => {
      const batch = find(id);
      if (!TERMINAL.includes(batch.status)) stop(batch, 'expired');
    },
    close: server.close,
  };
}

export type OpenAIEmulator = Awaited<ReturnType<typeof startOpenAIEmulator>>;
