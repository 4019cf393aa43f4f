/** The collector: an ended job's results streamed into the mailbox in chunks; records cargo assembled in order. */
import { parseCustomId } from '../domain/custom-ids.js';
import { statusAfterResult } from '../domain/lifecycle.js';
import type { ModelPrices } from '../domain/model-catalog.js';
import {
  assembleRecords,
  CANCELED_ERROR,
  EXPIRED_ERROR,
  NO_RESULT_ERROR,
  REQUEST_EXPIRED_ERROR,
  type RecordOutcome,
  recordResultJson,
  withRecordId,
} from '../domain/records.js';
import { addTokens, NO_TOKENS, type Tokens, type Usage, usageOf, usageOfMessage } from '../domain/usage.js';
import type { JobRef, Provider, RequestResult } from '../providers/provider.js';
import type { BatchRow } from '../store/batches/due.js';
import { recordPaddingUsage } from '../store/batches/padding-usage.js';
import { extendLease } from '../store/leases.js';
import { type AwaitingCargo, cargoAwaitingResults, cargoRequest } from '../store/results/awaiting.js';
import { type StagedRecord, stagedRecordResults, stageRecordResults } from '../store/results/stage-records.js';
import { type NewResult, storeResults } from '../store/results/store.js';
import { nextTurn, TimeSlices } from '../turns.js';
import { countCargoMoves, type PipelineContext } from './context.js';

/**
 * Results are written this many at a time: memory stays flat however large the batch, and each
 * commit (one fsync) carries a couple of megabytes rather than a few hundred kilobytes.
 */
const FLUSH_EVERY = 2000;

/**
 * Streams an ended job's results into the mailbox. Plain cargo get their result as it arrives;
 * a `records` cargo's per-record results are staged and assembled in input order at the end. Cargo
 * the provider returned nothing for fail. Safe to run again after a crash: stored results stay.
 * Each result keeps its tokens and their cost at its cargo's prices (ctx.prices); what padding
 * requests used goes on the batch, never on a project.
 *
 */
export async function collectResults(
  ctx: PipelineContext,
  provider: Provider,
  batch: BatchRow,
  job: JobRef,
  options: CollectOptions,
): Promise<void> {
  // A bounded number at a time: a provider may hold a whole job's results while they are read
  // (svc-mock does), and the collector holds up to two chunks of results.
  await ctx.budgets.collections
    .of(batch.provider)
    .run(batch.request_bytes, () => collect(ctx, provider, batch, job, options));
}

async function collect(
  ctx: PipelineContext,
  provider: Provider,
  batch: BatchRow,
  job: JobRef,
  options: CollectOptions,
): Promise<void> {
  const awaiting = new Map((await cargoAwaitingResults(ctx.database, batch.id)).map((c) => [c.id, c]));
  const plain: NewResult[] = [];
  const staged: StagedRecord[] = [];
  const seen = new Set<string>();
  const prices = cargoPrices(ctx, batch);
  const padding = { tokens: NO_TOKENS };

  let leaseUntil = batch.locked_until ?? 0;
  const lease = { batchId: batch.id, workerId: ctx.workerId };
  const writer = new ChunkWriter(async (results, records) => {
    countCargoMoves(ctx.metrics, batch, await storeResults(ctx.database, lease, results, ctx.clock.now()));
    await stageRecordResults(ctx.database, lease, records);
    // Long collections keep their lease alive; losing it means another worker took over. Until
    // half of it has run no other worker can take the batch, so the extension (a commit of its
    // own) waits until then rather than following every chunk.
    const now = ctx.clock.now();
    if (now < leaseUntil - ctx.settings.leaseMs / 2) return;
    leaseUntil = now + ctx.settings.leaseMs;
    if (!(await extendLease(ctx.database, 'batches', { id: batch.id, workerId: ctx.workerId, until: leaseUntil }))) {
      throw new Error(`lost the lease on batch ${batch.id}`);
    }
  });
  const flush = () => writer.flush(plain.splice(0), staged.splice(0));

  try {
    await collectInto(provider, job, options, { awaiting, plain, staged, seen, flush, prices, padding });
    // Staged records must be committed before they are read back and assembled.
    await flush();
    await writer.settle();

    const missing = missingError(options);
    const slices = new TimeSlices();
    for (const cargo of awaiting.values()) {
      if (cargo.isRecords) {
        plain.push(await assembleRecordsCargo(ctx, cargo, missing, prices));
      } else if (!seen.has(cargo.id)) {
        plain.push(newResult(cargo, false, null, missing, usageOf(prices(cargo), NO_TOKENS)));
      }
      if (plain.length >= FLUSH_EVERY) await flush();
      else if (slices.due) await slices.pause();
    }
    await flush();
    await writer.settle();
    // The whole job's padding, known once its results are read: one write, and only for batches
    // that were padded.
    if (padding.tokens.inputTokens > 0 || padding.tokens.outputTokens > 0) {
      await recordPaddingUsage(ctx.database, lease, padding.tokens);
    }
  } catch (err) {
    // Nothing of this collection may still be writing once the caller has given the batch up.
    await writer.settle().catch(() => {});
    throw err;
  }
}

interface Collection {
  awaiting: Map<string, AwaitingCargo>;
  plain: NewResult[];
  staged: StagedRecord[];
  seen: Set<string>;
  flush: () => Promise<void>;
  /** A cargo's prices, or null when none are known. */
  prices: CargoPrices;
  /** What the padding requests used, summed as their results arrive. */
  padding: { tokens: Tokens };
}

export interface CollectOptions {
  /** `expired` when barge canceled the job because its completion window closed: what it canceled expired. */
  canceledMeans: 'canceled' | 'expired';
  /** What the provider's ended status says a request its results leave out became (JobStatus). */
  unanswered: 'expired' | 'canceled' | null;
}

