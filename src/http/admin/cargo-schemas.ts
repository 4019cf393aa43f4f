/** Shapes of the admin API's cargo routes: a page of a project's cargo, one cargo's story, a redelivery. */
import { type Static, Type } from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { ALL_CARGO_STATUSES, ALL_CHANNELS, BATCH_STATUSES, DELIVERY_STATUSES } from '../../domain/lifecycle.js';
import type { ListedCargo } from '../../operations/list-cargo.js';
import type { CargoStory } from '../../operations/show-cargo.js';
import { listedDescription } from '../routes/list-cargo.js';
import { sentence } from './refusals.js';
import { nullableInt, nullableNumber, nullableString, nullableTime, SlugParams, time } from './schemas.js';

export const CargoParams = Type.Object({
  ...SlugParams.properties,
  cargo_id: Type.String({ description: 'The cargo id.', examples: ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c'] }),
});

const CargoStatus = Type.Enum(ALL_CARGO_STATUSES);
const Channel = Type.Enum(ALL_CHANNELS);

export const CargoSummaryBody = Type.Object({
  cargo_id: Type.String(),
  status: CargoStatus,
  status_description: Type.String({ description: 'As GET /cargo/{id}/tracking says it, with the reason where known.' }),
  model: Type.String({ description: 'The model id as submitted.' }),
  created_at: time('When the cargo was accepted.'),
  updated_at: time('When its status last changed.'),
});

const cargoSummaryExample = {
  cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
  status: 'callback_failed',
  status_description: 'Delivery failed after 5 attempts: receiver answered HTTP 503',
  model: 'claude-sonnet-4-5',
  created_at: '2026-11-22T10:00:00.000Z',
  updated_at: '2026-11-22T11:02:13.400Z',
};

export const CargoPageBody = Type.Object(
  {
    data: Type.Array(CargoSummaryBody, { description: 'Newest first.' }),
    has_more: Type.Boolean({ description: 'Whether another page follows: ask again with `after` = `last_id`.' }),
    last_id: Type.Union([Type.String(), Type.Null()], { description: "The page's last cargo id; null when empty." }),
  },
  { examples: [{ data: [cargoSummaryExample], has_more: true, last_id: cargoSummaryExample.cargo_id }] },
);

export const HistoryEntry = Type.Object({
  status: CargoStatus,
  at: time('When the cargo moved into this status.'),
});

export const BatchBody = Type.Object({
  id: Type.String(),
  status: Type.Enum(Object.values(BATCH_STATUSES), {
    description: '`submitting` (formed, being sent), `processing` (the provider has it), `ended`.',
  }),
  provider: Type.String(),
  provider_model: Type.String(),
  job_id: nullableString("The provider's own batch job id (null until the provider accepted it)."),
  created_at: time('When the batch was formed.'),
  submitted_at: nullableTime('When the provider accepted it.'),
  ended_at: nullableTime('When its results were collected.'),
  end_reason: nullableString('Why it ended (e.g. `completed`, `expired`, `failed`).'),
  last_error: nullableString('Why the last try to submit or poll it failed, while it waits to try again.'),
});

export const ResultBody = Type.Object({
  success: Type.Boolean(),
  error_message: nullableString('Why it failed.'),
  created_at: time('When the result was produced.'),
  expires_at: time('When its body is purged (result_ttl_seconds).'),
  purged_at: nullableTime('When its body was purged.'),
  input_tokens: Type.Integer(),
  output_tokens: Type.Integer(),
  cost_usd: nullableNumber('At the batch prices; null when no price was known.'),
});

export const DeliveryBody = Type.Object({
  id: Type.String(),
  channel: Channel,
  status: Type.Enum(Object.values(DELIVERY_STATUSES)),
  trigger: Type.String({
    description: '`result` (the result was stored), `redeliver` (an operator asked), `recovery` (a bulk recovery).',
  }),
  attempts: Type.Integer({ description: 'Attempts made so far.' }),
  created_at: time('When the delivery was scheduled.'),
  ended_at: nullableTime('When it was delivered or failed for good.'),
  next_attempt_at: nullableTime('When its next attempt is due, while pending.'),
  last_error: nullableString('How its last attempt failed.'),
  last_status_code: nullableInt("The receiver's last HTTP status."),
});

export const AttemptBody = Type.Object({
  id: Type.String(),
  delivery_id: Type.String(),
  channel: Channel,
  attempt: Type.Integer({ description: "The attempt's number within its delivery, from 1." }),
  trigger: Type.String({ description: "Its delivery's trigger." }),
  started_at: time('When the attempt started.'),
  duration_ms: Type.Integer(),
  status_code: nullableInt("The receiver's HTTP status (webhooks)."),
  error_class: nullableString(
    'How it failed: `http_status`, `timeout`, `dns`, `connection_refused`, `blocked_address`, `target_not_found`, `assume_role_denied`…; null: delivered.',
  ),
  error_detail: nullableString('The failure in words.'),
  response_excerpt: nullableString("The first 512 bytes of the receiver's answer."),
});

export const RedeliverAvailability = Type.Object(
  {
    available: Type.Boolean({ description: 'Whether POST …/redeliver would schedule a delivery now.' }),
    refusal: Type.Union([Type.Object({ error: Type.String(), message: Type.String() }), Type.Null()], {
      description:
        'Why not: `delivery_in_progress`, `result_not_ready`, `result_purged`, `no_delivery_requested` (the code and message POST …/redeliver would answer).',
    }),
  },
  { description: 'Whether a redelivery is possible, and why not: what a dashboard disables its button with.' },
);

export const CargoDetailBody = Type.Object(
  {
    ...CargoSummaryBody.properties,
    provider: Type.String({ description: 'Where routing sent it.' }),
    provider_model: Type.String(),
    request_count: Type.Integer({ description: 'Provider requests (a records cargo: its records).' }),
    records: Type.Boolean({ description: 'Submitted with `records`.' }),
    callback_url: nullableString('The webhook it asked for.'),
    callback: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'The object-store or message target it asked for.',
    }),
    metadata: Type.Unknown({ description: 'Its metadata as submitted (null: none).' }),
    history: Type.Array(HistoryEntry, {
      description:
        'Each status it moved into, oldest first, with its time as the rows record it (README, Admin API: a batch refilled before its submission shows one move into `batched`).',
    }),
    batch: Type.Union([BatchBody, Type.Null()], { description: 'Its batch, once batched.' }),
    result: Type.Union([ResultBody, Type.Null()], { description: 'Its result, never the response body.' }),
    deliveries: Type.Array(DeliveryBody, { description: 'Every delivery, oldest first.' }),
    attempts: Type.Array(AttemptBody, { description: 'Every attempt of every delivery, oldest first.' }),
    attempts_omitted: Type.Integer({
      description: 'Older attempts left out: at most the newest 1,000 are listed.',
    }),
    redeliver: RedeliverAvailability,
  },
  {
    examples: [
      {
        ...cargoSummaryExample,
        provider: 'anthropic',
        provider_model: 'claude-sonnet-4-5-20250929',
        request_count: 1,
        records: false,
        callback_url: 'https://hooks.acme.example/barge',
        callback: null,
        metadata: { order: 'A-1' },
        history: [
          { status: 'pending', at: '2026-11-22T10:00:00.000Z' },
          { status: 'batched', at: '2026-11-22T10:00:30.010Z' },
          { status: 'processing', at: '2026-11-22T10:00:31.200Z' },
          { status: 'callback_pending', at: '2026-11-22T10:41:07.000Z' },
          { status: 'callback_failed', at: '2026-11-22T11:02:13.400Z' },
        ],
        batch: {
          id: 'bat_01jd5q4a0b1c2d3e4f5g6h7j8k',
          status: 'ended',
          provider: 'anthropic',
          provider_model: 'claude-sonnet-4-5-20250929',
          job_id: 'msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d',
          created_at: '2026-11-22T10:00:30.010Z',
          submitted_at: '2026-11-22T10:00:31.200Z',
          ended_at: '2026-11-22T10:41:07.000Z',
          end_reason: 'completed',
          last_error: null,
        },
        result: {
          success: true,
          error_message: null,
          created_at: '2026-11-22T10:41:07.000Z',
          expires_at: '2026-12-22T10:41:07.000Z',
          purged_at: null,
          input_tokens: 1200,
          output_tokens: 310,
          cost_usd: 0.004125,
        },
        deliveries: [
          {
            id: 'dlv_01jd5r0a0b1c2d3e4f5g6h7j8k',
            channel: 'webhook',
            status: 'failed',
            trigger: 'result',
            attempts: 1,
            created_at: '2026-11-22T10:41:07.000Z',
            ended_at: '2026-11-22T11:02:13.400Z',
            next_attempt_at: null,
            last_error: 'receiver answered HTTP 503',
            last_status_code: 503,
          },
        ],
        attempts: [
          {
            id: 'att_01jd5r0a2b1c2d3e4f5g6h7j8k',
            delivery_id: 'dlv_01jd5r0a0b1c2d3e4f5g6h7j8k',
            channel: 'webhook',
            attempt: 1,
            trigger: 'result',
            started_at: '2026-11-22T11:02:13.100Z',
            duration_ms: 300,
            status_code: 503,
            error_class: 'http_status',
            error_detail: 'receiver answered HTTP 503',
            response_excerpt: 'Service Unavailable',
          },
        ],
        attempts_omitted: 0,
        redeliver: { available: true, refusal: null },
      },
    ],
  },
);

