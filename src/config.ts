/** Loads the configuration from the environment: every setting checked against its bounds, with its default. */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { type CompatLimits, PROVIDER_LIMITS } from './domain/compat-limits.js';
import {
  type CatalogEndpoint,
  httpBaseUrl,
  type ModelCatalog,
  ModelCatalogError,
  type ProviderName,
  parseModelCatalog,
  REALTIME_PROVIDER,
} from './domain/model-catalog.js';
import type { EnabledRoutes } from './domain/model-routing.js';
import { BUCKET_NAME_RULES, bucketNameProblem } from './domain/object-target.js';
import { DEFAULT_RETRY_DELAYS_MS, parseRetryDelays } from './domain/retry-schedule.js';
import { parseSecretKey } from './domain/secret-box.js';
import { packageRoot } from './package-root.js';

/**
 * The one configuration object. Everything reads it from here, passed in; no other module looks at
 * process.env. A bad value stops the process with a message that names the variable.
 */
export interface Config {
  env: 'development' | 'production';
  host: string;
  port: number;
  /** `sqlite:<path>` / a plain file path, or `postgres://...`. */
  databaseUrl: string;
  bodyLimitBytes: number;
  /** A request (headers and body) must arrive within this, and a connection idle this long is closed. */
  requestTimeoutMs: number;
  /** Connections the API holds open at once; more are refused at accept (slow-client floods). */
  maxConnections: number;
  /** Bytes of request bodies held at once; a body past it is answered 503 with Retry-After. */
  inFlightBodyBytes: number;
  /** Redis for the shared rate-limit counts (exact across processes); null: see rate-limit.ts. */
  redisUrl: string | null;
  metrics: {
    /** When set, GET /metrics needs `Authorization: Bearer <token>`. */
    token: string | null;
    /** `--role worker` has no API: it serves /health and /metrics on this port when set. */
    workerPort: number | null;
  };
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  rateLimit: { max: number; windowMs: number };
  /** How often the group-commit writer flushes queued submissions, at most. */
  commitIntervalMs: number;
  /** How long a validated API key stays in the in-process cache before it is looked up again. */
  keyCacheTtlMs: number;
  /**
   * Failed authentications (401) one client address may have per window, per API process, before
   * its requests are refused with 429 ahead of any key lookup (src/http/auth-failures.ts).
   */
  authFailures: { max: number; windowMs: number };
  /** Per-project storage budget and the disk guard (src/http/storage-budget.ts, disk-guard.ts). */
  storage: StorageConfig;
  /** Accept plain-http callback URLs and deliver to private addresses (development, tests). */
  allowPrivateCallbacks: boolean;
  /** Accept provider-qualified names and ARNs the catalog does not list (development). */
  allowUnlistedModels: boolean;
  /** The monthly spend budget (USD) of every project on the default; null: none. */
  defaultMonthlyBudgetUsd: number | null;
  pipeline: {
    /** Requests per batch at most, below each provider's own limit. */
    batchMaxSize: number;
    /** Wait before a partial batch is flushed; null keeps each provider's default. */
    batchMaxWaitMs: number | null;
    leaseMs: number;
    concurrency: number;
    providerConcurrency: number;
    /** A provider call that makes no progress for this long is abandoned (src/providers/call-deadline.ts). */
    providerCallTimeoutMs: number;
    workerId: string | null;
  };
  /** How long a svc-mock job runs. */
  mockLatencyMs: number;
  /** The model catalog: BARGE_MODELS_FILE, else the shipped models/catalog.json. */
  models: ModelCatalog;
  /** The real providers; each is enabled when its settings are present (null: not enabled). */
  providers: ProvidersConfig;
  delivery: {
    /** Waits before each retry, from the previous attempt's start (BARGE_WEBHOOK_RETRY_DELAYS_MS). */
    retryDelaysMs: number[];
    /** A webhook receiver must answer within this. */
    webhookTimeoutMs: number;
    maxInFlight: number;
    maxPerHost: number;
  };
  /** Object delivery to customers' buckets (callback type `object_store`). */
  objectStore: ObjectStoreConfig;
  /** Endpoint overrides of the message targets (tests, compatible services); null: AWS's own. */
  awsEndpoints: AwsEndpoints;
  /** Encrypts connection secrets at rest (BARGE_SECRET_KEY, 32 bytes); null: none can be stored. */
  secretKey: Buffer | null;
  /** The service's public address, for links it hands out (a delivered object's `result_url`). */
  publicBaseUrl: string;
  /**
   * BARGE_PUBLIC_BASE_URL as set, null when unset: URLs the provider-compatible endpoints hand out
   * (`results_url`) start with it, else with the scheme and Host of the request that asked.
   */
  explicitPublicBaseUrl: string | null;
  /** The provider-compatible endpoints' limits (BARGE_COMPAT_*), at most the providers' own. */
  compatLimits: CompatLimits;
  /** Outgoing mail (a connection's incident mail); null url: no mail is sent. */
  smtp: { url: string | null; from: string };
  /** Dashboard sessions (src/http/admin/auth.ts): how long one lasts unused, and at most. */
  dashboardSessions: { idleMs: number; absoluteMs: number };
}

