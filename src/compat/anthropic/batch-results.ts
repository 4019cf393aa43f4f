/**
 * GET /v1/messages/batches/{id}/results: the results file of an ended batch, JSONL, one line a
 * request in submission order, streamed from the store a page at a time (a 100,000-request batch
 * is never held whole).
 */
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { TypedScope } from '../../http/typed-scope.js';
import type { Database } from '../../store/database.js';
import { batchProgress, requestsOf } from '../batch-progress.js';
import { type CompatDeps, progressDeps } from '../deps.js';
import { compatErrors } from '../error-shapes.js';
import { outcomeOf } from '../request-outcome.js';
import { findMessageBatch } from './batch-view.js';
import { resultLineOf } from './message-batch.js';
import { BatchIdParams, COMMON_ERRORS, errorAnswer, SECURITY, TAGS } from './schemas.js';

const JSONL = 'application/x-jsonl';

const ResultLines = Type.String({
  description:
    'One JSON object a line, in submission order: `{"custom_id", "result": {"type": "succeeded", "message"}}` (the cargo\'s message), `{"type": "errored", "error": {"type": "error", "error": {"type", "message"}}}` (the provider\'s error type, else `api_error`), `{"type": "canceled"}` or `{"type": "expired"}`.',
  examples: [
    '{"custom_id":"q1","result":{"type":"succeeded","message":{"id":"msg_mock_5f2c1a","type":"message","role":"assistant","content":[{"type":"text","text":"Hello."}],"model":"svc-mock","stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":2}}}}\n{"custom_id":"q2","result":{"type":"canceled"}}\n',
  ],
});

/** Lines are sent in pieces of about this many characters. */
const PIECE = 64 * 1024;

export function registerBatchResults(app: TypedScope, deps: CompatDeps): void {
  app.get(
    '/v1/messages/batches/:message_batch_id/results',
    {
      schema: {
        summary: 'Retrieve the results of a Message Batch',
        description:
          "The batch's `results_url`, once it ended. Results are kept as long as the batch is (30 days after its creation).",
        tags: TAGS,
        security: SECURITY,
        params: BatchIdParams,
        response: {
          200: { content: { [JSONL]: { schema: ResultLines } } },
          404: errorAnswer(
            'No such batch, or it has not ended yet.',
            'not_found_error',
            'The results of message_batch msgbatch_01jd5q3k8m9x2v4w6y8z0a1b2c are not available yet: it is in_progress.',
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const found = await findMessageBatch(deps, request, request.params.message_batch_id);
      const { row } = await batchProgress(progressDeps(deps, request.log), found);
      if (row.state !== 'ended') {
        throw compatErrors.resultsNotReady(row.id, row.cancel_requested_at === null ? 'in_progress' : 'canceling');
      }
      // The schema documents the lines; the body is their stream.
      return reply.type(JSONL).send(Readable.from(resultLines(deps.database, row.id)) as never);
    },
  );
}

async function* resultLines(database: Database, batchId: string): AsyncGenerator<string> {
  let piece = '';
  for await (const request of requestsOf(database, batchId)) {
    const outcome = outcomeOf(request);
    // An ended batch has none: every request's cargo has its result.
    if (outcome.type === 'processing') continue;
    piece += `${resultLineOf(request.customId, outcome)}\n`;
    if (piece.length >= PIECE) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}
