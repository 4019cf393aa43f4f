/** loadConfig: every variable it reads, their checks and defaults, the provider settings, and BARGE_MODELS_FILE. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, enabledRoutes, loadConfig } from '../../src/config.js';

/** Every variable loadConfig reads, found by watching it read an empty environment. */
function variablesRead(): string[] {
  const names = new Set<string>();
  loadConfig(
    new Proxy({} as Record<string, string | undefined>, {
      get(_target, name) {
        if (typeof name === 'string') names.add(name);
        return undefined;
      },
    }),
  );
  return [...names].sort();
}

/** Variables that take any text. */
const FREE_FORM = new Set(['BARGE_WORKER_ID']);
/** A bad value per variable where the generic one would be accepted. */
const BAD_VALUE: Record<string, string> = { BARGE_DATABASE_URL: 'mysql://localhost/barge' };

function assertRejects(env: Record<string, string>, variable: string): void {
  assert.throws(
    () => loadConfig(env),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError, String(err));
      assert.match(err.message, new RegExp(`\\b${variable}\\b`), err.message);
      return true;
    },
    `${variable}=${JSON.stringify(env[variable])} should be rejected`,
  );
}

describe('loadConfig', () => {
  test('reads the documented variables', () => {
    const read = variablesRead();
    for (const name of [
      'BARGE_ENV',
      'HOST',
      'PORT',
      'BARGE_DATABASE_URL',
      'BARGE_BODY_LIMIT_BYTES',
      'BARGE_LOG_LEVEL',
      'BARGE_RATE_LIMIT_MAX',
      'BARGE_RATE_LIMIT_WINDOW_MS',
      'BARGE_COMMIT_INTERVAL_MS',
      'BARGE_KEY_CACHE_TTL_MS',
      'BARGE_ALLOW_PRIVATE_CALLBACKS',
    ]) {
      assert.ok(read.includes(name), `${name} is read`);
    }
  });

  test('a bad value for any variable throws a message naming that variable', () => {
    for (const variable of variablesRead()) {
      if (FREE_FORM.has(variable)) continue;
      assertRejects({ [variable]: BAD_VALUE[variable] ?? 'not valid!' }, variable);
    }
  });

  test('numbers: non-integers and values out of range are rejected, the bounds accepted', () => {
    const cases: [string, string[], string[]][] = [
      ['PORT', ['0', '8080', '65535'], ['-1', '65536', '80.5', '1e3', '0x50', 'eighty']],
      ['BARGE_BODY_LIMIT_BYTES', ['1024', '1073741824'], ['1023', '1073741825', '10MB']],
      ['BARGE_RATE_LIMIT_MAX', ['1', '1000000000'], ['0', '-5', '1000000001']],
      ['BARGE_RATE_LIMIT_WINDOW_MS', ['1000', '86400000'], ['999', '86400001']],
      ['BARGE_COMMIT_INTERVAL_MS', ['0', '1000'], ['-1', '1001']],
      ['BARGE_KEY_CACHE_TTL_MS', ['0', '3600000'], ['-1', '3600001']],
    ];
    for (const [variable, good, bad] of cases) {
      for (const value of good) assert.doesNotThrow(() => loadConfig({ [variable]: value }), `${variable}=${value}`);
      for (const value of bad) assertRejects({ [variable]: value }, variable);
    }
    assert.equal(loadConfig({ PORT: '9090' }).port, 9090);
    assert.deepEqual(loadConfig({ BARGE_RATE_LIMIT_MAX: '3', BARGE_RATE_LIMIT_WINDOW_MS: '1000' }).rateLimit, {
      max: 3,
      windowMs: 1000,
    });
  });

  test('choices and flags', () => {
    assert.equal(loadConfig({ BARGE_ENV: 'production' }).env, 'production');
    assertRejects({ BARGE_ENV: 'staging' }, 'BARGE_ENV');
    assertRejects({ BARGE_ENV: 'Production' }, 'BARGE_ENV');
    for (const level of ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) {
      assert.equal(loadConfig({ BARGE_LOG_LEVEL: level }).logLevel, level);
    }
    assertRejects({ BARGE_LOG_LEVEL: 'verbose' }, 'BARGE_LOG_LEVEL');
    for (const [value, expected] of [
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ] as const) {
      assert.equal(loadConfig({ BARGE_ALLOW_PRIVATE_CALLBACKS: value }).allowPrivateCallbacks, expected);
    }
    assertRejects({ BARGE_ALLOW_PRIVATE_CALLBACKS: 'yes' }, 'BARGE_ALLOW_PRIVATE_CALLBACKS');
  });

  test('BARGE_AWS_PRINCIPAL_ARN: an IAM role, user or root ARN; none by default', () => {
    assert.equal(loadConfig({}).objectStore.principalArn, null);
    for (const arn of [
      'arn:aws:iam::111122223333:role/barge',
      'arn:aws:iam::111122223333:role/service/barge-prod',
      'arn:aws:iam::111122223333:user/barge',
      'arn:aws:iam::111122223333:root',
      'arn:aws-cn:iam::111122223333:role/barge',
    ]) {
      assert.equal(loadConfig({ BARGE_AWS_PRINCIPAL_ARN: arn }).objectStore.principalArn, arn);
    }
    for (const bad of ['arn:aws:sts::111122223333:assumed-role/barge/session', 'arn:aws:iam::1:role/x', '*']) {
      assertRejects({ BARGE_AWS_PRINCIPAL_ARN: bad }, 'BARGE_AWS_PRINCIPAL_ARN');
    }
  });

  test('HOST: addresses and names accepted; URLs and host:port rejected', () => {
    for (const host of ['0.0.0.0', '127.0.0.1', '::', '::1', 'localhost', 'api.internal-1.example']) {
      assert.equal(loadConfig({ HOST: host }).host, host);
    }
    for (const host of ['http://localhost', 'localhost:8080', 'two words', 'a..b'])
      assertRejects({ HOST: host }, 'HOST');
  });

  test('defaults', () => {
    const config = loadConfig({});
    assert.equal(config.env, 'development');
    assert.equal(config.host, '127.0.0.1', 'development listens on loopback');
    assert.equal(loadConfig({ BARGE_ENV: 'production' }).host, '0.0.0.0');
    assert.equal(config.port, 8080);
    assert.equal(config.databaseUrl, 'sqlite:./data/barge.sqlite');
    assert.equal(config.bodyLimitBytes, 10 * 1024 * 1024);
    assert.equal(config.logLevel, 'info');
    assert.deepEqual(config.rateLimit, { max: 6000, windowMs: 60_000 });
    assert.equal(config.commitIntervalMs, 1);
    assert.equal(config.keyCacheTtlMs, 10_000);
    assert.equal(config.allowPrivateCallbacks, true, 'development on loopback allows plain-http callbacks');
    assert.equal(
      loadConfig({ HOST: '0.0.0.0' }).allowPrivateCallbacks,
      false,
      'development reachable from the network does not, unless asked',
    );
    assert.equal(loadConfig({ HOST: '0.0.0.0', BARGE_ALLOW_PRIVATE_CALLBACKS: 'true' }).allowPrivateCallbacks, true);
    assert.equal(loadConfig({ BARGE_ENV: 'production' }).allowPrivateCallbacks, false, 'production does not');
    assert.equal(
      loadConfig({ BARGE_ENV: 'production', BARGE_ALLOW_PRIVATE_CALLBACKS: 'true' }).allowPrivateCallbacks,
      true,
    );
  });

  test('unlisted models: allowed in development, refused in production unless asked; the default budget', () => {
    assert.equal(loadConfig({}).allowUnlistedModels, true);
    assert.equal(loadConfig({ BARGE_ENV: 'production' }).allowUnlistedModels, false);
    assert.equal(
      loadConfig({ BARGE_ENV: 'production', BARGE_ALLOW_UNLISTED_MODELS: 'true' }).allowUnlistedModels,
      true,
    );
    assert.equal(loadConfig({ BARGE_ALLOW_UNLISTED_MODELS: 'false' }).allowUnlistedModels, false);
    assert.equal(loadConfig({}).defaultMonthlyBudgetUsd, null);
    assert.equal(loadConfig({ BARGE_DEFAULT_MONTHLY_BUDGET_USD: '12.5' }).defaultMonthlyBudgetUsd, 12.5);
    for (const bad of ['-1', 'ten', '1e3', '2000000000']) {
      assert.throws(
        () => loadConfig({ BARGE_DEFAULT_MONTHLY_BUDGET_USD: bad }),
        /BARGE_DEFAULT_MONTHLY_BUDGET_USD/,
        bad,
      );
    }
  });

  test('empty and blank values mean the default; values are trimmed', () => {
    assert.equal(loadConfig({ PORT: '' }).port, 8080);
    assert.equal(loadConfig({ PORT: '   ' }).port, 8080);
    assert.equal(loadConfig({ PORT: ' 9000\n' }).port, 9000);
    assert.equal(loadConfig({ BARGE_ENV: ' production ' }).env, 'production');
  });

  test('BARGE_DATABASE_URL forms', () => {
    const url = (value: string) => loadConfig({ BARGE_DATABASE_URL: value }).databaseUrl;
    assert.equal(url('postgres://barge:pw@db.internal:5432/barge'), 'postgres://barge:pw@db.internal:5432/barge');
    assert.equal(
      url('postgresql://barge@127.0.0.1/barge?sslmode=disable'),
      'postgresql://barge@127.0.0.1/barge?sslmode=disable',
    );
    assert.equal(
      url('postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dx'),
      'postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3Dx',
    );
    assert.equal(url('sqlite:/var/lib/barge/barge.sqlite'), 'sqlite:/var/lib/barge/barge.sqlite');
    assert.equal(url('sqlite:./data/x.sqlite'), 'sqlite:./data/x.sqlite');
    assert.equal(url('sqlite::memory:'), 'sqlite::memory:');
    assert.equal(url('./data/plain.sqlite'), 'sqlite:./data/plain.sqlite', 'a plain path is a SQLite file');
    assert.equal(url('/tmp/barge.db'), 'sqlite:/tmp/barge.db');
    for (const bad of ['mysql://localhost/barge', 'http://example.com/db', 'sqlite:', 'postgres://[::1']) {
      assertRejects({ BARGE_DATABASE_URL: bad }, 'BARGE_DATABASE_URL');
    }
  });

  test('a malformed PostgreSQL URL is rejected without echoing its password', () => {
    assert.throws(
      () => loadConfig({ BARGE_DATABASE_URL: 'postgres://barge:hunter2@[db/barge' }),
      (err: Error) =>
        err instanceof ConfigError && /BARGE_DATABASE_URL/.test(err.message) && !/hunter2/.test(err.message),
    );
  });
});

