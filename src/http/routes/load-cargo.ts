/** POST /cargo/load: validate, route, check the target and budgets, and commit the cargo durably. */
import { hash } from 'node:crypto';
import { type Static, Type } from 'typebox';
import { storedRequestText } from '../../domain/batch-requests.js';
import { checkCargoBody, isModelAllowed, providerRequests, routePrices } from '../../domain/cargo-checks.js';
import { LIMITS } from '../../domain/cargo-request.js';
import type { Clock } from '../../domain/clock.js';
import { ApiError, errors, type FieldError } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { jsonMemberText } from '../../domain/json-text.js';
import type { RoutingTable } from '../../domain/model-routing.js';
import { Messages, ModelInputSchema, optionalModelSettings } from '../../domain/request-surface.js';
import { estimateNano, hasBudget } from '../../domain/spend.js';
import { cargoRowBytes, IdempotencyKeyTaken, type NewCargo } from '../../store/cargo/insert.js';
import type { Database } from '../../store/database.js';
import { findIdempotentCargo } from '../../store/idempotency-keys.js';
import { type AuthContext, authOf } from '../auth.js';
import type { DiskGuard } from '../disk-guard.js';
import { rawBodyOf } from '../request-body.js';
import { apiKeySecurity, authErrorResponses, ErrorBody } from '../schemas.js';
import type { SpendBudget } from '../spend-budget.js';
import type { StorageBudget } from '../storage-budget.js';
import type { TypedScope } from '../typed-scope.js';
import { Callback, checkTarget, type TargetRules, targetAddressProblems } from './delivery-target.js';

const Params = Type.Object(
  {
    model: Type.String({
      minLength: 1,
      maxLength: 2048,
      description:
        'A model id of GET /models (such as svc-mock), a provider-qualified name (anthropic/<model>, openai/<model>, bedrock/<model id>) or a Bedrock model ARN.',
    }),
    messages: Type.Optional(Messages),
    ...optionalModelSettings,
  },
  {
    additionalProperties: false,
    description: 'The model request. With `records`, holds `model` and settings shared by every record.',
  },
);

const BatchRecord = Type.Object(
  {
    recordId: Type.String({ minLength: 1, maxLength: LIMITS.recordIdMaxLength }),
    modelInput: ModelInputSchema,
  },
  { additionalProperties: false },
);

export const LoadCargoBody = Type.Object(
  {
    params: Params,
    records: Type.Optional(
      Type.Array(BatchRecord, {
        minItems: 1,
        maxItems: LIMITS.maxRecords,
        description: 'Several requests in one cargo; each is sent to the provider on its own.',
      }),
    ),
    callback_url: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: LIMITS.callbackUrlMaxLength,
        description: 'Webhook target (absolute URL). Omit for mailbox-only cargo.',
      }),
    ),
    callback: Type.Optional(Callback),
    metadata: Type.Optional(
      Type.Unsafe<Record<string, unknown> | null>({
        type: ['object', 'null'],
        description:
          'Opaque data echoed verbatim: at most 50 entries, keys ≤ 128 characters, values ≤ 2,048, 4 KB in all.',
      }),
    ),
    result_ttl_seconds: Type.Integer({
      minimum: LIMITS.ttlMinSeconds,
      maximum: LIMITS.ttlMaxSeconds,
      default: LIMITS.defaultTtlSeconds,
      description: 'How long the stored result is kept: 1 hour to 30 days (default).',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        params: {
          model: 'svc-mock',
          max_tokens: 256,
          messages: [{ role: 'user', content: 'Summarize the plot of Hamlet in one sentence.' }],
        },
        callback_url: 'https://example.com/hooks/barge',
        metadata: { ticket: 'T-1234' },
      },
      {
        params: {
          model: 'claude-sonnet-4-5',
          max_tokens: 512,
          system: [
            {
              type: 'text',
              text: 'You classify support tickets. <a long shared instruction>',
              cache_control: { type: 'ephemeral' },
            },
          ],
          tools: [
            {
              name: 'classify',
              description: 'Records the ticket category.',
              input_schema: {
                type: 'object',
                properties: { category: { type: 'string', enum: ['billing', 'bug', 'other'] } },
                required: ['category'],
              },
            },
          ],
          tool_choice: { type: 'tool', name: 'classify' },
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
                { type: 'text', text: 'My invoice is wrong (screenshot attached).' },
              ],
            },
          ],
        },
      },
      {
        params: { model: 'svc-mock' },
        records: [
          { recordId: 'q1', modelInput: { max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] } },
          { recordId: 'q2', modelInput: { messages: [{ role: 'user', content: 'Goodbye' }] } },
        ],
      },
    ],
  },
);
/** `params` as accepted (test/http/sdk-params.test.ts proves the SDK's create params of the listed fields fit). */
export type LoadCargoParams = Static<typeof Params>;

