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
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  rateLimit: { max: number; windowMs: number };
  /** How often the group-commit writer flushes queued submissions, at most. */
  commitIntervalMs: number;
  /** How long a validated API key stays in the in-process cache before it is looked up again. */
  keyCacheTtlMs: number;
  /** Accept plain-http callback URLs and deliver to private addresses (development, tests). */
  allowPrivateCallbacks: boolean;
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
  return {
    env,
    host: read('HOST') ?? '0.0.0.0',
    port: integer(read, 'PORT', 8080, 0, 65535),
    databaseUrl: databaseUrl(read('BARGE_DATABASE_URL') ?? 'sqlite:./data/barge.sqlite'),
    bodyLimitBytes: integer(read, 'BARGE_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 ** 3),
    logLevel: oneOf(read, 'BARGE_LOG_LEVEL', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'info'),
    rateLimit: {
      max: integer(read, 'BARGE_RATE_LIMIT_MAX', 6000, 1, 1e9),
      windowMs: integer(read, 'BARGE_RATE_LIMIT_WINDOW_MS', 60_000, 1000, 86_400_000),
    },
    commitIntervalMs: integer(read, 'BARGE_COMMIT_INTERVAL_MS', 1, 0, 1000),
    keyCacheTtlMs: integer(read, 'BARGE_KEY_CACHE_TTL_MS', 10_000, 0, 3_600_000),
    allowPrivateCallbacks: boolean(read, 'BARGE_ALLOW_PRIVATE_CALLBACKS', env === 'development'),
  };
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

function databaseUrl(raw: string): string {
  if (/^postgres(ql)?:\/\//.test(raw)) {
    try {
      new URL(raw);
    } catch {
      throw new ConfigError('BARGE_DATABASE_URL', 'is not a valid postgres:// URL');
    }
    return raw;
  }
  if (raw.startsWith('sqlite:')) return raw;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    throw new ConfigError('BARGE_DATABASE_URL', `must be postgres://... or sqlite:<path>, got '${raw}'`);
  }
  return `sqlite:${raw}`;
}