export const RedeliveryBody = Type.Object(
  {
    cargo_id: Type.String(),
    channels: Type.Array(Channel, { description: 'The channels a fresh delivery was scheduled on.' }),
    status: Type.Literal('callback_pending', { description: "The cargo's status from now on." }),
  },
  { examples: [{ cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c', channels: ['webhook'], status: 'callback_pending' }] },
);

export type CargoSummaryJson = Static<typeof CargoSummaryBody>;
export type CargoPageJson = Static<typeof CargoPageBody>;
export type CargoDetailJson = Static<typeof CargoDetailBody>;
export type RedeliveryJson = Static<typeof RedeliveryBody>;

const maybeIso = (ms: number | null) => (ms === null ? null : isoTime(ms));

export function cargoSummaryJson(c: ListedCargo): CargoSummaryJson {
  return {
    cargo_id: c.id,
    status: c.status,
    status_description: listedDescription(c),
    model: c.model,
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
  };
}

export function cargoDetailJson(story: CargoStory): CargoDetailJson {
  const { cargo: c, redeliveryRefusal: refusal } = story;
  return {
    cargo_id: c.id,
    status: c.status,
    status_description: story.statusDescription,
    model: c.model,
    created_at: isoTime(c.createdAt),
    updated_at: isoTime(c.updatedAt),
    provider: c.provider,
    provider_model: c.providerModel,
    request_count: c.requestCount,
    records: c.isRecords,
    callback_url: c.callbackUrl,
    callback: c.callback === null ? null : (JSON.parse(c.callback) as Record<string, unknown>),
    metadata: c.metadata === null ? null : JSON.parse(c.metadata),
    history: story.history.map((h) => ({ status: h.status, at: isoTime(h.at) })),
    batch: c.batch && {
      id: c.batch.id,
      status: c.batch.status,
      provider: c.batch.provider,
      provider_model: c.batch.providerModel,
      job_id: c.batch.jobId,
      created_at: isoTime(c.batch.createdAt),
      submitted_at: maybeIso(c.batch.submittedAt),
      ended_at: maybeIso(c.batch.endedAt),
      end_reason: c.batch.endReason,
      last_error: c.batch.lastError,
    },
    result: c.result && {
      success: c.result.success,
      error_message: c.result.errorMessage,
      created_at: isoTime(c.result.createdAt),
      expires_at: isoTime(c.result.expiresAt),
      purged_at: maybeIso(c.result.purgedAt),
      input_tokens: c.result.inputTokens,
      output_tokens: c.result.outputTokens,
      cost_usd: c.result.costUsd,
    },
    deliveries: c.deliveries.map((d) => ({
      id: d.id,
      channel: d.channel,
      status: d.status,
      trigger: d.trigger,
      attempts: d.attempts,
      created_at: isoTime(d.createdAt),
      ended_at: maybeIso(d.endedAt),
      next_attempt_at: d.status === 'pending' ? isoTime(d.nextAttemptAt) : null,
      last_error: d.lastError,
      last_status_code: d.lastStatusCode,
    })),
    attempts: c.attempts.map((a) => ({
      id: a.id,
      delivery_id: a.deliveryId,
      channel: a.channel,
      attempt: a.attempt,
      trigger: a.trigger,
      started_at: isoTime(a.startedAt),
      duration_ms: a.durationMs,
      status_code: a.statusCode,
      error_class: a.errorClass,
      error_detail: a.errorDetail,
      response_excerpt: a.responseExcerpt,
    })),
    attempts_omitted: c.attemptsOmitted,
    redeliver: {
      available: refusal === null,
      refusal: refusal && { error: refusal.code, message: sentence(refusal.message) },
    },
  };
}