export const LoadCargoResponse = Type.Object(
  {
    cargo_id: Type.String(),
    status: Type.Literal('success'),
    message: Type.String(),
  },
  {
    examples: [{ cargo_id: 'crg_01jd5q3k8m9x2v4w6y8z0a1b2c', status: 'success', message: 'Cargo loaded successfully' }],
  },
);
type LoadCargoResponse = Static<typeof LoadCargoResponse>;

/** Documents the header; its rule is checked in the handler, so a bad key is a 400 about the header, not the body. */
const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes retries safe: 1 to 255 printable ASCII characters, scoped to the project and kept 24 hours. The same key with the same body answers the first answer (the same cargo_id) and creates nothing; with another body, 422 idempotency_key_reused.',
      examples: ['order-4711-attempt'],
    }),
  ),
});

export interface LoadCargoDeps {
  clock: Clock;
  /** Where Idempotency-Keys are looked up (store/idempotency-keys.ts). */
  database: Database;
  /** The catalog and the providers enabled here. */
  models: RoutingTable;
  allowHttpCallbacks: boolean;
  writeCargo: (row: NewCargo) => Promise<void>;
  /** The rules of a `callback` target, with the project's connections. */
  targets: TargetRules;
  /** The project's storage budget, and the service's storage floor (null: nothing to guard). */
  storage: { budget: StorageBudget; disk: DiskGuard | null };
  /** Whether models the catalog does not list are accepted (BARGE_ALLOW_UNLISTED_MODELS). */
  policy: { allowUnlistedModels: boolean };
  /** The project's spend budgets. */
  spend: SpendBudget;
}

