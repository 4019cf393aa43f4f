/** One cargo as an operator sees it: its row, batch, result (never the response), deliveries and their attempts. */
import type { CargoStatus } from '../../domain/lifecycle.js';
import type { Database } from '../database.js';
import { metadataOf } from '../metadata.js';
import type { BatchStatus, DeliveryChannelName, DeliveryStatus } from '../schema.js';
import { projectCargoQuery } from './find-for-project.js';

/** At most this many attempts are read, the newest: a cargo redelivered again and again stays one bounded read. */
export const MAX_LISTED_ATTEMPTS = 1000;

export interface CargoDetail {
  id: string;
  status: CargoStatus;
  model: string;
  provider: string;
  providerModel: string;
  requestCount: number;
  isRecords: boolean;
  callbackUrl: string | null;
  /** JSON text of the `callback` target. */
  callback: string | null;
  /** JSON text of the metadata as submitted. */
  metadata: string | null;
  createdAt: number;
  updatedAt: number;
  batch: {
    id: string;
    status: BatchStatus;
    provider: string;
    providerModel: string;
    jobId: string | null;
    createdAt: number;
    submittedAt: number | null;
    endedAt: number | null;
    endReason: string | null;
    lastError: string | null;
  } | null;
  result: {
    success: boolean;
    errorMessage: string | null;
    createdAt: number;
    expiresAt: number;
    purgedAt: number | null;
    inputTokens: number;
    outputTokens: number;
    costUsd: number | null;
  } | null;
  /** Oldest first. */
  deliveries: {
    id: string;
    channel: DeliveryChannelName;
    status: DeliveryStatus;
    trigger: string;
    attempts: number;
    createdAt: number;
    endedAt: number | null;
    nextAttemptAt: number;
    lastError: string | null;
    lastStatusCode: number | null;
  }[];
  /** The newest MAX_LISTED_ATTEMPTS attempts, oldest first. */
  attempts: {
    id: string;
    deliveryId: string;
    channel: DeliveryChannelName;
    attempt: number;
    trigger: string;
    startedAt: number;
    durationMs: number;
    statusCode: number | null;
    errorClass: string | null;
    errorDetail: string | null;
    responseExcerpt: string | null;
  }[];
  /** Older attempts not read. */
  attemptsOmitted: number;
}

const num = (value: number | string | null) => (value === null ? null : Number(value));

/** A project's cargo as an operator sees it, or undefined (another project's cargo is not found either). */
export async function findCargoDetail(
  database: Database,
  projectId: string,
  cargoId: string,
): Promise<CargoDetail | undefined> {
  const row = await projectCargoQuery(database, projectId, cargoId)
    .select([
      'c.id',
      'c.status',
      'c.model',
      'c.provider',
      'c.provider_model',
      'c.request_count',
      'c.is_records',
      'c.callback_url',
      'c.callback',
      metadataOf,
      'c.created_at',
      'c.updated_at',
      'b.id as batch_id',
      'b.status as batch_status',
      'b.provider as batch_provider',
      'b.provider_model as batch_provider_model',
      'b.job_id',
      'b.created_at as batch_created_at',
      'b.submitted_at',
      'b.ended_at as batch_ended_at',
      'b.end_reason',
      'b.last_error as batch_error',
      'r.success',
      'r.error_message',
      'r.created_at as result_created_at',
      'r.expires_at',
      'r.purged_at',
      'r.input_tokens',
      'r.output_tokens',
      'r.cost_usd',
    ])
    .executeTakeFirst();
  if (!row) return undefined;
  const deliveries = await database.read
    .selectFrom('deliveries')
    .selectAll()
    .where('cargo_id', '=', cargoId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const attempts = await database.read
    .selectFrom('delivery_attempts as a')
    .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
    .selectAll('a')
    .select('d.channel')
    .where('d.cargo_id', '=', cargoId)
    .orderBy('a.started_at', 'desc')
    .orderBy('a.id', 'desc')
    .limit(MAX_LISTED_ATTEMPTS)
    .execute();
  let attemptsOmitted = 0;
  if (attempts.length === MAX_LISTED_ATTEMPTS) {
    // Only a cargo with this many attempts pays for the count.
    const counted = await database.read
      .selectFrom('delivery_attempts as a')
      .innerJoin('deliveries as d', 'd.id', 'a.delivery_id')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('d.cargo_id', '=', cargoId)
      .executeTakeFirstOrThrow();
    attemptsOmitted = Number(counted.n) - MAX_LISTED_ATTEMPTS;
  }
  return {
    id: row.id,
    status: row.status,
    model: row.model,
    provider: row.provider,
    providerModel: row.provider_model,
    requestCount: row.request_count,
    isRecords: row.is_records === 1,
    callbackUrl: row.callback_url,
    callback: row.callback,
    metadata: row.metadata,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    batch:
      row.batch_id === null
        ? null
        : {
            id: row.batch_id,
            status: row.batch_status as BatchStatus,
            provider: row.batch_provider as string,
            providerModel: row.batch_provider_model as string,
            jobId: row.job_id,
            createdAt: Number(row.batch_created_at),
            submittedAt: num(row.submitted_at),
            endedAt: num(row.batch_ended_at),
            endReason: row.end_reason,
            lastError: row.batch_error,
          },
    result:
      row.success === null
        ? null
        : {
            success: row.success === 1,
            errorMessage: row.error_message,
            createdAt: Number(row.result_created_at),
            expiresAt: Number(row.expires_at),
            purgedAt: num(row.purged_at),
            inputTokens: Number(row.input_tokens),
            outputTokens: Number(row.output_tokens),
            costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
          },
    deliveries: deliveries.map((d) => ({
      id: d.id,
      channel: d.channel,
      status: d.status,
      trigger: d.trigger,
      attempts: d.attempts,
      createdAt: Number(d.created_at),
      endedAt: num(d.ended_at),
      nextAttemptAt: Number(d.next_attempt_at),
      lastError: d.last_error,
      lastStatusCode: d.last_status_code,
    })),
    attempts: attempts.reverse().map((a) => ({
      id: a.id,
      deliveryId: a.delivery_id,
      channel: a.channel,
      attempt: a.attempt,
      trigger: a.trigger,
      startedAt: Number(a.started_at),
      durationMs: Number(a.duration_ms),
      statusCode: a.status_code,
      errorClass: a.error_class,
      errorDetail: a.error_detail,
      responseExcerpt: a.response_excerpt,
    })),
    attemptsOmitted,
  };
}
