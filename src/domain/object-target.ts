/**
 * Where an object delivery writes (interface document 4.1.2 and 6.3): a bucket named by its ARN,
 * a key prefix, and the deterministic key `{key_prefix}{cargo_id}.json`. Pure rules, shared by
 * submit-time validation, delivery and the capability check.
 */

import { targetAllowed } from './connections.js';

export const DEFAULT_KEY_PREFIX = 'convoy/';
export const VERIFICATION_OBJECT_NAME = 'svc-verify.json';

/** S3 keys are at most 1,024 bytes; a prefix must leave room for `crg_<26>.json`. */
const MAX_KEY_BYTES = 1024;
const LONGEST_NAME = 'crg_00000000000000000000000000.json'.length;
export const KEY_PREFIX_MAX_BYTES = MAX_KEY_BYTES - LONGEST_NAME;

const BUCKET_ARN = /^arn:aws:s3:::([^/]*)$/;

/** What S3's general-purpose bucket naming rules say in one line, for messages. */
export const BUCKET_NAME_RULES =
  'S3 bucket names are 3-63 lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit';

/** Why `name` breaks S3's general-purpose bucket naming rules, or null when it keeps them. */
export function bucketNameProblem(name: string): string | null {
  if (name.length < 3 || name.length > 63) return `it is ${name.length} character${name.length === 1 ? '' : 's'} long`;
  if (!/^[a-z0-9.-]+$/.test(name)) return 'it has characters other than lowercase letters, digits, dots and hyphens';
  if (!/^[a-z0-9].*[a-z0-9]$/.test(name)) return 'it does not start and end with a letter or digit';
  if (name.includes('..') || name.includes('.-') || name.includes('-.')) {
    return 'it has two dots in a row or a dot beside a hyphen';
  }
  if (/^\d+\.\d+\.\d+\.\d+$/.test(name)) return 'it is written as an IP address';
  if (/^(xn--|sthree-|amzn-s3-demo-)/.test(name))
    return 'it starts with a prefix S3 reserves (xn--, sthree-, amzn-s3-demo-)';
  if (/(-s3alias|--ol-s3|--x-s3|--table-s3)$/.test(name)) {
    return 'it ends with a suffix S3 reserves (-s3alias, --ol-s3, --x-s3, --table-s3)';
  }
  return null;
}

/** The bucket name of `arn:aws:s3:::<bucket>`, or why the ARN is not one (a key path is refused). */
export function parseBucketArn(arn: string): { bucket: string } | { problem: string } {
  const match = BUCKET_ARN.exec(arn);
  if (!match) {
    return arn.startsWith('arn:aws:s3:::') && arn.includes('/')
      ? { problem: 'must name a bucket only, without a key path' }
      : { problem: 'must be a bucket ARN of the form arn:aws:s3:::<bucket>' };
  }
  const bucket = match[1] as string;
  if (bucketNameProblem(bucket) !== null) {
    return {
      problem: `names '${bucket}', which is not a valid bucket name (3-63 lowercase letters, digits, dots and hyphens)`,
    };
  }
  return { bucket };
}

export function bucketArn(bucket: string): string {
  return `arn:aws:s3:::${bucket}`;
}

// Letters, digits and S3's "safe characters" without the wildcards (!-_.'()), plus '/' as the
// separator. `*` and `?` are IAM wildcards: pasted into the session policy's resource they would
// widen it past the agreed prefix.
const SAFE_PREFIX = /^[A-Za-z0-9!\-_.'()/]*$/;

/**
 * Why a key prefix is refused (submit answers 422 invalid_key_prefix), or null when it is fine.
 * The empty prefix means the bucket root.
 */
export function keyPrefixProblem(prefix: string): string | null {
  if (prefix === '') return null;
  if (!SAFE_PREFIX.test(prefix)) {
    return "may contain only letters, digits, '/' and the characters ! - _ . ' ( ) (no * or ?)";
  }
  if (prefix.startsWith('/')) return "must not start with '/'";
  if (!prefix.endsWith('/')) return "must end with '/'";
  const segments = prefix.slice(0, -1).split('/');
  if (segments.includes('..') || segments.includes('.')) return "must not contain a '.' or '..' segment";
  if (segments.includes('')) return 'must not contain an empty segment (//)';
  if (Buffer.byteLength(prefix) > KEY_PREFIX_MAX_BYTES) {
    return `must be at most ${KEY_PREFIX_MAX_BYTES} bytes, so the object key stays within 1024 bytes`;
  }
  return null;
}

/** The object key of a cargo's result: deterministic, so a retry overwrites the same object. */
export function resultObjectKey(prefix: string, cargoId: string): string {
  return `${prefix}${cargoId}.json`;
}

export function verificationObjectKey(prefix: string): string {
  return `${prefix}${VERIFICATION_OBJECT_NAME}`;
}

/** True when the connection has no allow-list, or the bucket is on it. */
export function bucketAllowed(allowList: readonly string[] | null, bucket: string): boolean {
  return targetAllowed(allowList, bucketArn(bucket));
}

/** The object-store target as it is stored with the cargo (the callback object, prefix filled in). */
export interface ObjectTarget {
  type: 'object_store';
  connection_id: string;
  bucket_arn: string;
  key_prefix: string;
}

/** Reads a stored target back; null when the text is not one (a bug or a hand-edited row). */
export function parseStoredTarget(json: string | null): (ObjectTarget & { bucket: string }) | null {
  if (json === null) return null;
  let value: Partial<ObjectTarget>;
  try {
    value = JSON.parse(json) as Partial<ObjectTarget>;
  } catch {
    return null;
  }
  if (typeof value.connection_id !== 'string' || typeof value.bucket_arn !== 'string') return null;
  const parsed = parseBucketArn(value.bucket_arn);
  if ('problem' in parsed) return null;
  const prefix = typeof value.key_prefix === 'string' ? value.key_prefix : DEFAULT_KEY_PREFIX;
  return {
    type: 'object_store',
    connection_id: value.connection_id,
    bucket_arn: value.bucket_arn,
    key_prefix: prefix,
    bucket: parsed.bucket,
  };
}
