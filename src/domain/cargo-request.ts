/** A cargo's request as a whole: the limits of POST /cargo/load, records, metadata, the rules its schema cannot express. */
import type { FieldError } from './errors.js';
import type { ModelInput } from './request-surface.js';

/** Limits of POST /cargo/load (interface document section 8, decisions.md); the request's own parts are SURFACE_LIMITS. */
export const LIMITS = Object.freeze({
  defaultMaxTokens: 1024,
  metadataMaxEntries: 50,
  metadataMaxKeyLength: 128,
  metadataMaxValueLength: 2048,
  metadataMaxBytes: 4096,
  ttlMinSeconds: 3600,
  ttlMaxSeconds: 2_592_000,
  defaultTtlSeconds: 2_592_000,
  maxRecords: 10_000,
  recordIdMaxLength: 128,
  callbackUrlMaxLength: 2048,
});

export interface CargoRecord {
  recordId: string;
  modelInput: ModelInput;
}

/**
 * Checks the rules a JSON schema cannot express. The schema has already checked types, ranges and
 * shapes; this sees a schema-valid body.
 */
export function checkLoadRules(body: {
  params: { messages?: unknown };
  records?: { recordId: string }[];
  metadata?: Record<string, unknown>;
  /** The metadata's JSON text as it will be stored and echoed; defaults to JSON.stringify. */
  metadataJson?: string;
}): FieldError[] {
  const problems: FieldError[] = [];
  if (body.records === undefined && body.params.messages === undefined) {
    problems.push({ path: '/params/messages', message: 'is required (or give a records array)' });
  }
  if (body.records !== undefined && body.params.messages !== undefined) {
    problems.push({ path: '/records', message: 'cannot be combined with params.messages' });
  }
  if (body.records) {
    const seen = new Set<string>();
    body.records.forEach((record, i) => {
      if (seen.has(record.recordId)) {
        problems.push({ path: `/records/${i}/recordId`, message: `duplicates '${record.recordId}'` });
      }
      seen.add(record.recordId);
    });
  }
  if (body.metadata) problems.push(...checkMetadata(body.metadata, body.metadataJson));
  return problems;
}

/**
 * More than `max` characters (code points). A string is never more code points than UTF-16 units,
 * so only a long one is counted (the check runs on every metadata entry of every request).
 */
function longerThan(text: string, max: number): boolean {
  return text.length > max && [...text].length > max;
}

export function checkMetadata(metadata: Record<string, unknown>, json?: string): FieldError[] {
  const problems: FieldError[] = [];
  const keys = Object.keys(metadata);
  if (keys.length > LIMITS.metadataMaxEntries) {
    problems.push({
      path: '/metadata',
      message: `has ${keys.length} entries; at most ${LIMITS.metadataMaxEntries} are allowed`,
    });
  }
  for (const key of keys) {
    const path = () => `/metadata/${escapePointer(key)}`;
    if (longerThan(key, LIMITS.metadataMaxKeyLength)) {
      problems.push({ path: path(), message: `key is longer than ${LIMITS.metadataMaxKeyLength} characters` });
    }
    const value = metadata[key];
    const text = typeof value === 'string' ? value : jsonText(value);
    if (text === undefined || longerThan(text, LIMITS.metadataMaxValueLength)) {
      problems.push({
        path: path(),
        message: `value is longer than ${LIMITS.metadataMaxValueLength} characters`,
      });
    }
  }
  const text = json ?? jsonText(metadata);
  const bytes = text === undefined ? Number.POSITIVE_INFINITY : Buffer.byteLength(text, 'utf8');
  if (bytes > LIMITS.metadataMaxBytes) {
    problems.push({
      path: '/metadata',
      message:
        text === undefined
          ? `is nested too deeply; at most ${LIMITS.metadataMaxBytes} bytes as JSON are allowed`
          : `is ${bytes} bytes as JSON; at most ${LIMITS.metadataMaxBytes} are allowed`,
    });
  }
  return problems;
}

/**
 * JSON.stringify recurses, so a parsed value nested a few thousand levels deep (JSON.parse does not
 * mind) overflows the stack. Such a value is far over every metadata limit anyway: undefined.
 */
function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (err instanceof RangeError) return undefined;
    throw err;
  }
}

function escapePointer(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}