test('a URL-valued setting refused is echoed without its credentials', () => {
  for (const [name, value] of [
    ['BARGE_DATABASE_URL', 'mysql://u:DBPASSWORD@h/db'],
    ['BARGE_AWS_S3_ENDPOINT', 'https://AKIA:SECRETINURL@h/'],
  ] as const) {
    assert.throws(
      () => loadConfig({ [name]: value }),
      (err: Error) => err.message.includes(name) && !/DBPASSWORD|SECRETINURL|AKIA/.test(err.message),
    );
  }
});

describe('providers', () => {
  const KEY = 'sk-test-SECRETKEYVALUE-123';

  test('none is enabled by default: only svc-mock routes', () => {
    const config = loadConfig({});
    assert.deepEqual(config.providers, { anthropic: null, openai: null, bedrock: null, openaiCompatible: null });
    assert.deepEqual([...enabledRoutes(config.providers).providers], ['mock']);
  });

  test('a key enables Anthropic or OpenAI, with the documented defaults', () => {
    const config = loadConfig({ ANTHROPIC_API_KEY: KEY, OPENAI_API_KEY: KEY });
    assert.deepEqual(config.providers.anthropic, {
      apiKey: KEY,
      baseUrl: 'https://api.anthropic.com',
      version: '2023-06-01',
    });
    assert.deepEqual(config.providers.openai, { apiKey: KEY, baseUrl: 'https://api.openai.com/v1' });
    assert.deepEqual([...enabledRoutes(config.providers).providers].sort(), ['anthropic', 'mock', 'openai']);
    const moved = loadConfig({
      ANTHROPIC_API_KEY: KEY,
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:4010/',
      BARGE_ANTHROPIC_VERSION: '2026-10-21',
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: 'http://127.0.0.1:4020/v1',
    }).providers;
    assert.equal(moved.anthropic?.baseUrl, 'http://127.0.0.1:4010');
    assert.equal(moved.anthropic?.version, '2026-10-21');
    assert.equal(moved.openai?.baseUrl, 'http://127.0.0.1:4020/v1');
  });

  test('Bedrock needs the role and the S3 URI together; the region falls back to AWS_REGION, then us-east-1', () => {
    const role = 'arn:aws:iam::123456789012:role/barge-bedrock';
    const both = { BARGE_BEDROCK_ROLE_ARN: role, BARGE_BEDROCK_S3_URI: 's3://barge-batches/in' };
    assert.deepEqual(loadConfig(both).providers.bedrock, {
      roleArn: role,
      s3Uri: 's3://barge-batches/in/',
      region: 'us-east-1',
      endpoint: null,
      minRecords: 100,
      maxRecords: 50_000,
      maxJobs: 10,
    });
    assert.equal(loadConfig({ ...both, AWS_REGION: 'eu-west-1' }).providers.bedrock?.region, 'eu-west-1');
    const own = loadConfig({
      ...both,
      AWS_REGION: 'eu-west-1',
      BARGE_BEDROCK_REGION: 'us-west-2',
      BARGE_AWS_BEDROCK_ENDPOINT: 'http://127.0.0.1:4566',
    }).providers.bedrock;
    assert.equal(own?.region, 'us-west-2');
    assert.equal(own?.endpoint, 'http://127.0.0.1:4566');
    assert.ok(enabledRoutes(loadConfig(both).providers).providers.has('bedrock'));
    assertRejects({ BARGE_BEDROCK_ROLE_ARN: role }, 'BARGE_BEDROCK_S3_URI');
    assertRejects({ BARGE_BEDROCK_S3_URI: 's3://barge-batches/' }, 'BARGE_BEDROCK_ROLE_ARN');
    assertRejects({ ...both, BARGE_BEDROCK_S3_URI: 'https://barge-batches.s3.amazonaws.com/' }, 'BARGE_BEDROCK_S3_URI');
  });

  test('a BARGE_BEDROCK_S3_URI whose bucket name S3 would refuse is refused saying the bucket name is why', () => {
    const role = { BARGE_BEDROCK_ROLE_ARN: 'arn:aws:iam::123456789012:role/barge-bedrock' };
    const message = (uri: string) => {
      try {
        loadConfig({ ...role, BARGE_BEDROCK_S3_URI: uri });
      } catch (err) {
        assert.ok(err instanceof ConfigError, String(err));
        return err.message;
      }
      return assert.fail(`${uri} was accepted`);
    };
    const rules =
      '(S3 bucket names are 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit)';
    assert.equal(
      message('s3://b/p/'),
      `Invalid configuration: BARGE_BEDROCK_S3_URI names the bucket 'b', which is not a valid bucket name: it is 1 character long ${rules}, got 's3://b/p/'`,
    );
    const why: [string, string][] = [
      [`s3://${'a'.repeat(64)}/`, 'it is 64 characters long'],
      ['s3://Barge-Batches/in/', 'it has characters other than lowercase letters, digits, dots and hyphens'],
      ['s3://barge_batches/', 'it has characters other than lowercase letters, digits, dots and hyphens'],
      ['s3://-barge/', 'it does not start and end with a letter or digit'],
      ['s3://barge..batches/', 'it has two dots in a row or a dot beside a hyphen'],
      ['s3://192.168.1.10/', 'it is written as an IP address'],
      ['s3://xn--barge/', 'it starts with a prefix S3 reserves'],
      ['s3://barge-s3alias/', 'it ends with a suffix S3 reserves'],
    ];
    for (const [uri, reason] of why) {
      const text = message(uri);
      assert.ok(
        text.includes(`names the bucket '${uri.slice(5).split('/')[0]}', which is not a valid bucket name: ${reason}`),
        text,
      );
      assert.ok(text.includes(rules), text);
    }
    assert.match(message('s3:///p/'), /names the bucket '', which is not a valid bucket name: it is 0 characters long/);
    assert.match(message('s3://barge-batches/in?x=1'), /has a prefix with characters other than letters, digits/);
    assert.match(
      message('https://barge-batches.s3.amazonaws.com/'),
      /must be an S3 URI such as s3:\/\/my-bucket\/barge\//,
    );
    assert.equal(loadConfig({ ...role, BARGE_BEDROCK_S3_URI: 's3://abc' }).providers.bedrock?.s3Uri, 's3://abc/');
  });

  test('Bedrock limits: minimum and maximum records per job and jobs in progress, the maximum never below the minimum', () => {
    const both = { BARGE_BEDROCK_ROLE_ARN: 'arn:aws:iam::123456789012:role/r', BARGE_BEDROCK_S3_URI: 's3://bkt/p/' };
    const set = loadConfig({
      ...both,
      BARGE_BEDROCK_MIN_RECORDS: '1000',
      BARGE_BEDROCK_MAX_RECORDS: '20000',
      BARGE_BEDROCK_MAX_JOBS: '3',
    }).providers.bedrock;
    assert.deepEqual([set?.minRecords, set?.maxRecords, set?.maxJobs], [1000, 20_000, 3]);
    assertRejects({ ...both, BARGE_BEDROCK_MIN_RECORDS: '0' }, 'BARGE_BEDROCK_MIN_RECORDS');
    assertRejects(
      { ...both, BARGE_BEDROCK_MIN_RECORDS: '500', BARGE_BEDROCK_MAX_RECORDS: '499' },
      'BARGE_BEDROCK_MAX_RECORDS',
    );
    assertRejects({ ...both, BARGE_BEDROCK_MAX_JOBS: 'ten' }, 'BARGE_BEDROCK_MAX_JOBS');
  });

  test('a refused key is never echoed', () => {
    for (const name of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY']) {
      assert.throws(
        () => loadConfig({ [name]: 'sk-SECRET VALUE' }),
        (err: Error) => err instanceof ConfigError && err.message.includes(name) && !err.message.includes('SECRET'),
      );
    }
  });
});