/** Turns the provider's results into pending writes, flushing every FLUSH_EVERY. */
async function collectInto(
  provider: Provider,
  job: JobRef,
  options: CollectOptions,
  { awaiting, plain, staged, seen, flush, prices, padding }: Collection,
): Promise<void> {
  // Building results is synchronous work, and a provider's result stream may never wait on I/O,
  // so a collection would otherwise hold the event loop from one flush to the next: the rest of
  // the process (HTTP requests, timers) and the chunk being written, whose every statement on the
  // SQLite write thread is a round trip that waits for a turn, get one every few milliseconds.
  const slices = new TimeSlices();
  for await (const result of provider.results(job)) {
    const id = parseCustomId(result.customId);
    // A failed request used nothing.
    const tokens = result.success ? usageOfMessage(result.response) : NO_TOKENS;
    if (id.kind === 'padding') padding.tokens = addTokens(padding.tokens, tokens);
    if (id.kind !== 'cargo') continue;
    const cargo = awaiting.get(id.cargoId);
    if (!cargo) continue;
    const outcome = toOutcome(result, options.canceledMeans);
    if (cargo.isRecords && id.recordIndex !== null) {
      staged.push({
        cargoId: cargo.id,
        recordIndex: id.recordIndex,
        success: outcome.success,
        body: recordResultJson(outcome),
        ...tokens,
      });
    } else if (!cargo.isRecords) {
      seen.add(cargo.id);
      plain.push(
        newResult(cargo, outcome.success, outcome.responseJson, outcome.error, usageOf(prices(cargo), tokens)),
      );
    }
    if (plain.length + staged.length >= FLUSH_EVERY) await flush();
    else if (slices.due) await slices.pause();
  }
}

/**
 * Keeps one chunk of results being written while the collector builds the next: on SQLite the
 * write commits on the write worker's thread (storeResults), so building and committing overlap.
 * At most two chunks are in memory. A failed write surfaces at the next `flush` or at `settle`.
 */
class ChunkWriter {
  private inFlight: Promise<void> = Promise.resolve();

  constructor(private readonly write: (results: NewResult[], records: StagedRecord[]) => Promise<void>) {}

  async flush(results: NewResult[], records: StagedRecord[]): Promise<void> {
    await this.inFlight;
    const writing = this.write(results, records);
    // Awaited by the next flush or settle; until then its failure must not count as unhandled.
    writing.catch(() => {});
    this.inFlight = writing;
    await nextTurn();
  }

  /** Waits for the write in flight; rejects if it failed. */
  settle(): Promise<void> {
    return this.inFlight;
  }
}

type CargoPrices = (cargo: AwaitingCargo) => ModelPrices | null;

/**
 * The prices of a batch's cargo, by the model id each was submitted as: the cargo of one batch
 * share a route, not always an id (two catalog ids may route to one provider model), and prices
 * belong to the id. Looked up once per id.
 */
export function cargoPrices(ctx: PipelineContext, batch: BatchRow): CargoPrices {
  const byModel = new Map<string, ModelPrices | null>();
  return ({ model }) => {
    let prices = byModel.get(model);
    if (prices === undefined) {
      prices = ctx.prices({ model, provider: batch.provider, providerModel: batch.provider_model });
      byModel.set(model, prices);
    }
    return prices;
  };
}

/** What a cargo (or record) the provider returned nothing for fails with. */
function missingError(options: CollectOptions): string {
  if (options.canceledMeans === 'expired') return EXPIRED_ERROR;
  if (options.unanswered === 'expired') return REQUEST_EXPIRED_ERROR;
  if (options.unanswered === 'canceled') return CANCELED_ERROR;
  return NO_RESULT_ERROR;
}

function toOutcome(result: RequestResult, canceledMeans: 'canceled' | 'expired'): RecordOutcome {
  if (result.success) return { success: true, responseJson: JSON.stringify(result.response), error: null };
  const error = result.kind === 'canceled' && canceledMeans === 'expired' ? EXPIRED_ERROR : result.error;
  return { success: false, responseJson: null, error };
}

/** The result of a cargo of this batch, and where the cargo goes with it. */
export function newResult(
  cargo: AwaitingCargo,
  success: boolean,
  responseJson: string | null,
  error: string | null,
  usage: Usage,
): NewResult {
  return {
    cargo,
    success,
    response: responseJson,
    errorMessage: error,
    nextStatus: statusAfterResult(success, cargo.channels.length),
    usage,
  };
}

/** Builds a records cargo's result from its staged records, in input order; its usage is their sum. */
async function assembleRecordsCargo(
  ctx: PipelineContext,
  cargo: AwaitingCargo,
  missing: string,
  prices: CargoPrices,
): Promise<NewResult> {
  const { requests } = JSON.parse(await cargoRequest(ctx.database, cargo.id)) as { requests: { recordId: string }[] };
  const staged = new Map((await stagedRecordResults(ctx.database, cargo.id)).map((r) => [r.recordIndex, r]));
  let failed = 0;
  let tokens = NO_TOKENS;
  const bodies = requests.map((request, index) => {
    const record = staged.get(index);
    if (!record?.success) failed++;
    if (record) tokens = addTokens(tokens, record);
    const body = record?.body ?? recordResultJson({ success: false, responseJson: null, error: missing });
    return withRecordId(request.recordId, body);
  });
  const assembled = assembleRecords(bodies, failed);
  return newResult(
    cargo,
    assembled.success,
    assembled.responseJson,
    assembled.errorMessage,
    usageOf(prices(cargo), tokens),
  );
}