export interface StorageConfig {
  /** Bytes of cargo a project may have accepted per UTC day (a project may have its own). */
  dailyBytes: number;
  /** Bytes a project may hold: requests, metadata and results not yet purged (a project may have its own). */
  heldBytes: number;
  /** How stale an API process's view of a project's counters may be, at most. */
  checkMs: number;
  /** SQLite: new cargo are refused while the database's file system has less free space than this. */
  minFreeDiskBytes: number;
  /** PostgreSQL: new cargo are refused while the database is this large; null: no limit. */
  maxDatabaseBytes: number | null;
}

export interface ObjectStoreConfig {
  /** Region for STS and for buckets whose region S3 does not report (S3-compatible stores). */
  region: string;
  /** Overrides of the AWS endpoints: tests, and S3-compatible stores for every connection. */
  s3Endpoint: string | null;
  stsEndpoint: string | null;
  /** Path-style addressing (`endpoint/bucket/key`), which most S3-compatible stores need. */
  forcePathStyle: boolean;
  /** Lifetime of assumed-role sessions; cached until shortly before they expire. */
  sessionSeconds: number;
  /** Budget of one delivery attempt, throttling backoff included. */
  attemptTimeoutMs: number;
  /** Backoff on storage throttling (SlowDown, 503): the first delay's cap and how many retries. */
  throttleBaseDelayMs: number;
  throttleRetries: number;
  /**
   * The service's own AWS credentials. Null (the default) uses the standard AWS credential chain
   * (environment, shared files, instance or task role); set only by code, e.g. tests.
   */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | null;
  /**
   * The service's own AWS identity as customers' trust policies name it (BARGE_AWS_PRINCIPAL_ARN),
   * for the policies the admin API hands out; null: they hold a placeholder instead.
   */
  principalArn: string | null;
}

/** The provider settings of decisions.md. Keys are never logged or printed. */
export interface ProvidersConfig {
  /** Enabled by ANTHROPIC_API_KEY. */
  anthropic: { apiKey: string; baseUrl: string; version: string } | null;
  /** Enabled by OPENAI_API_KEY. */
  openai: { apiKey: string; baseUrl: string } | null;
  /** Enabled by BARGE_BEDROCK_ROLE_ARN and BARGE_BEDROCK_S3_URI together; credentials from the AWS chain. */
  bedrock: BedrockConfig | null;
  /**
   * The catalog's endpoints that are enabled (its api_key_env unset in the catalog, or set in the
   * environment), by name; null when none is.
   */
  openaiCompatible: { endpoints: Readonly<Record<string, EndpointConfig>> } | null;
}