describe('BARGE_MODELS_FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'barge-models-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, content: string) => {
    const path = join(dir, name);
    writeFileSync(path, content);
    return path;
  };

  test('replaces the shipped catalog', () => {
    const path = file(
      'one.json',
      JSON.stringify({ models: [{ id: 'house', routes: [{ provider: 'openai', model: 'gpt-4o' }] }] }),
    );
    const config = loadConfig({ BARGE_MODELS_FILE: path });
    assert.equal(config.models.source, path);
    assert.deepEqual(
      config.models.entries.map((e) => e.id),
      ['house'],
    );
    assert.ok(
      loadConfig({}).models.entries.some((e) => e.id === 'claude-sonnet-4-5'),
      'the shipped one by default',
    );
  });

  test('a bad file stops loading with a message naming the file and the entry', () => {
    const path = file(
      'bad.json',
      JSON.stringify({
        models: [
          { id: 'ok', routes: [{ provider: 'openai', model: 'x' }] },
          { id: 'gpt-4o', routes: [{ provider: 'azure', model: 'gpt-4o' }] },
        ],
      }),
    );
    assert.throws(
      () => loadConfig({ BARGE_MODELS_FILE: path }),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message.includes('BARGE_MODELS_FILE') &&
        err.message.includes(`${path}: models[1] ("gpt-4o"): routes[0].provider must be one of`),
    );
    assertRejects({ BARGE_MODELS_FILE: join(dir, 'missing.json') }, 'BARGE_MODELS_FILE');
  });
});

