/**
 * What every operation shares: its dependencies, and how it answers. An operation is a plain
 * function (the admin rules of the CLI today, of an admin API later) that gets everything it uses
 * passed in and returns `Result<T>`: the value, or an OperationError from the catalogue below with
 * a stable `code`. A refusal is a value; only a bug (or the database failing) throws.
 */
import type { Clock } from '../domain/clock.js';
import type { Database } from '../store/database.js';

/** The dependencies of most operations; those that need configuration add the part they read. */
export interface OperationDeps {
  database: Database;
  clock: Clock;
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: OperationError };

/** Every refusal an operation can answer with: stable, for callers to branch on and to map to HTTP. */
export type OperationErrorCode =
  // projects
  | 'invalid_slug'
  | 'slug_taken'
  | 'project_not_found'
  | 'invalid_email'
  | 'invalid_byte_budget'
  | 'invalid_model_pattern'
  | 'invalid_spend_budget'
  | 'invalid_rate_limit'
  // API keys
  | 'invalid_key_name'
  | 'invalid_expiry'
  | 'api_key_not_found'
  // admin tokens
  | 'invalid_token_name'
  | 'admin_token_not_found'
  // connections
  | 'invalid_access'
  | 'invalid_role_arn'
  | 'endpoint_with_role'
  | 'invalid_region'
  | 'invalid_allow_entry'
  | 'invalid_endpoint'
  | 'incomplete_credentials'
  | 'secret_key_missing'
  | 'empty_secret'
  | 'connection_not_found'
  // capability checks
  | 'invalid_target'
  | 'invalid_bucket'
  | 'invalid_key_prefix'
  | 'invalid_message_target'
  | 'target_not_allowed'
  | 'check_too_soon'
  // redelivery
  | 'cargo_not_found'
  | 'result_not_ready'
  | 'result_purged'
  | 'no_delivery_requested'
  | 'delivery_in_progress'
  // bulk recovery
  | 'invalid_time'
  | 'invalid_window'
  | 'invalid_recovery_status'
  | 'recovery_not_found'
  | 'recovery_finished'
  // usage
  | 'invalid_usage_range'
  // provider checks
  | 'unknown_provider'
  | 'provider_not_enabled';

export interface OperationError {
  code: OperationErrorCode;
  /** For people, naming inputs as the operation's input does (snake_case), never a CLI flag. */
  message: string;
  /**
   * The input at fault, when one is: its name in the operation's input, the value given and what
   * is wrong with it (null: nothing more to say). Lets an adapter name it its own way.
   */
  input?: { name: string; value: string; problem: string | null };
  /** check_too_soon: how long until the next check may run. */
  retryAfterMs?: number;
}

export const succeed = <T>(value: T): Result<T> => ({ ok: true, value });

export const refuse = <T = never>(error: OperationError): Result<T> => ({ ok: false, error });

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** An input refused: `invalid <name> '<value>': <problem>`. */
function invalid(code: OperationErrorCode, name: string, value: string, problem: string | null): OperationError {
  return {
    code,
    message: `invalid ${snakeCase(name)} '${value}'${problem === null ? '' : `: ${problem}`}`,
    input: { name, value, problem },
  };
}