/** A catalog endpoint with its key read from the environment (null: it takes none). */
export interface EndpointConfig extends CatalogEndpoint {
  apiKey: string | null;
}

export interface BedrockConfig {
  roleArn: string;
  s3Uri: string;
  region: string;
  endpoint: string | null;
  /**
   * BARGE_BEDROCK_MIN_RECORDS (default 100): Bedrock refuses a job with fewer records, so smaller
   * batches are padded. One figure for every model: set it to the largest minimum among the models
   * routed to Bedrock (Service Quotas, "Minimum number of records per batch inference job").
   */
  minRecords: number;
  /** BARGE_BEDROCK_MAX_RECORDS (default 50,000): records per job (and per file: one file a job). */
  maxRecords: number;
  /** BARGE_BEDROCK_MAX_JOBS (default 10): jobs in progress at once; more batches wait their turn. */
  maxJobs: number;
}

/**
 * What this deployment routes to: svc-mock always, each real provider whose settings are present,
 * and the `openai-compatible` endpoints that are enabled.
 */
export function enabledRoutes(providers: ProvidersConfig): EnabledRoutes {
  const enabled = new Set<ProviderName>(['mock']);
  if (providers.anthropic) enabled.add('anthropic');
  if (providers.openai) enabled.add('openai');
  if (providers.bedrock) enabled.add('bedrock');
  if (providers.openaiCompatible) enabled.add(REALTIME_PROVIDER);
  return { providers: enabled, endpoints: new Set(Object.keys(providers.openaiCompatible?.endpoints ?? {})) };
}

/** The settings that enable each batch provider (decisions.md). */
const PROVIDER_ENABLED_BY = Object.freeze({
  anthropic: ['ANTHROPIC_API_KEY'],
  openai: ['OPENAI_API_KEY'],
  bedrock: ['BARGE_BEDROCK_ROLE_ARN', 'BARGE_BEDROCK_S3_URI'],
});

/**
 * The settings that enable a provider (none for svc-mock), for messages and views that say how to
 * turn one on: for `openai-compatible`, the key variables its catalog's endpoints name (an
 * endpoint with none is always on), or BARGE_MODELS_FILE when the catalog has no endpoint.
 */
export function providerEnabledBy(config: Pick<Config, 'models'>, name: ProviderName): readonly string[] {
  if (name === 'mock') return [];
  if (name !== REALTIME_PROVIDER) return PROVIDER_ENABLED_BY[name];
  const endpoints = Object.values(config.models.endpoints);
  if (endpoints.length === 0) return ['BARGE_MODELS_FILE'];
  return [...new Set(endpoints.flatMap((e) => (e.apiKeyEnv === null ? [] : [e.apiKeyEnv])))];
}

