import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Type } from 'typebox';
import { isoTime } from '../../domain/clock.js';
import { errors } from '../../domain/errors.js';
import { ALL_CARGO_STATUSES, statusDescription } from '../../domain/statuses.js';
import { findCargoForProject } from '../../store/cargo.js';
import type { Database } from '../../store/database.js';
import type { AuthContext } from '../auth.js';
import { apiKeySecurity, authErrorResponses, CargoIdParams, notFoundResponse } from '../schemas.js';

const TrackingResponse = Type.Object(
  {
    cargo_id: Type.String(),
    status: Type.Enum(ALL_CARGO_STATUSES),
    status_description: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
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
    ],
  },
);

export interface CargoRouteDeps {
  database: Database;
  onRequest: onRequestHookHandler[];
  authOf: (request: FastifyRequest) => AuthContext;
}

export function registerTrackCargo(app: FastifyInstance, deps: CargoRouteDeps): void {
  app.get(
    '/cargo/:cargo_id/tracking',
    {
      onRequest: deps.onRequest,
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
      const { cargo_id } = request.params as { cargo_id: string };
      const cargo = await findCargoForProject(deps.database.db, deps.authOf(request).projectId, cargo_id);
      if (!cargo) throw errors.cargoNotFound();
      return {
        cargo_id: cargo.id,
        status: cargo.status,
        status_description: statusDescription(cargo.status),
        created_at: isoTime(cargo.createdAt),
        updated_at: isoTime(cargo.updatedAt),
      };
    },
  );
}
