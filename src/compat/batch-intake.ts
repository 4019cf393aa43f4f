/**
 * Creating a provider-compatible batch: each request is checked as POST /cargo/load checks a
 * body's `params` (schema, request surface, routing, model policy, allowlist, budgets), staged a
 * chunk at a time as it arrives; at the end the batch is committed to in one transaction (the
 * budgets take it whole) and its cargo are created in bounded transactions (batch-publish.ts).
 * Until that commit nothing of the batch is visible, and a refusal leaves nothing.
 *
 * Why staged chunks and bounded transactions, not one transaction over the whole upload or the
 * whole batch: a 256 MB create arrives over seconds to a minute, and creating its cargo in one
 * transaction held SQLite's one write lock about 10 s (every other submission waited); staged rows
 * cost one more copy, made inside the database. A batch being created is invisible (`creating`)
 * under its creator's lease; a crash before the commit leaves it to the sweeper
 * (compat/sweeper.ts), which deletes it once the lease lapses, and a crash after it too, which
 * then creates the rest of its cargo. bench/RESULTS.md has the figures.
 */
import { randomUUID } from 'node:crypto';
import { storedRequestText } from '../domain/batch-requests.js';
import {
  type CargoRules,
  checkCargoBody,
  isModelAllowed,
  providerRequests,
  routePrices,
} from '../domain/cargo-checks.js';
import type { Clock } from '../domain/clock.js';
import type { FieldError } from '../domain/errors.js';
import { errors } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import type { ModelRoute } from '../domain/model-routing.js';
import { findPoisonedKey } from '../domain/poisoned-keys.js';
import type { Message, ModelSettings } from '../domain/request-surface.js';
import { fieldErrors } from '../domain/schema-errors.js';
import { type Budgets, estimateNano, hasBudget } from '../domain/spend.js';
import type { AuthContext } from '../http/auth.js';
import type { DiskGuard } from '../http/disk-guard.js';
import type { SpendBudget } from '../http/spend-budget.js';
import type { StorageBudget } from '../http/storage-budget.js';
import type { Validate } from '../http/validation.js';
import type { CompatApi } from '../store/compat/batches.js';
import {
  beginCompatBatch,
  beginCompatPublish,
  CompatLeaseLost,
  failCompatBatch,
  stageCompatRequests,
} from '../store/compat/create.js';
import { deleteCompatBatch } from '../store/compat/delete.js';
import type { Database } from '../store/database.js';
import type { CompatBatchRequestsTable, CompatStagedCargoTable } from '../store/schema.js';
import { publishStaged } from './batch-publish.js';

export interface IntakeDeps {
  database: Database;
  clock: Clock;
  rules: CargoRules;
  /** POST /cargo/load's body schema, compiled as the app compiles it (http/validation.ts). */
  validate: Validate;
  storage: { budget: StorageBudget; disk: DiskGuard | null };
  spend: SpendBudget;
  /** How long a creator's lease runs without a staged chunk (the sweeper deletes the batch after). */
  leaseMs: number;
  /** The cargo were created: wake the batcher, count them. */
  onCargoCreated: (routes: { provider: string; provider_model: string; count: number }[]) => void;
  log: { info: (obj: object, msg: string) => void; warn: (obj: object, msg: string) => void };
}

/** Why one request of the batch is refused: its problems and the status POST /cargo/load would answer. */
export interface Refusal {
  status: 400 | 402 | 403;
  /** The error code POST /cargo/load would answer (`invalid_body`, `model_not_allowed`, `unpriced_model`). */
  code: string;
  problems: FieldError[];
}

/** A checked request, ready to stage. */
interface Checked {
  model: string;
  route: ModelRoute;
  request: string;
  estimate: number;
}

/** A staged chunk is written at this many requests, or bytes of requests. */
const STAGE_ROWS = 1000;
const STAGE_BYTES = 4 * 1024 * 1024;

