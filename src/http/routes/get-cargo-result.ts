/** GET /cargo/:id/result: the mailbox (409 until done, 410 once purged). */
import { type Static, Type } from 'typebox';
import { mailboxEnvelopeJson } from '../../domain/envelope.js';
import { errors } from '../../domain/errors.js';
import { isCargoId } from '../../domain/ids.js';
import { hasResult } from '../../domain/lifecycle.js';
import { findCargoForProject } from '../../store/cargo/find-for-project.js';
import { authOf } from '../auth.js';
import { apiKeySecurity, authErrorResponses, CargoIdParams, ErrorBody, notFoundResponse } from '../schemas.js';
import type { TypedScope } from '../typed-scope.js';
import type { CargoRouteDeps } from './track-cargo.js';

export const ResultEnvelope = Type.Object(
  {
    cargo_id: Type.String(),
    success: Type.Boolean(),
    response: Type.Unknown({ description: 'The model message; null on failure.' }),
    error_message: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time', description: 'When the result was produced.' }),
    metadata: Type.Unknown({ description: 'The submitted metadata, or null.' }),
  },
  {
    examples: [
      {
        cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
        success: true,
        response: {
          id: 'msg_mock_5f2c1a',
          type: 'message',
          role: 'assistant',
          content: [{ type: 'text', text: 'Hamlet avenges his father and everyone dies.' }],
          model: 'svc-mock',
          stop_reason: 'end_turn',
          usage: { input_tokens: 12, output_tokens: 9 },
        },
        error_message: null,
        created_at: '2026-11-22T10:01:00.000Z',
        metadata: { ticket: 'T-1234' },
      },
    ],
  },
);

export function registerGetCargoResult(app: TypedScope, deps: CargoRouteDeps): void {
  // The 200 is sent as JSON text already (mailboxEnvelopeJson keeps the stored response and
  // metadata exactly as they are), so the reply is typed as that text (ResultEnvelope documents
  // it); naming the reply type means naming the params type too.
  app.get<{ Params: Static<typeof CargoIdParams>; Reply: string }>(
    '/cargo/:cargo_id/result',
    {
      schema: {
        summary: 'Fetch the stored result (mailbox)',
        description:
          '200 once the cargo has a result (also for failed cargo, with success false), 409 while it is pending, batched or processing, 410 once the result is past its retention.',
        tags: ['cargo'],
        security: apiKeySecurity,
        params: CargoIdParams,
        response: {
          200: ResultEnvelope,
          ...notFoundResponse,
          409: {
            ...ErrorBody,
            description: 'Not finished yet.',
            examples: [
              {
                detail: {
                  error: 'result_not_ready',
                  message: 'The result is not ready yet.',
                  cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
                  status: 'processing',
                  status_description: 'Batch is being processed by the provider',
                },
              },
            ],
          },
          410: {
            ...ErrorBody,
            description: 'The result was purged after result_ttl_seconds.',
            examples: [
              {
                detail: {
                  error: 'result_expired',
                  message: 'The result has expired and was purged.',
                  cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c',
                  status: 'completed',
                },
              },
            ],
          },
          ...authErrorResponses,
        },
      },
    },
    async (request, reply) => {
      const { cargo_id } = request.params;
      if (!isCargoId(cargo_id)) throw errors.cargoNotFound();
      const cargo = await findCargoForProject(deps.database, authOf(request).projectId, cargo_id);
      if (!cargo) throw errors.cargoNotFound();
      if (!hasResult(cargo.status) || !cargo.result) throw errors.resultNotReady(cargo.id, cargo.status);
      if (cargo.result.purged) throw errors.resultExpired(cargo.id, cargo.status);
      return reply.type('application/json; charset=utf-8').send(
        mailboxEnvelopeJson({
          cargoId: cargo.id,
          success: cargo.result.success,
          responseJson: cargo.result.response,
          errorMessage: cargo.result.errorMessage,
          createdAt: cargo.result.createdAt,
          metadataJson: cargo.metadata,
        }),
      );
    },
  );
}
