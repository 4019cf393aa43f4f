/**
 * POST /v1/messages/batches: a Message Batch, each request one cargo of the project. The body is
 * read as a stream (RequestsReader) and each request checked and staged as it arrives; one
 * invalid request refuses the whole batch (400 naming its index, as Anthropic does), and the
 * batch is committed to at the end and its cargo created in bounded transactions
 * (compat/batch-intake.ts).
 */
import type { Readable } from 'node:stream';
import { Type } from 'typebox';
import { PROVIDER_LIMITS } from '../../domain/compat-limits.js';
import type { FieldError } from '../../domain/errors.js';
import { authOf } from '../../http/auth.js';
import { LoadCargoBody } from '../../http/routes/load-cargo.js';
import type { TypedScope } from '../../http/typed-scope.js';
import { TimeSlices } from '../../turns.js';
import { BatchIntake, isRefusal } from '../batch-intake.js';
import { type CompatDeps, publicBaseOf } from '../deps.js';
import { bodyChunks, compatErrors } from '../error-shapes.js';
import { newCompatId } from '../ids.js';
import { messageBatchOf } from './message-batch.js';
import { BodyProblem, RequestsReader } from './requests-reader.js';
import { COMMON_ERRORS, errorAnswer, MessageBatchSchema, SECURITY, TAGS } from './schemas.js';

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

const CreateBody = Type.Object(
  {
    requests: Type.Array(
      Type.Object({
        custom_id: Type.String({ pattern: CUSTOM_ID.source, description: 'Unique in the batch.' }),
        params: LoadCargoBody.properties.params,
      }),
      { minItems: 1, maxItems: PROVIDER_LIMITS.batchRequests },
    ),
  },
  {
    examples: [
      {
        requests: [
          {
            custom_id: 'q1',
            params: { model: 'svc-mock', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] },
          },
          {
            custom_id: 'q2',
            params: { model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'Hi' }] },
          },
        ],
      },
    ],
  },
);

/** The JSON pointer of a request's problem as Anthropic names fields: `requests.3.params.temperature`. */
function named(index: number, problem: FieldError): string {
  const path = problem.path.split('/').filter(Boolean).join('.');
  return `requests.${index}.${path}: ${problem.message}`;
}

export function registerCreateBatch(app: TypedScope, deps: CompatDeps): void {
  app.post(
    '/v1/messages/batches',
    {
      bodyLimit: deps.limits.batchBytes,
      // The body is a stream (the scope's parser) read by the handler; the schema documents it.
      validatorCompiler: () => () => true,
      schema: {
        summary: 'Create a Message Batch',
        description:
          "Anthropic's Message Batches create: each request becomes one cargo of the project, routed by its own `params.model` (any model of GET /models, so one batch may mix models and providers), with metadata `{batch_id, custom_id}`. `params` is checked as POST /cargo/load checks a body's `params`; one invalid request refuses the whole batch (400 naming its index). At most 100,000 requests and 256 MB; one request at most BARGE_BODY_LIMIT_BYTES.",
        tags: TAGS,
        security: SECURITY,
        body: CreateBody,
        response: {
          200: MessageBatchSchema,
          400: errorAnswer(
            'A request is invalid (named by its index), or the body is not a requests list.',
            'invalid_request_error',
            'requests.1.params.temperature: must be <= 1',
          ),
          402: errorAnswer(
            "The project's spend budget would be passed, or a model has no known prices and the project has a budget.",
            'billing_error',
            'This cargo would take the project past its monthly (UTC calendar month) budget of 250 USD (spent 241.5 USD, reserved by unfinished cargo 8.4 USD).',
          ),
          413: errorAnswer(
            'The body is larger than 256 MB, or one request larger than the cargo limit.',
            'request_too_large',
            'Request exceeds the maximum size of 268435456 bytes',
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const auth = authOf(request);
      const declared = Number(request.headers['content-length'] ?? 0);
      if (declared > deps.limits.batchBytes)
        throw compatErrors.tooLarge(`Request exceeds the maximum size of ${deps.limits.batchBytes} bytes`);
      const id = newCompatId('messageBatch', deps.clock.now());
      const intake = await BatchIntake.begin({ ...deps.intake, log: request.log }, auth, { id, api: 'anthropic' });
      try {
        await readRequests(request.body as unknown as Readable, intake, deps);
        await intake.publish();
      } catch (err) {
        await intake.abandon();
        if (err instanceof BodyProblem) {
          throw err.status === 413 ? compatErrors.tooLarge(err.message) : compatErrors.invalidBody(err.message);
        }
        throw err;
      }
      return messageBatchOf(
        {
          id,
          createdAt: intake.createdAt,
          endedAt: null,
          cancelRequestedAt: null,
          counts: { processing: intake.size, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
        },
        publicBaseOf(request, deps),
      );
    },
  );
}

/** Reads, checks and stages every request of the body, in order; throws the first refusal. */
async function readRequests(
  body: Readable,
  intake: BatchIntake,
  { maxRequestBytes, limits }: Pick<CompatDeps, 'maxRequestBytes' | 'limits'>,
): Promise<void> {
  const reader = new RequestsReader(maxRequestBytes);
  const seen = new Set<string>();
  let received = 0;
  const slices = new TimeSlices();
  const take = async (items: { index: number; value: unknown }[]) => {
    for (const { index, value } of items) {
      if (slices.due) await slices.pause();
      if (index >= limits.batchRequests) {
        throw new BodyProblem(400, `requests: List should have at most ${limits.batchRequests} items after validation`);
      }
      const customId = checkEnvelope(index, value, seen);
      const checked = intake.check((value as { params: unknown }).params);
      if (isRefusal(checked)) {
        const [first] = checked.problems;
        const more = checked.problems.length > 1 ? ` (and ${checked.problems.length - 1} more)` : '';
        const message = first ? `${named(index, first)}${more}` : `requests.${index}.params: is invalid`;
        throw compatErrors.requestRefused(checked.status, checked.code, message);
      }
      await intake.add(customId, checked);
    }
  };
  for await (const chunk of bodyChunks(body)) {
    received += (chunk as Buffer).length;
    if (received > limits.batchBytes)
      throw new BodyProblem(413, `Request exceeds the maximum size of ${limits.batchBytes} bytes`);
    await take(reader.write(chunk as Buffer));
  }
  await take(reader.end());
  if (intake.size === 0) {
    throw new BodyProblem(400, 'requests: List should have at least 1 item after validation, not 0');
  }
}

/** A request's `{custom_id, params}` envelope, as Anthropic checks it; its custom_id. */
function checkEnvelope(index: number, value: unknown, seen: Set<string>): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BodyProblem(400, `requests.${index}: Input should be a valid dictionary`);
  }
  for (const key of Object.keys(value)) {
    if (key !== 'custom_id' && key !== 'params') {
      throw new BodyProblem(400, `requests.${index}.${key}: Extra inputs are not permitted`);
    }
  }
  const { custom_id: customId, params } = value as { custom_id?: unknown; params?: unknown };
  if (typeof customId !== 'string') throw new BodyProblem(400, `requests.${index}.custom_id: Field required`);
  if (!CUSTOM_ID.test(customId)) {
    throw new BodyProblem(400, `requests.${index}.custom_id: String should match pattern '${CUSTOM_ID.source}'`);
  }
  if (seen.has(customId))
    throw new BodyProblem(400, `requests.${index}.custom_id: Duplicate custom_id "${customId}" in the batch`);
  seen.add(customId);
  if (params === undefined) throw new BodyProblem(400, `requests.${index}.params: Field required`);
  return customId;
}