export class BatchIntake {
  private readonly budgets: Budgets;
  /** This creator's name on the batch's lease. */
  private readonly lockedBy = randomUUID();
  private requests: CompatBatchRequestsTable[] = [];
  private staged: CompatStagedCargoTable[] = [];
  private stagedBytes = 0;
  private count = 0;
  private bytes = 0;
  private estimate = 0;
  private readonly routes = new Map<string, { provider: string; provider_model: string; count: number }>();
  private settled = false;

  private constructor(
    private readonly deps: IntakeDeps,
    private readonly auth: AuthContext,
    readonly batchId: string,
    /** When the batch was begun: its `created_at`. */
    readonly createdAt: number,
  ) {
    this.budgets = deps.spend.budgetsOf(auth);
  }

  /**
   * Starts a batch, invisible until published; a project over its storage budget, or a service
   * short of storage, is refused before anything is read or written.
   */
  static async begin(
    deps: IntakeDeps,
    auth: AuthContext,
    batch: { id: string; api: CompatApi; inputFileId?: string; metadata?: string | null },
  ): Promise<BatchIntake> {
    await deps.storage.disk?.check(0);
    await deps.storage.budget.check(auth, 0);
    const now = deps.clock.now();
    const intake = new BatchIntake(deps, auth, batch.id, now);
    await beginCompatBatch(deps.database, {
      id: batch.id,
      project_id: auth.projectId,
      api: batch.api,
      created_at: now,
      locked_by: intake.lockedBy,
      locked_until: now + deps.leaseMs,
      input_file_id: batch.inputFileId ?? null,
      metadata: batch.metadata ?? null,
    });
    return intake;
  }

  /** How many requests were added. */
  get size(): number {
    return this.count;
  }

  /**
   * Checks one request's `params` as POST /cargo/load checks a body's: the refusal, or what it is
   * stored as. Pure but for the compiled schema.
   */
  check(params: unknown): Checked | Refusal {
    const body = { params };
    if (!this.deps.validate(body)) {
      return { status: 400, code: 'invalid_body', problems: fieldErrors(this.deps.validate.errors as never) };
    }
    const poisoned = findPoisonedKey(params);
    if (poisoned) return { status: 400, code: poisoned.code, problems: poisoned.extra.errors ?? [] };
    const valid = body as { params: ModelSettings & { model: string; messages?: Message[] } };
    const { problems, route } = checkCargoBody(valid, this.deps.rules);
    if (problems.length > 0 || route === null) return { status: 400, code: 'invalid_body', problems };
    const model = valid.params.model;
    if (!isModelAllowed(this.auth.allowedModels, model, route)) {
      return {
        status: 403,
        code: 'model_not_allowed',
        problems: [{ path: '/params/model', message: errors.modelNotAllowed(model).message }],
      };
    }
    const requests = providerRequests(valid);
    let estimate = 0;
    if (hasBudget(this.budgets)) {
      const prices = routePrices(route);
      if (prices === null) {
        return {
          status: 402,
          code: 'unpriced_model',
          problems: [{ path: '/params/model', message: errors.unpricedModel(model).message }],
        };
      }
      estimate = estimateNano(prices, requests);
    }
    return { model, route, request: storedRequestText(requests), estimate };
  }

  /** Adds a checked request (in submission order); a full chunk is staged. */
  async add(customId: string, checked: Checked): Promise<void> {
    const now = this.deps.clock.now();
    // Ids are made in submission order: a batch's cargo sort by position.
    const cargoId = newId('crg', now);
    const metadata = JSON.stringify({ batch_id: this.batchId, custom_id: customId });
    const requestBytes = Buffer.byteLength(checked.request);
    const position = this.count++;
    this.requests.push({ batch_id: this.batchId, position, custom_id: customId, cargo_id: cargoId });
    this.staged.push({
      batch_id: this.batchId,
      position,
      cargo_id: cargoId,
      model: checked.model,
      provider: checked.route.provider,
      provider_model: checked.route.providerModel,
      request: checked.request,
      request_bytes: requestBytes,
      metadata,
      reserved_nusd: checked.estimate,
      created_at: now,
    });
    this.stagedBytes += requestBytes;
    this.bytes += requestBytes + metadata.length;
    this.estimate += checked.estimate;
    const key = `${checked.route.provider}\u0000${checked.route.providerModel}`;
    const route = this.routes.get(key) ?? {
      provider: checked.route.provider,
      provider_model: checked.route.providerModel,
      count: 0,
    };
    route.count++;
    this.routes.set(key, route);
    if (this.staged.length >= STAGE_ROWS || this.stagedBytes >= STAGE_BYTES) await this.stage();
  }