export interface AwsEndpoints {
  sqs: string | null;
  sns: string | null;
  eventBridge: string | null;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

export function loadConfig(source: Env = process.env): Config {
  const read = (name: string) => {
    const value = source[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const env = oneOf(read, 'BARGE_ENV', ['development', 'production'], 'development');
  const host = hostName(read('HOST') ?? (env === 'development' ? '127.0.0.1' : '0.0.0.0'));
  const models = modelCatalog(read('BARGE_MODELS_FILE'));
  return {
    env,
    // Development listens on loopback unless told otherwise: its conveniences are for this machine.
    host,
    port: integer(read, 'PORT', 8080, 0, 65535),
    databaseUrl: databaseUrl(read('BARGE_DATABASE_URL') ?? 'sqlite:./data/barge.sqlite'),
    bodyLimitBytes: integer(read, 'BARGE_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 ** 3),
    requestTimeoutMs: integer(read, 'BARGE_REQUEST_TIMEOUT_MS', 60_000, 1000, 3_600_000),
    maxConnections: integer(read, 'BARGE_MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    inFlightBodyBytes: integer(read, 'BARGE_INFLIGHT_BODY_BYTES', 128 * 1024 * 1024, 1024, 64 * 1024 ** 3),
    redisUrl: redisUrl(read('BARGE_REDIS_URL')),
    metrics: {
      token: metricsToken(read('BARGE_METRICS_TOKEN')),
      workerPort: read('BARGE_METRICS_PORT') === undefined ? null : integer(read, 'BARGE_METRICS_PORT', 0, 0, 65535),
    },
    logLevel: oneOf(read, 'BARGE_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    rateLimit: {
      max: integer(read, 'BARGE_RATE_LIMIT_MAX', 6000, 1, 1e9),
      windowMs: integer(read, 'BARGE_RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    },
    commitIntervalMs: integer(read, 'BARGE_COMMIT_INTERVAL_MS', 1, 0, 1000),
    keyCacheTtlMs: integer(read, 'BARGE_KEY_CACHE_TTL_MS', 10_000, 0, 3_600_000),
    authFailures: {
      max: integer(read, 'BARGE_AUTH_FAILURE_LIMIT', 600, 1, 1e9),
      windowMs: integer(read, 'BARGE_AUTH_FAILURE_WINDOW_MS', 60_000, 1000, 86_400_000),
    },
    storage: {
      dailyBytes: integer(read, 'BARGE_PROJECT_DAILY_BYTES', 10 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
      heldBytes: integer(read, 'BARGE_PROJECT_HELD_BYTES', 50 * 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
      checkMs: integer(read, 'BARGE_STORAGE_CHECK_MS', 1000, 0, 60_000),
      minFreeDiskBytes: integer(read, 'BARGE_MIN_FREE_DISK_BYTES', 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
      maxDatabaseBytes:
        read('BARGE_MAX_DATABASE_BYTES') === undefined
          ? null
          : integer(read, 'BARGE_MAX_DATABASE_BYTES', 0, 1, Number.MAX_SAFE_INTEGER),
    },
    // Private and http callbacks let a tenant reach the operator's network: the default allows
    // them only in development on loopback; anything else needs BARGE_ALLOW_PRIVATE_CALLBACKS=true.
    allowPrivateCallbacks: boolean(read, 'BARGE_ALLOW_PRIVATE_CALLBACKS', env === 'development' && isLoopback(host)),
    // A model the catalog does not list has no price and was not chosen by the operator: refused in
    // production unless BARGE_ALLOW_UNLISTED_MODELS=true.
    allowUnlistedModels: boolean(read, 'BARGE_ALLOW_UNLISTED_MODELS', env === 'development'),
    defaultMonthlyBudgetUsd: usdAmount(read, 'BARGE_DEFAULT_MONTHLY_BUDGET_USD'),
    pipeline: {
      batchMaxSize: integer(read, 'BARGE_BATCH_MAX_SIZE', 10_000, 1, 100_000),
      batchMaxWaitMs:
        read('BARGE_BATCH_MAX_WAIT_MS') === undefined
          ? null
          : integer(read, 'BARGE_BATCH_MAX_WAIT_MS', 0, 0, 86_400_000),
      leaseMs: integer(read, 'BARGE_LEASE_MS', 60_000, 1000, 3_600_000),
      concurrency: integer(read, 'BARGE_WORKER_CONCURRENCY', 16, 1, 256),
      providerConcurrency: integer(read, 'BARGE_PROVIDER_CONCURRENCY', 4, 1, 256),
      providerCallTimeoutMs: integer(read, 'BARGE_PROVIDER_CALL_TIMEOUT_MS', 300_000, 100, 3_600_000),
      workerId: read('BARGE_WORKER_ID') ?? null,
    },
    mockLatencyMs: integer(read, 'BARGE_MOCK_LATENCY_MS', 60_000, 0, 86_400_000),
    models,
    providers: { ...providerSettings(read), openaiCompatible: endpointSettings(read, models) },
    delivery: {
      retryDelaysMs: retryDelays(read('BARGE_WEBHOOK_RETRY_DELAYS_MS')),
      webhookTimeoutMs: integer(read, 'BARGE_WEBHOOK_TIMEOUT_MS', 30_000, 100, 300_000),
      maxInFlight: integer(read, 'BARGE_DELIVERY_CONCURRENCY', 256, 1, 10_000),
      maxPerHost: integer(read, 'BARGE_DELIVERY_PER_HOST', 32, 1, 10_000),
    },
    objectStore: {
      region: awsRegion('BARGE_AWS_REGION', read('BARGE_AWS_REGION') ?? 'us-east-1'),
      s3Endpoint: endpointUrl(read, 'BARGE_AWS_S3_ENDPOINT'),
      stsEndpoint: endpointUrl(read, 'BARGE_AWS_STS_ENDPOINT'),
      forcePathStyle: boolean(read, 'BARGE_AWS_S3_FORCE_PATH_STYLE', false),
      sessionSeconds: integer(read, 'BARGE_AWS_SESSION_SECONDS', 3600, 900, 43_200),
      attemptTimeoutMs: integer(read, 'BARGE_OBJECT_DELIVERY_TIMEOUT_MS', 60_000, 1000, 600_000),
      throttleBaseDelayMs: integer(read, 'BARGE_OBJECT_THROTTLE_BASE_MS', 200, 1, 10_000),
      throttleRetries: integer(read, 'BARGE_OBJECT_THROTTLE_RETRIES', 8, 0, 20),
      credentials: null,
      principalArn: principalArn(read('BARGE_AWS_PRINCIPAL_ARN')),
    },
    awsEndpoints: {
      sqs: endpointUrl(read, 'BARGE_AWS_SQS_ENDPOINT'),
      sns: endpointUrl(read, 'BARGE_AWS_SNS_ENDPOINT'),
      eventBridge: endpointUrl(read, 'BARGE_AWS_EVENTBRIDGE_ENDPOINT'),
    },
    secretKey: secretKey(read('BARGE_SECRET_KEY')),
    publicBaseUrl: publicBaseUrl(read('BARGE_PUBLIC_BASE_URL'), read('PORT')),
    explicitPublicBaseUrl:
      read('BARGE_PUBLIC_BASE_URL') === undefined ? null : publicBaseUrl(read('BARGE_PUBLIC_BASE_URL'), read('PORT')),
    compatLimits: {
      batchRequests: integer(
        read,
        'BARGE_COMPAT_BATCH_MAX_REQUESTS',
        PROVIDER_LIMITS.batchRequests,
        1,
        PROVIDER_LIMITS.batchRequests,
      ),
      batchBytes: integer(
        read,
        'BARGE_COMPAT_BATCH_MAX_BYTES',
        PROVIDER_LIMITS.batchBytes,
        1024,
        PROVIDER_LIMITS.batchBytes,
      ),
      fileBytes: integer(
        read,
        'BARGE_COMPAT_FILE_MAX_BYTES',
        PROVIDER_LIMITS.fileBytes,
        1024,
        PROVIDER_LIMITS.fileBytes,
      ),
      fileLines: integer(read, 'BARGE_COMPAT_FILE_MAX_LINES', PROVIDER_LIMITS.fileLines, 1, PROVIDER_LIMITS.fileLines),
    },
    smtp: {
      url: smtpUrl(read('BARGE_SMTP_URL')),
      from: mailAddress(read('BARGE_SMTP_FROM') ?? 'barge <barge@localhost>'),
    },
    dashboardSessions: {
      idleMs: integer(read, 'BARGE_DASHBOARD_IDLE_TIMEOUT_MS', 30 * 60_000, 60_000, 86_400_000),
      absoluteMs: integer(read, 'BARGE_DASHBOARD_SESSION_MAX_MS', 12 * 3_600_000, 60_000, 30 * 86_400_000),
    },
  };
}

/** An IAM role, user or account root ARN, as a trust policy's `Principal.AWS` takes it. */
function principalArn(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (!/^arn:aws[a-z-]*:iam::\d{12}:(root|(role|user)\/[\w+=,.@/-]{1,512})$/.test(raw)) {
    throw new ConfigError(
      'BARGE_AWS_PRINCIPAL_ARN',
      `must be an IAM role, user or root ARN such as arn:aws:iam::111122223333:role/barge, got '${raw}'`,
    );
  }
  return raw;
}

function integer(
  read: (name: string) => string | undefined,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const raw = read(name);
  if (raw === undefined) return fallback;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be an integer, got '${raw}'`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

/** A US dollar amount (0 or more, at most 1e9), or null when unset. */
function usdAmount(read: (name: string) => string | undefined, name: string): number | null {
  const raw = read(name);
  if (raw === undefined) return null;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || !(value <= 1e9)) {
    throw new ConfigError(name, `must be an amount of US dollars (0 or more, e.g. 250 or 12.5), got '${raw}'`);
  }
  return value;
}

function retryDelays(raw: string | undefined): number[] {
  if (raw === undefined) return [...DEFAULT_RETRY_DELAYS_MS];
  const delays = parseRetryDelays(raw);
  if (!delays) {
    throw new ConfigError('BARGE_WEBHOOK_RETRY_DELAYS_MS', `must be comma-separated milliseconds, got '${raw}'`);
  }
  return delays;
}

function boolean(read: (name: string) => string | undefined, name: string, fallback: boolean): boolean {
  const raw = read(name);
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got '${raw}'`);
}

function oneOf<T extends string>(
  read: (name: string) => string | undefined,
  name: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const raw = read(name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got '${raw}'`);
  }
  return raw as T;
}

/** An address or a host name to listen on; a URL or `host:port` here would only fail at listen. */
function hostName(raw: string): string {
  if (isIP(raw) !== 0 || /^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/.test(raw)) return raw;
  throw new ConfigError('HOST', `must be an IP address or a host name, got '${raw}'`);
}

function databaseUrl(raw: string): string {
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('BARGE_DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return raw;
  }
  if (raw.startsWith('sqlite:')) {
    if (raw === 'sqlite:') throw new ConfigError('BARGE_DATABASE_URL', 'names no file; use sqlite:<path>');
    return raw;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new ConfigError('BARGE_DATABASE_URL', `must be postgres://... or sqlite:<path>, got '${redacted(raw)}'`);
  }
  return `sqlite:${raw}`;
}

function awsRegion(name: string, raw: string): string {
  if (/^[a-z0-9]+(-[a-z0-9]+)*$/.test(raw)) return raw;
  throw new ConfigError(name, `must be a region name such as eu-west-1, got '${raw}'`);
}

/** The catalog that ships with barge, beside package.json (in the source tree and in the installed package). */
const SHIPPED_CATALOG = join(packageRoot() ?? '.', 'models', 'catalog.json');
let shippedCatalog: ModelCatalog | undefined;

/** The operator's catalog file, read and checked now: a bad one stops the process naming the file and the entry. */
function modelCatalog(path: string | undefined): ModelCatalog {
  if (path === undefined) {
    shippedCatalog ??= parseModelCatalog(readFileSync(SHIPPED_CATALOG, 'utf8'), SHIPPED_CATALOG);
    return shippedCatalog;
  }
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      'BARGE_MODELS_FILE',
      `cannot be read: ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`,
    );
  }
  try {
    return parseModelCatalog(text, path);
  } catch (err) {
    if (err instanceof ModelCatalogError) throw new ConfigError('BARGE_MODELS_FILE', err.message);
    throw err;
  }
}

/** The catalog's enabled endpoints with their keys (decisions.md): one whose api_key_env is unset here is off. */
function endpointSettings(
  read: (name: string) => string | undefined,
  models: ModelCatalog,
): ProvidersConfig['openaiCompatible'] {
  const endpoints: Record<string, EndpointConfig> = {};
  for (const [name, endpoint] of Object.entries(models.endpoints)) {
    const key = endpoint.apiKeyEnv === null ? null : apiKey(read, endpoint.apiKeyEnv);
    if (endpoint.apiKeyEnv !== null && key === null) continue;
    endpoints[name] = { ...endpoint, apiKey: key };
  }
  return Object.keys(endpoints).length === 0 ? null : { endpoints };
}

function providerSettings(read: (name: string) => string | undefined): Omit<ProvidersConfig, 'openaiCompatible'> {
  const anthropicKey = apiKey(read, 'ANTHROPIC_API_KEY');
  const anthropicUrl = endpointUrl(read, 'ANTHROPIC_BASE_URL') ?? 'https://api.anthropic.com';
  const anthropicVersion = apiVersion(read('BARGE_ANTHROPIC_VERSION') ?? '2023-06-01');
  const openaiKey = apiKey(read, 'OPENAI_API_KEY');
  const openaiUrl = endpointUrl(read, 'OPENAI_BASE_URL') ?? 'https://api.openai.com/v1';
  const roleArn = bedrockRoleArn(read('BARGE_BEDROCK_ROLE_ARN'));
  const s3Uri = bedrockS3Uri(read('BARGE_BEDROCK_S3_URI'));
  const bedrockRegion = read('BARGE_BEDROCK_REGION');
  const region = bedrockRegion === undefined ? undefined : awsRegion('BARGE_BEDROCK_REGION', bedrockRegion);
  const bedrockEndpoint = endpointUrl(read, 'BARGE_AWS_BEDROCK_ENDPOINT');
  // One of the two alone is a set-up left half done, not a choice to leave Bedrock off.
  if ((roleArn === null) !== (s3Uri === null)) {
    throw new ConfigError(
      roleArn === null ? 'BARGE_BEDROCK_ROLE_ARN' : 'BARGE_BEDROCK_S3_URI',
      'must be set too: Bedrock needs both BARGE_BEDROCK_ROLE_ARN and BARGE_BEDROCK_S3_URI',
    );
  }
  const minRecords = integer(read, 'BARGE_BEDROCK_MIN_RECORDS', 100, 1, 1_000_000);
  return {
    anthropic:
      anthropicKey === null ? null : { apiKey: anthropicKey, baseUrl: anthropicUrl, version: anthropicVersion },
    openai: openaiKey === null ? null : { apiKey: openaiKey, baseUrl: openaiUrl },
    bedrock:
      roleArn === null || s3Uri === null
        ? null
        : {
            roleArn,
            s3Uri,
            // AWS_REGION is the AWS tools' own variable: read only when Bedrock is on.
            region: region ?? awsRegion('AWS_REGION', read('AWS_REGION') ?? 'us-east-1'),
            endpoint: bedrockEndpoint,
            minRecords,
            maxRecords: integer(read, 'BARGE_BEDROCK_MAX_RECORDS', 50_000, minRecords, 1_000_000),
            maxJobs: integer(read, 'BARGE_BEDROCK_MAX_JOBS', 10, 1, 10_000),
          },
  };
}

/** Never echoed: the value is a key. Printable ASCII without spaces, as every provider's keys are. */
function apiKey(read: (name: string) => string | undefined, name: string): string | null {
  const raw = read(name);
  if (raw === undefined) return null;
  if (!/^[\x21-\x7e]{8,1024}$/.test(raw)) {
    throw new ConfigError(name, 'must be 8 to 1024 printable characters without spaces (the value is not shown)');
  }
  return raw;
}

function apiVersion(raw: string): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(raw)) return raw;
  throw new ConfigError('BARGE_ANTHROPIC_VERSION', `must be an API version date such as 2023-06-01, got '${raw}'`);
}

function bedrockRoleArn(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (/^arn:aws(-[a-z]+)*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/.test(raw)) return raw;
  throw new ConfigError(
    'BARGE_BEDROCK_ROLE_ARN',
    `must be an IAM role ARN such as arn:aws:iam::123456789012:role/barge-bedrock, got '${raw}'`,
  );
}

/** `s3://bucket/prefix/`; the prefix is a folder, so a missing final `/` is added. */
function bedrockS3Uri(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const fail = (problem: string): never => {
    throw new ConfigError('BARGE_BEDROCK_S3_URI', `${problem}, got '${raw}'`);
  };
  const match = /^s3:\/\/([^/]*)(\/.*)?$/.exec(raw);
  if (!match) return fail('must be an S3 URI such as s3://my-bucket/barge/');
  const bucket = match[1] as string;
  const problem = bucketNameProblem(bucket);
  if (problem !== null) {
    fail(`names the bucket '${bucket}', which is not a valid bucket name: ${problem} (${BUCKET_NAME_RULES})`);
  }
  if (!/^[A-Za-z0-9!_.*'()/-]*$/.test(match[2] ?? '')) {
    fail("has a prefix with characters other than letters, digits and ! _ . * ' ( ) / -");
  }
  return raw.endsWith('/') ? raw : `${raw}/`;
}

function httpUrl(raw: string): URL | null {
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

function endpointUrl(read: (name: string) => string | undefined, name: string): string | null {
  const raw = read(name);
  if (raw === undefined) return null;
  const url = httpBaseUrl(raw);
  if (url === null) {
    throw new ConfigError(name, `must be an http(s) URL without query or credentials, got '${redacted(raw)}'`);
  }
  return url;
}

/** Never echoed: the value is a key. */
function secretKey(raw: string | undefined): Buffer | null {
  if (raw === undefined) return null;
  const key = parseSecretKey(raw);
  if (!key) throw new ConfigError('BARGE_SECRET_KEY', 'must be 32 bytes written as 64 hex characters or base64');
  return key;
}

function publicBaseUrl(raw: string | undefined, port: string | undefined): string {
  if (raw === undefined) return `http://localhost:${port ?? '8080'}`;
  const url = httpUrl(raw);
  if (!url || url.search || url.hash) {
    throw new ConfigError(
      'BARGE_PUBLIC_BASE_URL',
      `must be an absolute http(s) URL without query, got '${redacted(raw)}'`,
    );
  }
  return raw.replace(/\/+$/, '');
}

/** Not echoed: an SMTP URL may carry a password. */
function smtpUrl(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  try {
    const url = new URL(raw);
    if ((url.protocol === 'smtp:' || url.protocol === 'smtps:') && url.hostname) return raw;
  } catch {
    // reported below
  }
  throw new ConfigError('BARGE_SMTP_URL', 'must be an smtp:// or smtps:// URL, e.g. smtp://user:pass@mail.example:587');
}

function mailAddress(raw: string): string {
  if (/^[^<>@\s]+@[^<>@\s]+$/.test(raw) || /^[^<>]*<[^<>@\s]+@[^<>@\s]+>$/.test(raw)) return raw;
  throw new ConfigError('BARGE_SMTP_FROM', `must be an address such as 'barge <barge@example.com>', got '${raw}'`);
}

/** A URL-valued setting as it may be echoed: user and password (a credential) replaced. */
function redacted(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1***@');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** A bearer token (RFC 6750 characters), long enough not to be guessed: 16 characters at least. */
function metricsToken(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!/^[A-Za-z0-9._~+/=-]{16,}$/.test(value)) {
    throw new ConfigError('BARGE_METRICS_TOKEN', 'must be at least 16 characters of A-Z a-z 0-9 . _ ~ + / = -');
  }
  return value;
}

function redisUrl(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!/^rediss?:\/\/[^\s]+$/.test(value)) {
    throw new ConfigError('BARGE_REDIS_URL', `must be a redis:// or rediss:// URL, got '${redacted(value)}'`);
  }
  return value;
}