export function registerLoadCargo(app: TypedScope, deps: LoadCargoDeps): void {
  app.post(
    '/cargo/load',
    {
      // Before the body is read: a project over its budget, or a service short of storage, does
      // not get to send 10 MiB first.
      onRequest: async (request) => {
        await deps.storage.disk?.check(0);
        await deps.storage.budget.check(authOf(request), 0);
      },
      schema: {
        summary: 'Submit a model request for batch processing',
        description:
          'Validates and stores the request durably (a 200 means it is on disk) and returns its cargo id at once. Results arrive by webhook, object delivery, and always in the mailbox.',
        tags: ['cargo'],
        security: apiKeySecurity,
        headers: IdempotencyHeaders,
        body: LoadCargoBody,
        response: {
          200: LoadCargoResponse,
          400: {
            ...ErrorBody,
            description:
              "Invalid request body (or Idempotency-Key header); `errors` names every invalid field: an unknown model, a model whose provider is not enabled here, `max_tokens` above the model's output limit, a parameter the model or its provider does not take, a part of the request its route cannot take (such as tools on Bedrock), a server tool, more than 4 cache_control marks, a tool_choice naming no tool, a thinking budget not below max_tokens.",
            examples: [
              {
                detail: 'Invalid Idempotency-Key header: use 1 to 255 printable ASCII characters.',
                errors: [{ path: 'Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' }],
              },
              {
                detail: 'Invalid request body: /params/temperature must be <= 1.',
                errors: [{ path: '/params/temperature', message: 'must be <= 1' }],
              },
              {
                detail:
                  "Invalid request body: /params/model 'claude-sonnet-4-5' is served by anthropic or bedrock, and none of these providers is enabled here.",
                errors: [
                  {
                    path: '/params/model',
                    message:
                      "'claude-sonnet-4-5' is served by anthropic or bedrock, and none of these providers is enabled here",
                  },
                ],
              },
              {
                detail:
                  'Invalid request body: /params/tools is not accepted by the bedrock route: Bedrock batch inference has no tool use.',
                errors: [
                  {
                    path: '/params/tools',
                    message: 'is not accepted by the bedrock route: Bedrock batch inference has no tool use',
                  },
                ],
              },
              {
                detail:
                  "Invalid request body: /params/max_tokens is 100000, above the 64000 output tokens 'claude-sonnet-4-5' can produce.",
                errors: [
                  {
                    path: '/params/max_tokens',
                    message: "is 100000, above the 64000 output tokens 'claude-sonnet-4-5' can produce",
                  },
                ],
              },
            ],
          },
          402: {
            ...ErrorBody,
            description:
              "The project's spend budget: this cargo's estimate would take `spent_usd + reserved_usd` past a monthly or daily budget (`budget_exceeded`), or the model has no known prices and the project has a budget (`unpriced_model`). Nothing is stored.",
            examples: [
              {
                detail: {
                  error: 'budget_exceeded',
                  message:
                    'This cargo would take the project past its monthly (UTC calendar month) budget of 250 USD (spent 241.5 USD, reserved by unfinished cargo 8.4 USD).',
                  period: 'month',
                  budget_usd: 250,
                  spent_usd: 241.5,
                  reserved_usd: 8.4,
                },
              },
              {
                detail: {
                  error: 'unpriced_model',
                  message:
                    "The model 'bedrock/arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc' has no known prices, and this project has a spend budget: it cannot be submitted.",
                  model: 'bedrock/arn:aws:bedrock:us-east-1:123456789012:provisioned-model/abc',
                },
              },
            ],
          },
          413: { ...ErrorBody, description: 'Body larger than the configured limit.' },
          422: {
            ...ErrorBody,
            description:
              'The object-delivery target is not usable: `connection_not_found`, `invalid_key_prefix` or `target_not_allowed`; or the Idempotency-Key came with another body in the last 24 hours: `idempotency_key_reused`.',
            examples: [
              {
                detail: {
                  error: 'idempotency_key_reused',
                  message:
                    'This Idempotency-Key was used in the last 24 hours with a different request body; use a new key for a new request.',
                },
              },
              { detail: { error: 'connection_not_found', message: "No connection 'conn_x' in this project." } },
              {
                detail: {
                  error: 'invalid_key_prefix',
                  message: "key_prefix 'results' must end with '/'.",
                },
              },
              {
                detail: {
                  error: 'target_not_allowed',
                  message: "Bucket 'arn:aws:s3:::other' is not on the allow-list of connection 'conn_x'.",
                },
              },
            ],
          },
          ...authErrorResponses,
          403: {
            ...ErrorBody,
            description:
              "The project is deactivated, or the model is outside the project's allowlist (`barge project set-models`): `model_not_allowed`.",
            examples: [
              { detail: 'Project is inactive.' },
              {
                detail: {
                  error: 'model_not_allowed',
                  message: "This project may not use the model 'claude-opus-4-1'.",
                  model: 'claude-opus-4-1',
                },
              },
            ],
          },
          429: {
            ...ErrorBody,
            description:
              "Rate limit, too many failed authentications from this address, or the project's storage budget (bytes accepted per UTC day, bytes held) is spent; see Retry-After.",
          },
          503: { ...ErrorBody, description: 'The service is low on storage (or busy); see Retry-After.' },
        },
      },
    },
    async (request) => {
      const auth = authOf(request);
      // Stored as the client wrote it (key order, number literals), not as JSON.stringify would.
      const rawBody = rawBodyOf(request);
      const idempotency = idempotencyOf(request.headers['idempotency-key'], rawBody ?? JSON.stringify(request.body));
      try {
        return await loadCargo(deps, auth, request.body, rawBody, idempotency);
      } catch (err) {
        // A retry is answered what its key was first used for, whatever this try was refused for
        // (the first passed every check): only a refused request reads its key, a new one costs
        // no read (store/idempotency-keys.ts). A lookup that fails leaves this refusal standing.
        const first = idempotency
          ? await answerForKey(deps, auth.projectId, idempotency).catch((lookup: unknown) => {
              throw lookup instanceof ApiError ? lookup : err;
            })
          : undefined;
        if (first) return first;
        // The key's holder did not commit after all (its group failed), or the key expired since:
        // a retry finds the key free, or its cargo.
        if (err instanceof IdempotencyKeyTaken) throw errors.serverBusy(1);
        throw err;
      }
    },
  );
}