  private async stage(): Promise<void> {
    if (this.staged.length === 0) return;
    const requests = this.requests;
    const staged = this.staged;
    this.requests = [];
    this.staged = [];
    this.stagedBytes = 0;
    await stageCompatRequests(this.deps.database, {
      batchId: this.batchId,
      lockedBy: this.lockedBy,
      lockedUntil: this.deps.clock.now() + this.deps.leaseMs,
      requests,
      staged,
    });
  }

  /**
   * Creates every cargo of the batch, after the project's storage and spend budgets take the
   * whole batch (429, 503 or 402 otherwise, and nothing is created): the publish begins in one
   * transaction that commits to the batch, then the cargo are created a bounded chunk per
   * transaction (batch-publish.ts) and the batch opens.
   */
  async publish(): Promise<void> {
    await this.stage();
    const { deps, auth } = this;
    await deps.storage.disk?.check(this.bytes);
    await deps.storage.budget.check(auth, this.bytes);
    const reservation = hasBudget(this.budgets)
      ? await deps.spend.check(auth.projectId, this.budgets, this.estimate)
      : null;
    const now = deps.clock.now();
    const started = performance.now();
    try {
      await beginCompatPublish(deps.database, {
        batchId: this.batchId,
        projectId: auth.projectId,
        lockedBy: this.lockedBy,
        lockedUntil: now + deps.leaseMs,
        now,
        requestCount: this.count,
        bytes: this.bytes,
        reservedNusd: this.estimate,
      });
    } catch (err) {
      if (reservation) deps.spend.settle(reservation, false);
      throw err;
    }
    this.settled = true;
    if (reservation) deps.spend.settle(reservation, true);
    deps.storage.budget.accepted(auth.projectId, this.bytes, now);
    try {
      await publishStaged(deps, this.batchId, this.lockedBy);
    } catch (err) {
      // This process stalled past its lease and the sweeper took the publish over: it finishes it.
      if (!(err instanceof CompatLeaseLost)) throw err;
      deps.log.warn({ batch: this.batchId }, 'the sweeper took over the publish of a batch');
    }
    // How long making the cargo took (docs/compat.md has the figures).
    deps.log.info(
      {
        batch: this.batchId,
        requests: this.count,
        bytes: this.bytes,
        publish_ms: Math.round(performance.now() - started),
      },
      'batch cargo created',
    );
    deps.onCargoCreated([...this.routes.values()]);
  }

  /** An OpenAI batch whose lines were refused: visible as `failed` with `errorsJson`, no cargo. */
  async fail(errorsJson: string): Promise<void> {
    this.settled = true;
    await failCompatBatch(this.deps.database, {
      batchId: this.batchId,
      lockedBy: this.lockedBy,
      now: this.deps.clock.now(),
      errors: errorsJson,
    });
  }

  /** Gives the batch up (a refusal, a client gone): deleted now, or by the sweeper if this fails. */
  async abandon(): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    await deleteCompatBatch(
      this.deps.database,
      this.batchId,
      { kind: 'given_up', lockedBy: this.lockedBy },
      this.deps.clock.now(),
    ).catch((err: unknown) =>
      this.deps.log.warn({ err, batch: this.batchId }, 'could not delete a batch given up; the sweeper will'),
    );
  }
}

export function isRefusal(value: Checked | Refusal): value is Refusal {
  return 'problems' in value;
}
