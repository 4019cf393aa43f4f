/** GET /cargo/:id/tracking: a cargo's status and its deliveries. */
import { type Static, Type } from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { errors } from '../../domain/errors.js';
import { isCargoId } from '../../domain/ids.js';
import { ALL_CARGO_STATUSES, ALL_CHANNELS, DELIVERY_STATUSES, trackingDescription } from '../../domain/lifecycle.js';
import { findCargoForProject } from '../../store/cargo/find-for-project.js';
import type { Database } from '../../store/database.js';
import { deliverySummaries } from '../../store/deliveries/summaries.js';
import { authOf } from '../auth.js';
import { apiKeySecurity, authErrorResponses, CargoIdParams, notFoundResponse } from '../schemas.js';
import type { TypedScope } from '../typed-scope.js';

export const TrackingResponse = Type.Object(
  {
    cargo_id: Type.String(),
    status: Type.Enum(ALL_CARGO_STATUSES),
    status_description: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    deliveries: Type.Optional(
      Type.Array(
        Type.Object({
          channel: Type.Enum(ALL_CHANNELS),
          status: Type.Enum(Object.values(DELIVERY_STATUSES)),
          attempts: Type.Integer(),
          last_error: Type.Union([Type.String(), Type.Null()]),
          last_status_code: Type.Union([Type.Integer(), Type.Null()]),
          next_attempt_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
        }),
        { description: 'One entry per requested delivery, when the cargo asked for any.' },
      ),
    ),
  },
  {
    examples: [
      {
        cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
        status: 'processing',
        status_description: 'Batch is being processed by the provider',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:00:02.120Z',
      },
      {
        cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
        status: 'callback_pending',
        status_description: 'Result ready, delivering callback',
        created_at: '2026-11-22T10:00:00.000Z',
        updated_at: '2026-11-22T10:01:00.310Z',
        deliveries: [
          {
            channel: 'webhook',
            status: 'pending',
            attempts: 2,
            last_error: 'receiver answered HTTP 503',
            last_status_code: 503,
            next_attempt_at: '2026-11-22T10:03:30.000Z',
          },
        ],
      },
    ],
  },
);

export interface CargoRouteDeps {
  database: Database;
}

export function registerTrackCargo(app: TypedScope, deps: CargoRouteDeps): void {
  app.get(
    '/cargo/:cargo_id/tracking',
    {
      schema: {
        summary: 'Track a cargo',
        description: 'Cheap and status-only: never carries the response.',
        tags: ['cargo'],
        security: apiKeySecurity,
        params: CargoIdParams,
        response: { 200: TrackingResponse, ...notFoundResponse, ...authErrorResponses },
      },
    },
    async (request) => {
      const { cargo_id } = request.params;
      if (!isCargoId(cargo_id)) throw errors.cargoNotFound();
      const tracking = await trackingOf(deps.database, authOf(request).projectId, cargo_id);
      if (!tracking) throw errors.cargoNotFound();
      return tracking;
    },
  );
}

/** A project's cargo as GET /cargo/{id}/tracking answers it, or undefined. */
export async function trackingOf(
  database: Database,
  projectId: string,
  cargoId: string,
): Promise<Static<typeof TrackingResponse> | undefined> {
  const cargo = await findCargoForProject(database, projectId, cargoId);
  if (!cargo) return undefined;
  const deliveries = cargo.hasDeliveries ? await deliverySummaries(database, cargo.id) : [];
  return {
    cargo_id: cargo.id,
    status: cargo.status,
    status_description: trackingDescription(cargo.status, {
      resultError: cargo.result?.errorMessage ?? null,
      submitError: cargo.submitError,
      deliveries,
    }),
    created_at: isoTime(cargo.createdAt),
    updated_at: isoTime(cargo.updatedAt),
    ...(deliveries.length > 0
      ? {
          deliveries: deliveries.map((d) => ({
            channel: d.channel,
            status: d.status,
            attempts: d.attempts,
            last_error: d.lastError,
            last_status_code: d.lastStatusCode,
            next_attempt_at: d.nextAttemptAt === null ? null : isoTime(d.nextAttemptAt),
          })),
        }
      : {}),
  };
}