/** Checks one cargo and writes it; resolves once it is committed. */
async function loadCargo(
  deps: LoadCargoDeps,
  auth: AuthContext,
  body: Static<typeof LoadCargoBody>,
  rawBody: string | undefined,
  idempotency: { key: string; bodySha256: string } | null,
): Promise<LoadCargoResponse> {
  const metadataJson =
    body.metadata == null
      ? null
      : ((rawBody === undefined ? undefined : jsonMemberText(rawBody, 'metadata')) ?? JSON.stringify(body.metadata));
  const checked = checkCargoBody(
    {
      params: body.params,
      records: body.records,
      metadata: body.metadata ?? undefined,
      metadataJson: metadataJson ?? undefined,
    },
    { models: deps.models, allowUnlistedModels: deps.policy.allowUnlistedModels },
  );
  const { problems, route } = checked;
  if (body.callback_url != null) problems.push(...checkCallbackUrl(body.callback_url, deps.allowHttpCallbacks));
  if (body.callback) problems.push(...targetAddressProblems(body.callback, deps.targets));
  if (problems.length > 0 || route === null) throw errors.invalidBody(problems);
  // The project's model policy (403), then its spend budget (402): only a valid body gets here.
  if (!isModelAllowed(auth.allowedModels, body.params.model, route)) {
    throw errors.modelNotAllowed(body.params.model);
  }
  const target = body.callback ? await checkTarget(deps.targets, auth.projectId, body.callback) : null;

  const now = deps.clock.now();
  const requests = providerRequests(body);
  // Estimated only for a project with a budget: the others reserve nothing and pay no walk.
  const budgets = deps.spend.budgetsOf(auth);
  let estimate = 0;
  if (hasBudget(budgets)) {
    const prices = routePrices(route);
    if (prices === null) throw errors.unpricedModel(body.params.model);
    estimate = estimateNano(prices, requests);
  }
  const request_json = storedRequestText(requests);
  const cargoId = newId('crg', now);
  const row: NewCargo = {
    id: cargoId,
    project_id: auth.projectId,
    status: 'pending',
    model: body.params.model,
    provider: route.provider,
    provider_model: route.providerModel,
    request: request_json,
    request_count: requests.length,
    is_records: body.records ? 1 : 0,
    request_bytes: Buffer.byteLength(request_json),
    metadata: metadataJson,
    result_ttl_seconds: body.result_ttl_seconds,
    callback_url: body.callback_url ?? null,
    callback: target ? JSON.stringify(target) : null,
    created_at: now,
    updated_at: now,
    reserved_nusd: estimate,
  };
  if (idempotency) row.idempotency = idempotency;
  const bytes = cargoRowBytes(row);
  await deps.storage.disk?.check(bytes);
  await deps.storage.budget.check(auth, bytes);
  const reservation = hasBudget(budgets) ? await deps.spend.check(auth.projectId, budgets, estimate) : null;
  try {
    await deps.writeCargo(row);
  } catch (err) {
    if (reservation) deps.spend.settle(reservation, false);
    throw err;
  }
  deps.storage.budget.accepted(auth.projectId, bytes, now);
  if (reservation) deps.spend.settle(reservation, true);
  return loaded(cargoId);
}

function loaded(cargoId: string): LoadCargoResponse {
  return { cargo_id: cargoId, status: 'success', message: 'Cargo loaded successfully' };
}

// Printable ASCII (decisions.md, "Client operations").
const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** The request's Idempotency-Key and its body's hash, or null without the header; 400 when malformed. */
function idempotencyOf(
  header: string | string[] | undefined,
  bodyText: string,
): { key: string; bodySha256: string } | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header)) throw errors.invalidIdempotencyKey();
  return { key: header, bodySha256: hash('sha256', bodyText, 'hex') };
}

/**
 * What a request with a key the project used in the last 24 hours is answered: the first answer
 * (the same cargo) for the same body, 422 for another; undefined when the key is unused.
 */
async function answerForKey(
  deps: LoadCargoDeps,
  projectId: string,
  idempotency: { key: string; bodySha256: string },
): Promise<LoadCargoResponse | undefined> {
  const first = await findIdempotentCargo(deps.database, { projectId, key: idempotency.key, now: deps.clock.now() });
  if (!first) return undefined;
  if (first.bodySha256 !== idempotency.bodySha256) throw errors.idempotencyKeyReused();
  return loaded(first.cargoId);
}

function checkCallbackUrl(raw: string, allowHttp: boolean): FieldError[] {
  // The URL parser drops or escapes these, but the text is stored as sent: PostgreSQL refuses a
  // NUL in text (failing the whole group commit), and a line break has no business in a target.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
  if (/[\u0000-\u0020\u007f]/.test(raw)) {
    return [{ path: '/callback_url', message: 'must not contain spaces or control characters' }];
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return [{ path: '/callback_url', message: 'must be an absolute URL' }];
  }
  if (url.protocol === 'https:' || (allowHttp && url.protocol === 'http:')) return [];
  return [{ path: '/callback_url', message: allowHttp ? 'must be an http or https URL' : 'must be an https URL' }];
}
