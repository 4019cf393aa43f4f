/** POST /cargo/:id/cancel: a pending or batched cargo becomes canceled, before any of it reaches a provider. */
import type { Clock } from '../../domain/clock.js';
import { errors } from '../../domain/errors.js';
import { isCargoId } from '../../domain/ids.js';
import { cancelCargo } from '../../store/cargo/cancel.js';
import type { Database } from '../../store/database.js';
import { authOf } from '../auth.js';
import { apiKeySecurity, authErrorResponses, CargoIdParams, ErrorBody, notFoundResponse } from '../schemas.js';
import type { TypedScope } from '../typed-scope.js';
import { TrackingResponse, trackingOf } from './track-cargo.js';

export function registerCancelCargo(app: TypedScope, deps: { database: Database; clock: Clock }): void {
  app.post(
    '/cargo/:cargo_id/cancel',
    {
      schema: {
        summary: 'Cancel a cargo',
        description:
          'A pending or batched cargo becomes `canceled` at once: it is never sent to a provider, never billed and never delivered; its result (GET /cargo/{id}/result) says `success: false`, `error_message: "canceled"`. Answers the tracking body. A cargo whose batch is already being submitted, or that is processing or finished, cannot be canceled (409).',
        tags: ['cargo'],
        security: apiKeySecurity,
        params: CargoIdParams,
        response: {
          200: {
            ...TrackingResponse,
            examples: [
              {
                cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
                status: 'canceled',
                status_description: 'Canceled before processing',
                created_at: '2026-11-22T10:00:00.000Z',
                updated_at: '2026-11-22T10:00:05.250Z',
              },
            ],
          },
          ...notFoundResponse,
          409: {
            ...ErrorBody,
            description: 'Too late: the cargo is processing or finished, or its batch is being submitted.',
            examples: [
              {
                detail: {
                  error: 'cannot_cancel',
                  message: 'The cargo cannot be canceled: it is processing. Only pending or batched cargo can be.',
                  cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
                  status: 'processing',
                },
              },
            ],
          },
          ...authErrorResponses,
        },
      },
    },
    async (request) => {
      const { cargo_id } = request.params;
      if (!isCargoId(cargo_id)) throw errors.cargoNotFound();
      const projectId = authOf(request).projectId;
      const outcome = await cancelCargo(deps.database, { projectId, cargoId: cargo_id, now: deps.clock.now() });
      if (outcome.kind === 'not_found') throw errors.cargoNotFound();
      if (outcome.kind === 'too_late') throw errors.cannotCancel(cargo_id, outcome.status);
      const tracking = await trackingOf(deps.database, projectId, cargo_id);
      if (!tracking) throw errors.cargoNotFound();
      return tracking;
    },
  );
}