describe('catalog endpoints (openai-compatible)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'barge-endpoints-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const catalog = (endpoints: Record<string, unknown>, routes: unknown[]) => {
    const path = join(dir, `catalog-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        endpoints,
        models: [{ id: 'llama', routes, prices_usd_per_mtok: { input: 0.05, output: 0.08 } }],
      }),
    );
    return path;
  };
  const gpu = (extra: Record<string, unknown> = {}) => ({
    base_url: 'http://10.0.0.5:8000/v1/',
    max_concurrency: 16,
    timeout_ms: 600000,
    ...extra,
  });
  const route = (endpoint: string) => ({
    provider: 'openai-compatible',
    endpoint,
    model: 'meta-llama/Llama-3.1-8B-Instruct',
  });

  test('an endpoint without api_key_env is enabled, with no key; private addresses are allowed', () => {
    const config = loadConfig({ BARGE_MODELS_FILE: catalog({ 'gpu-1': gpu() }, [route('gpu-1')]) });
    assert.deepEqual(config.providers.openaiCompatible, {
      endpoints: {
        'gpu-1': {
          baseUrl: 'http://10.0.0.5:8000/v1',
          apiKeyEnv: null,
          maxConcurrency: 16,
          timeoutMs: 600000,
          apiKey: null,
        },
      },
    });
    const enabled = enabledRoutes(config.providers);
    assert.deepEqual([...enabled.providers], ['mock', 'openai-compatible']);
    assert.deepEqual([...enabled.endpoints], ['gpu-1']);
    // Only input and output prices: an endpoint's model is billed at those, batch prices or not.
    const prices = config.models.entries[0]?.prices;
    assert.deepEqual([prices?.batch_input, prices?.batch_output], [0.05, 0.08]);
  });

  test('an endpoint whose api_key_env is unset here is not enabled; set, its key is read', () => {
    const path = catalog({ 'gpu-1': gpu({ api_key_env: 'GPU1_KEY' }), 'gpu-2': gpu() }, [
      route('gpu-1'),
      route('gpu-2'),
    ]);
    const off = loadConfig({ BARGE_MODELS_FILE: path });
    assert.deepEqual(Object.keys(off.providers.openaiCompatible?.endpoints ?? {}), ['gpu-2']);
    assert.equal(enabledRoutes(off.providers).endpoints.has('gpu-1'), false);
    const on = loadConfig({ BARGE_MODELS_FILE: path, GPU1_KEY: 'sk-gpu-one-12345' });
    assert.equal(on.providers.openaiCompatible?.endpoints['gpu-1']?.apiKey, 'sk-gpu-one-12345');
  });

  test('bad endpoints and endpoint routes stop the start, naming the entry', () => {
    const cases: [string, string][] = [
      [catalog({ 'gpu-1': gpu({ base_url: 'ftp://x' }) }, [route('gpu-1')]), 'endpoints.gpu-1: base_url must be'],
      [catalog({ 'gpu-1': gpu({ max_concurrency: 0 }) }, [route('gpu-1')]), 'max_concurrency must be an integer'],
      [catalog({ 'gpu-1': gpu({ timeout_ms: 'long' }) }, [route('gpu-1')]), 'timeout_ms must be an integer'],
      [catalog({ 'gpu-1': gpu({ weight: 1 }) }, [route('gpu-1')]), 'unknown field "weight"'],
      [catalog({ 'gpu-1': gpu() }, [route('gpu-9')]), 'routes[0].endpoint names "gpu-9"'],
      [catalog({ 'gpu-1': gpu() }, [{ provider: 'openai-compatible', model: 'x' }]), 'routes[0].endpoint must name'],
      [
        catalog({ 'gpu-1': gpu() }, [{ provider: 'openai', endpoint: 'gpu-1', model: 'x' }]),
        'only for provider openai-compatible',
      ],
    ];
    for (const [path, message] of cases) {
      assert.throws(
        () => loadConfig({ BARGE_MODELS_FILE: path }),
        (err: unknown) => err instanceof ConfigError && err.message.includes(message),
        message,
      );
    }
  });
});