/** The catalogue: every refusal, made in one place so its code and wording stay together. */
export const refusals = {
  invalidSlug: (slug: string) =>
    invalid('invalid_slug', 'slug', slug, 'use lowercase letters, digits and single hyphens (at most 63 characters)'),
  slugTaken: (slug: string): OperationError => ({ code: 'slug_taken', message: `project '${slug}' already exists` }),
  projectNotFound: (slug: string): OperationError => ({ code: 'project_not_found', message: `no project '${slug}'` }),
  invalidEmail: (email: string): OperationError => ({
    ...invalid('invalid_email', 'email', email, null),
    message: `invalid e-mail address '${email}'`,
  }),
  invalidByteBudget: (name: 'dailyBytes' | 'heldBytes', value: string) =>
    invalid('invalid_byte_budget', name, value, 'use a whole number of bytes (0 or more), or default'),
  invalidModelPattern: (pattern: string, problem: string) =>
    invalid('invalid_model_pattern', 'allow', pattern, problem),
  invalidSpendBudget: (name: 'monthlyUsd' | 'dailyUsd', value: string, problem: string) =>
    invalid('invalid_spend_budget', name, value, problem),
  invalidRateLimit: (value: string) =>
    invalid(
      'invalid_rate_limit',
      'rateLimitMax',
      value,
      'use a whole number of requests per window (1 or more), or default',
    ),

  emptyKeyName: (name: string): OperationError => ({
    ...invalid('invalid_key_name', 'name', name, 'must not be empty'),
    message: 'the key name must not be empty',
  }),
  invalidExpiry: (raw: string, problem: string) => invalid('invalid_expiry', 'expiresAt', raw, problem),
  apiKeyNotFound: (keyId: string): OperationError => ({ code: 'api_key_not_found', message: `no key '${keyId}'` }),

  emptyTokenName: (name: string): OperationError => ({
    ...invalid('invalid_token_name', 'name', name, 'must not be empty'),
    message: 'the token name must not be empty',
  }),
  adminTokenNotFound: (id: string): OperationError => ({
    code: 'admin_token_not_found',
    message: `no admin token '${id}'`,
  }),

  invalidAccess: (): OperationError => ({
    code: 'invalid_access',
    message: 'give either a role ARN, or static credentials (an access key id and a secret access key)',
  }),
  invalidRoleArn: (arn: string) =>
    invalid('invalid_role_arn', 'roleArn', arn, 'use arn:aws:iam::<12-digit account>:role/<name>'),
  endpointWithRole: (): OperationError => ({
    code: 'endpoint_with_role',
    message: 'an endpoint goes with static credentials; a role connection uses BARGE_AWS_S3_ENDPOINT',
  }),
  invalidRegion: (region: string) => invalid('invalid_region', 'region', region, null),
  invalidAllowEntry: (entry: string, problem: string) => invalid('invalid_allow_entry', 'allow', entry, problem),
  invalidEndpoint: (endpoint: string) =>
    invalid('invalid_endpoint', 'endpoint', endpoint, 'use an http(s) URL without credentials or query'),
  incompleteCredentials: (): OperationError => ({
    code: 'incomplete_credentials',
    message: 'static credentials need both an access key id and a secret access key',
  }),
  secretKeyMissing: (): OperationError => ({
    code: 'secret_key_missing',
    message: 'BARGE_SECRET_KEY must be set to store static credentials (32 bytes, e.g. from `openssl rand -hex 32`)',
  }),
  emptySecret: (): OperationError => ({ code: 'empty_secret', message: 'the secret access key is empty' }),
  connectionNotFound: (id: string): OperationError => ({
    code: 'connection_not_found',
    message: `no connection '${id}'`,
  }),

  invalidTarget: (): OperationError => ({
    code: 'invalid_target',
    message: 'give one target: a bucket ARN, a queue URL, a topic ARN or an event bus ARN',
  }),
  invalidBucket: (arn: string, problem: string) => invalid('invalid_bucket', 'bucket', arn, problem),
  invalidKeyPrefix: (prefix: string, problem: string) => invalid('invalid_key_prefix', 'keyPrefix', prefix, problem),
  /** `name` is the target's input (queueUrl, topicArn, eventBusArn, detailType). */
  invalidMessageTarget: (name: string, value: string, problem: string): OperationError => ({
    code: 'invalid_message_target',
    message: `invalid ${snakeCase(name)}: ${problem}`,
    input: { name, value, problem },
  }),
  /** `target` names it, e.g. `bucket 'arn:aws:s3:::x'` or `'arn:aws:sqs:…'`. */
  targetNotAllowed: (target: string, connectionId: string): OperationError => ({
    code: 'target_not_allowed',
    message: `${target} is not on the allow-list of ${connectionId}`,
  }),
  /** `name` is `from` or `to`: the day at fault, or the one the range is measured from. */
  invalidUsageRange: (name: 'from' | 'to', value: string, problem: string) =>
    invalid('invalid_usage_range', name, value, problem),

  cargoNotFound: (cargoId: string): OperationError => ({ code: 'cargo_not_found', message: `no cargo '${cargoId}'` }),
  /** `name` is `since` or `until`. */
  invalidTime: (name: 'since' | 'until', value: string) =>
    invalid('invalid_time', name, value, 'use an ISO 8601 date or date-time, e.g. 2026-11-22T09:00:00Z'),
  invalidWindow: (since: string, until: string): OperationError => ({
    code: 'invalid_window',
    message: `the window is empty: since (${since}) must be before until (${until}), and before now`,
  }),
  invalidRecoveryStatus: (status: string, allowed: readonly string[]) =>
    invalid('invalid_recovery_status', 'status', status, `use ${allowed.join(' or ')}`),
  recoveryNotFound: (id: string): OperationError => ({ code: 'recovery_not_found', message: `no recovery '${id}'` }),
  recoveryFinished: (id: string): OperationError => ({
    code: 'recovery_finished',
    message: `recovery '${id}' has completed: there is nothing left to cancel`,
  }),

  /** `names`: the providers there are, as model routes name them. */
  unknownProvider: (name: string, names: readonly string[]): OperationError => ({
    code: 'unknown_provider',
    message: `no provider '${name}': use one of ${names.join(', ')}`,
  }),
  /** `settings`: what enables it (decisions.md), all of them needed. */
  providerNotEnabled: (name: string, settings: readonly string[]): OperationError => ({
    code: 'provider_not_enabled',
    message: `provider '${name}' is not enabled in this deployment: set ${settings.join(' and ')} to enable it`,
  }),

  checkTooSoon: (
    connectionId: string,
    intervalMs: number,
    waitMs: number,
    what: 'write a real object' | 'send a real message',
  ): OperationError => ({
    code: 'check_too_soon',
    message: `a capability check of ${connectionId} ran less than ${intervalMs / 1000} s ago (checks ${what}): wait ${Math.ceil(waitMs / 1000)} s`,
    retryAfterMs: waitMs,
  }),
};
