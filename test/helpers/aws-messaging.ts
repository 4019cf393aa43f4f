/**
 * Wire-protocol emulators of Amazon SQS, SNS and EventBridge for tests: plain `node:http` servers on a
 * loopback port that the official AWS SDK v3 clients talk to when given `endpoint: <url>`.
 *
 * What the SDK (3.1169) puts on the wire, and so what these accept:
 * - SQS: AWS JSON 1.0 (`POST /`, `x-amz-target: AmazonSQS.SendMessage`, `application/x-amz-json-1.0`) with
 *   `x-amzn-query-mode: true`. Errors are JSON `{"__type", "message"}` plus the `x-amzn-query-error:
 *   <query code>;Sender` header; the SDK takes the error name from that header's code (before `__type`) and
 *   maps it back to a modelled exception by its old query code (`AWS.SimpleQueueService.NonExistentQueue` →
 *   `QueueDoesNotExist`), or names a plain `SQSServiceException` after the code (`AccessDenied`).
 * - SNS: the query protocol (form-encoded `Action=Publish&Version=2010-03-31&...`, XML answers).
 * - EventBridge: AWS JSON 1.1 (`x-amz-target: AWSEvents.PutEvents`), errors named by `__type`.
 *
 * Every request must carry a SigV4 `Authorization` header, recomputed here against a shared registry of key
 * pairs (`registerMessagingKeyPair`; the test STS endpoint registers the temporary credentials it hands out,
 * through `registerKeyPair` in s3-server.ts). Each emulator knows its resources, can deny a resource or
 * limit a key to some resources, can throttle the next n requests, enforces the real 256 KiB size limits,
 * records every accepted message and keeps every raw request (with the key that signed it).
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The account resources live in unless told otherwise (the account of the test roles). */
export const DEFAULT_ACCOUNT = '444455556666';
export const DEFAULT_REGION = 'us-east-1';
/** 256 KiB: the SQS (default), SNS and EventBridge limit on a message or a PutEvents request. */
export const MAX_MESSAGE_BYTES = 262_144;

// ---------------------------------------------------------------------------------------------------------
// Known key pairs, shared by the three emulators.

interface KnownKey {
  secretAccessKey: string;
  /** Temporary credentials: requests must carry exactly this `x-amz-security-token`. */
  sessionToken: string | undefined;
}

/** Starts with the service's own identity, the pair s3rver knows (`SERVICE_CREDENTIALS` in s3-server.ts). */
const knownKeys = new Map<string, KnownKey>([['S3RVER', { secretAccessKey: 'S3RVER', sessionToken: undefined }]]);

/** Makes a key pair valid on all three emulators (with its session token when it is a temporary one). */
export function registerMessagingKeyPair(accessKeyId: string, secretAccessKey: string, sessionToken?: string): void {
  knownKeys.set(accessKeyId, { secretAccessKey, sessionToken });
}

/** The key is no longer valid (a deleted user, expired temporary credentials). */
export function forgetMessagingKeyPair(accessKeyId: string): void {
  knownKeys.delete(accessKeyId);
}

// ---------------------------------------------------------------------------------------------------------
// SigV4 verification (header form), canonicalised as @smithy/signature-v4 does.

type AuthFailure = 'missing' | 'incomplete' | 'unknownKey' | 'badSignature';

type AuthResult =
  | { ok: true; accessKeyId: string; sessionToken: string | null }
  | { ok: false; failure: AuthFailure; message: string; accessKeyId: string | null };

const AUTH_HEADER = /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]{64})$/;
const BAD_SIGNATURE_MESSAGE =
  'The request signature we calculated does not match the signature you provided. ' +
  'Check your AWS Secret Access Key and signing method. Consult the service documentation for details.';
/** How far x-amz-date may be from the server's clock, as AWS allows. */
const MAX_SKEW_MS = 15 * 60 * 1000;

function verifySigV4(req: IncomingMessage, body: Buffer, service: string, region: string): AuthResult {
  const header = req.headers.authorization;
  if (!header) return { ok: false, failure: 'missing', message: 'Missing Authentication Token', accessKeyId: null };
  const match = AUTH_HEADER.exec(header);
  const scope = match?.[1]?.split('/') ?? [];
  const amzDate = headerValue(req.headers, 'x-amz-date');
  if (!match || scope.length !== 5 || scope[4] !== 'aws4_request') {
    return {
      ok: false,
      failure: 'incomplete',
      message: `Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters. Authorization=${header}`,
      accessKeyId: null,
    };
  }
  const [accessKeyId = '', date = '', scopeRegion = '', scopeService = ''] = scope;
  if (!amzDate || !/^\d{8}T\d{6}Z$/.test(amzDate)) {
    return {
      ok: false,
      failure: 'incomplete',
      message: "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.",
      accessKeyId,
    };
  }
  const known = knownKeys.get(accessKeyId);
  const token = headerValue(req.headers, 'x-amz-security-token') ?? null;
  if (!known || (known.sessionToken ?? null) !== token) {
    return {
      ok: false,
      failure: 'unknownKey',
      message: 'The security token included in the request is invalid.',
      accessKeyId,
    };
  }
  const bad = (message: string): AuthResult => ({ ok: false, failure: 'badSignature', message, accessKeyId });
  if (scopeService !== service) return bad(`Credential should be scoped to correct service: '${service}'. `);
  if (scopeRegion !== region) return bad('Credential should be scoped to a valid region. ');
  if (date !== amzDate.slice(0, 8)) {
    return bad(
      `Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${date}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`,
    );
  }
  const signedAt = Date.parse(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13)}`,
  );
  if (Math.abs(Date.now() - signedAt) > MAX_SKEW_MS) {
    return bad(`Signature expired: ${amzDate} is now earlier or later than the server time allows (15 minutes).`);
  }
  const signedHeaders = (match[2] ?? '').split(';');
  if (!signedHeaders.includes('host')) return bad(BAD_SIGNATURE_MESSAGE);

  const [rawPath = '/', rawQuery = ''] = (req.url ?? '/').split('?', 2);
  const canonicalRequest = [
    req.method ?? 'POST',
    canonicalPath(rawPath),
    canonicalQuery(rawQuery),
    ...signedHeaders.map((name) => `${name}:${canonicalHeaderValue(req.headers, name)}`),
    '',
    signedHeaders.join(';'),
    sha256Hex(body),
  ].join('\n');
  const credentialScope = `${date}/${scopeRegion}/${scopeService}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  let key: Buffer = hmac(`AWS4${known.secretAccessKey}`, date);
  for (const part of [scopeRegion, scopeService, 'aws4_request']) key = hmac(key, part);
  const expected = Buffer.from(hmac(key, stringToSign).toString('hex'));
  const given = Buffer.from(match[3] ?? '');
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return bad(BAD_SIGNATURE_MESSAGE);
  return { ok: true, accessKeyId, sessionToken: token };
}

/** RFC 3986 encoding, as the signer's escapeUri. */
function escapeUri(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Non-S3 services: the normalised path, URI-encoded once more (the wire path is already encoded). */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `/${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return escapeUri(normalized).replace(/%2F/g, '/');
}

function canonicalQuery(query: string): string {
  if (!query) return '';
  return query
    .split('&')
    .filter(Boolean)
    .map((pair) => {
      const [k = '', v = ''] = pair.split('=', 2);
      return [escapeUri(decodeURIComponent(k)), escapeUri(decodeURIComponent(v))] as const;
    })
    .sort(([ka, va], [kb, vb]) => (ka === kb ? (va < vb ? -1 : 1) : ka < kb ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
}

function canonicalHeaderValue(headers: IncomingHttpHeaders, name: string): string {
  const value = headers[name];
  const text = Array.isArray(value) ? value.join(',') : (value ?? '');
  return text
    .replace(/[\r\n]/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .trim();
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

// ---------------------------------------------------------------------------------------------------------
// Shared plumbing: errors, access control, throttling, the raw request log, the server.

/** An error the service answers; each emulator renders it in its own protocol. */
class ServiceError extends Error {
  constructor(
    readonly status: number,
    /** The code the SDK sees: the query code for SQS and SNS, the `__type` for EventBridge. */
    readonly code: string,
    message: string,
    /** SQS only: the JSON `__type` sent next to the `x-amzn-query-error` code. */
    readonly jsonType?: string,
  ) {
    super(message);
  }
}

/** A request as it reached an emulator, and what it was answered. */
export interface RawRequest {
  /** `AmazonSQS.SendMessage`, `Publish`, `AWSEvents.PutEvents`, ... (null when absent). */
  operation: string | null;
  headers: IncomingHttpHeaders;
  body: string;
  /** The access key id the request was signed with (as claimed, even when authentication failed). */
  accessKeyId: string | null;
  sessionToken: string | null;
  status: number;
  /** The error code answered, null on success. */
  errorCode: string | null;
}

/** A message attribute, in the SDK's shape (binary values decoded). */
export interface MessageAttribute {
  DataType: string;
  StringValue?: string;
  BinaryValue?: Buffer;
}

/** Controls shared by the three emulators. */
export interface EndpointControls {
  url: string;
  region: string;
  /** Every request received, in order. */
  requests: RawRequest[];
  /** Every send to this resource (ARN) is refused as the service's access-denied error. */
  deny(resourceArn: string, on?: boolean): void;
  /** Limits a key to these resources (ARNs), like a session policy; null lifts the limit. */
  allowOnly(accessKeyId: string, resourceArns: string[] | null): void;
  /** The next n authenticated requests are answered with the service's throttling error. */
  throttle(n: number): void;
  close(): Promise<void>;
}

interface Exchange {
  operation: string | null;
  body: Buffer;
  accessKeyId: string;
  requestId: string;
  /** Throws the access-denied error unless the key may send to this resource. */
  authorize(resourceArn: string): void;
}

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface ProtocolSpec {
  /** The SigV4 signing name: sqs, sns, events. */
  service: string;
  region: string;
  operationOf(req: IncomingMessage, body: Buffer): string | null;
  authError(failure: AuthFailure, message: string): ServiceError;
  throttled(): ServiceError;
  denied(accessKeyId: string, resourceArn: string): ServiceError;
  renderError(error: ServiceError, req: IncomingMessage, requestId: string): Answer;
  handle(exchange: Exchange): Answer;
}

async function startProtocolServer(spec: ProtocolSpec) {
  const requests: RawRequest[] = [];
  const denied = new Set<string>();
  const allowLists = new Map<string, Set<string>>();
  let throttleCount = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const requestId = randomUUID();
      const operation = spec.operationOf(req, body);
      const raw: RawRequest = {
        operation,
        headers: req.headers,
        body: body.toString('utf8'),
        accessKeyId: null,
        sessionToken: null,
        status: 0,
        errorCode: null,
      };
      requests.push(raw);
      let answer: Answer;
      try {
        const auth = verifySigV4(req, body, spec.service, spec.region);
        raw.accessKeyId = auth.accessKeyId;
        if (!auth.ok) throw spec.authError(auth.failure, auth.message);
        raw.sessionToken = auth.sessionToken;
        if (throttleCount > 0) {
          throttleCount--;
          throw spec.throttled();
        }
        const { accessKeyId } = auth;
        answer = spec.handle({
          operation,
          body,
          accessKeyId,
          requestId,
          authorize(resourceArn) {
            const allowList = allowLists.get(accessKeyId);
            if (denied.has(resourceArn) || (allowList && !allowList.has(resourceArn))) {
              throw spec.denied(accessKeyId, resourceArn);
            }
          },
        });
      } catch (caught) {
        // A bug in the emulator answers 500 rather than taking the test process down.
        const error =
          caught instanceof ServiceError
            ? caught
            : new ServiceError(500, 'InternalFailure', String(caught), 'InternalFailure');
        raw.errorCode = error.code;
        answer = spec.renderError(error, req, requestId);
      }
      raw.status = answer.status;
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const controls: EndpointControls = {
    url: `http://127.0.0.1:${port}`,
    region: spec.region,
    requests,
    deny(resourceArn, on = true) {
      if (on) denied.add(resourceArn);
      else denied.delete(resourceArn);
    },
    allowOnly(accessKeyId, resourceArns) {
      if (resourceArns) allowLists.set(accessKeyId, new Set(resourceArns));
      else allowLists.delete(accessKeyId);
    },
    throttle(n) {
      throttleCount = n;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return controls;
}

function jsonAnswer(version: '1.0' | '1.1', requestId: string, value: unknown, status = 200): Answer {
  return {
    status,
    headers: { 'content-type': `application/x-amz-json-${version}`, 'x-amzn-requestid': requestId },
    body: JSON.stringify(value),
  };
}

function parseJsonBody(body: Buffer): Record<string, unknown> {
  try {
    const value = JSON.parse(body.toString('utf8')) as unknown;
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw new ServiceError(400, 'SerializationException', 'Start of structure or map found where not expected.');
}

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

/** Size of message attributes as SQS and SNS count it: name, type and value bytes. */
function attributesSize(attributes: Record<string, MessageAttribute>): number {
  let size = 0;
  for (const [name, a] of Object.entries(attributes)) {
    size += utf8Length(name) + utf8Length(a.DataType);
    size += a.BinaryValue ? a.BinaryValue.length : utf8Length(a.StringValue ?? '');
  }
  return size;
}

const md5Hex = (data: string | Buffer) => createHash('md5').update(data).digest('hex');

/**
 * MD5OfMessageAttributes as SQS computes it (the Java SDK's MessageMD5ChecksumHandler): attributes sorted by
 * name; each as length-prefixed (4-byte big-endian) name and data type, a transport byte (1 string, 2
 * binary) and the length-prefixed value.
 */
export function md5OfMessageAttributes(attributes: Record<string, MessageAttribute>): string {
  const hash = createHash('md5');
  const prefixed = (bytes: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(bytes.length);
    hash.update(length).update(bytes);
  };
  for (const name of Object.keys(attributes).sort()) {
    const a = attributes[name] as MessageAttribute;
    prefixed(Buffer.from(name, 'utf8'));
    prefixed(Buffer.from(a.DataType, 'utf8'));
    if (a.BinaryValue) {
      hash.update(Buffer.from([2]));
      prefixed(a.BinaryValue);
    } else {
      hash.update(Buffer.from([1]));
      prefixed(Buffer.from(a.StringValue ?? '', 'utf8'));
    }
  }
  return hash.digest('hex');
}

/** A decimal sequence number like the 20-digit ones FIFO queues and topics answer. */
function sequenceNumber(n: number): string {
  return `${10_000_000_000_000_000_000n + BigInt(n)}`;
}

function escapeXml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const notAuthorized = (accessKeyId: string, action: string, resourceArn: string) =>
  `User: ${accessKeyId} is not authorized to perform: ${action} on resource: ${resourceArn} ` +
  `because no identity-based policy allows the ${action} action`;

// ---------------------------------------------------------------------------------------------------------
// SQS: AWS JSON 1.0, query-compatible errors.

export interface SqsMessage {
  queueUrl: string;
  queueArn: string;
  body: string;
  /** MessageAttributes as sent ({} when none). */
  attributes: Record<string, MessageAttribute>;
  /** MessageSystemAttributes as sent (AWSTraceHeader), {} when none. */
  systemAttributes: Record<string, MessageAttribute>;
  delaySeconds: number | undefined;
  messageGroupId: string | undefined;
  messageDeduplicationId: string | undefined;
  messageId: string;
  accessKeyId: string;
}

export interface SqsQueue {
  name: string;
  account: string;
  url: string;
  arn: string;
  /** The queue's MaximumMessageSize (body plus attributes), 262,144 unless set. */
  maximumMessageSize: number;
  contentBasedDeduplication: boolean;
}

/** SQS errors: HTTP status, query code (x-amzn-query-error, what the SDK names), JSON __type. */
const sqsError = (status: number, code: string, jsonType: string, message: string) =>
  new ServiceError(status, code, message, jsonType);
const sqsInvalidParameter = (message: string) =>
  sqsError(400, 'InvalidParameterValue', 'com.amazon.coral.service#InvalidParameterValueException', message);
const sqsMissingParameter = (name: string) =>
  sqsError(
    400,
    'MissingParameter',
    'com.amazon.coral.service#MissingParameterException',
    `The request must contain the parameter ${name}.`,
  );

/**
 * An SQS endpoint. Queues are addressed by URL `http://127.0.0.1:<port>/<account>/<name>` (only the path
 * counts, as SQS resolves a QueueUrl), ARN `arn:aws:sqs:<region>:<account>:<name>`. Implements SendMessage
 * and GetQueueUrl.
 *
 * Answers: unknown queue → 400 `AWS.SimpleQueueService.NonExistentQueue` (SDK: QueueDoesNotExist); malformed
 * QueueUrl → 404 `InvalidAddress`; denied → 403 `AccessDenied`; throttled → 403 `RequestThrottled` (the
 * model's status; the SDK classes it as throttling by name); body plus attributes over the queue's
 * MaximumMessageSize → 400 `InvalidParameterValue` "One or more parameters are invalid. Reason: Message must
 * be shorter than 262144 bytes."; unknown key or wrong session token → 403 `InvalidClientTokenId`; bad
 * signature → 403 `SignatureDoesNotMatch`.
 */
export async function startSqsEndpoint(options: { region?: string } = {}) {
  const region = options.region ?? DEFAULT_REGION;
  const queues = new Map<string, SqsQueue>();
  const messages: SqsMessage[] = [];
  let sequence = 0;
  let baseUrl = '';
  const arnOf = (account: string, name: string) => `arn:aws:sqs:${region}:${account}:${name}`;

  /** The queue a QueueUrl names: its account and name, from the path. */
  const parseQueueUrl = (queueUrl: string) => {
    let path: string;
    try {
      path = new URL(queueUrl).pathname;
    } catch {
      path = '';
    }
    const match = /^\/(\d{12})\/([A-Za-z0-9_-]{1,80}(?:\.fifo)?)$/.exec(path);
    if (!match) {
      throw sqsError(
        404,
        'InvalidAddress',
        'com.amazonaws.sqs#InvalidAddress',
        `The address ${queueUrl} is not valid for this endpoint.`,
      );
    }
    return { account: match[1] as string, name: match[2] as string };
  };
  const notFound = () =>
    sqsError(
      400,
      'AWS.SimpleQueueService.NonExistentQueue',
      'com.amazonaws.sqs#QueueDoesNotExist',
      'The specified queue does not exist.',
    );

  const sendMessage = (exchange: Exchange, input: Record<string, unknown>) => {
    if (typeof input.QueueUrl !== 'string') throw sqsMissingParameter('QueueUrl');
    const { account, name } = parseQueueUrl(input.QueueUrl);
    const queueArn = arnOf(account, name);
    exchange.authorize(queueArn);
    const queue = queues.get(queueArn);
    if (!queue) throw notFound();
    const body = input.MessageBody;
    if (typeof body !== 'string' || body.length === 0) throw sqsMissingParameter('MessageBody');
    const invalid = firstInvalidSqsCharacter(body);
    if (invalid !== null) {
      throw sqsError(
        400,
        'InvalidMessageContents',
        'com.amazonaws.sqs#InvalidMessageContents',
        `Invalid binary character '#x${invalid.toString(16).toUpperCase()}' was found in the message body, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF`,
      );
    }
    const attributes = parseSqsAttributes(input.MessageAttributes);
    const systemAttributes = parseSqsAttributes(input.MessageSystemAttributes);
    if (utf8Length(body) + attributesSize(attributes) > queue.maximumMessageSize) {
      throw sqsInvalidParameter(
        `One or more parameters are invalid. Reason: Message must be shorter than ${queue.maximumMessageSize} bytes.`,
      );
    }
    const delaySeconds = input.DelaySeconds as number | undefined;
    if (delaySeconds !== undefined && !(Number.isInteger(delaySeconds) && delaySeconds >= 0 && delaySeconds <= 900)) {
      throw sqsInvalidParameter(
        `Value ${delaySeconds} for parameter DelaySeconds is invalid. Reason: must be between 0 and 900, if provided.`,
      );
    }
    const messageGroupId = input.MessageGroupId as string | undefined;
    const messageDeduplicationId = input.MessageDeduplicationId as string | undefined;
    const fifo = name.endsWith('.fifo');
    if (fifo && !messageGroupId) throw sqsMissingParameter('MessageGroupId');
    if (fifo && !messageDeduplicationId && !queue.contentBasedDeduplication) {
      throw sqsInvalidParameter(
        'The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
      );
    }
    const messageId = randomUUID();
    messages.push({
      queueUrl: queue.url,
      queueArn,
      body,
      attributes,
      systemAttributes,
      delaySeconds,
      messageGroupId,
      messageDeduplicationId,
      messageId,
      accessKeyId: exchange.accessKeyId,
    });
    return jsonAnswer('1.0', exchange.requestId, {
      MD5OfMessageBody: md5Hex(Buffer.from(body, 'utf8')),
      ...(Object.keys(attributes).length > 0 ? { MD5OfMessageAttributes: md5OfMessageAttributes(attributes) } : {}),
      ...(Object.keys(systemAttributes).length > 0
        ? { MD5OfMessageSystemAttributes: md5OfMessageAttributes(systemAttributes) }
        : {}),
      MessageId: messageId,
      ...(fifo ? { SequenceNumber: sequenceNumber(++sequence) } : {}),
    });
  };

  const getQueueUrl = (exchange: Exchange, input: Record<string, unknown>) => {
    if (typeof input.QueueName !== 'string') throw sqsMissingParameter('QueueName');
    const account = typeof input.QueueOwnerAWSAccountId === 'string' ? input.QueueOwnerAWSAccountId : DEFAULT_ACCOUNT;
    const queueArn = arnOf(account, input.QueueName);
    exchange.authorize(queueArn);
    const queue = queues.get(queueArn);
    if (!queue) throw notFound();
    return jsonAnswer('1.0', exchange.requestId, { QueueUrl: queue.url });
  };

  const controls = await startProtocolServer({
    service: 'sqs',
    region,
    operationOf: (req) => headerValue(req.headers, 'x-amz-target') ?? null,
    authError(failure, message) {
      switch (failure) {
        case 'missing':
          return sqsError(
            403,
            'MissingAuthenticationToken',
            'com.amazon.coral.service#MissingAuthenticationTokenException',
            message,
          );
        case 'incomplete':
          return sqsError(400, 'IncompleteSignature', 'com.amazon.coral.service#IncompleteSignatureException', message);
        case 'unknownKey':
          return sqsError(403, 'InvalidClientTokenId', 'com.amazon.coral.service#UnrecognizedClientException', message);
        case 'badSignature':
          return sqsError(403, 'SignatureDoesNotMatch', 'com.amazon.coral.service#InvalidSignatureException', message);
      }
    },
    throttled: () => sqsError(403, 'RequestThrottled', 'com.amazonaws.sqs#RequestThrottled', 'Rate exceeded'),
    denied: (accessKeyId, arn) =>
      sqsError(
        403,
        'AccessDenied',
        'com.amazon.coral.service#AccessDeniedException',
        notAuthorized(accessKeyId, 'sqs:sendmessage', arn),
      ),
    renderError(error, req, requestId) {
      const headers: Record<string, string> = {
        'content-type': 'application/x-amz-json-1.0',
        'x-amzn-requestid': requestId,
      };
      // The service answers the old query code only to clients that ask for it (the SDK always does).
      if (headerValue(req.headers, 'x-amzn-query-mode') === 'true') {
        headers['x-amzn-query-error'] = `${error.code};${error.status >= 500 ? 'Receiver' : 'Sender'}`;
      }
      return {
        status: error.status,
        headers,
        body: JSON.stringify({ __type: error.jsonType ?? error.code, message: error.message }),
      };
    },
    handle(exchange) {
      switch (exchange.operation) {
        case 'AmazonSQS.SendMessage':
          return sendMessage(exchange, parseJsonBody(exchange.body));
        case 'AmazonSQS.GetQueueUrl':
          return getQueueUrl(exchange, parseJsonBody(exchange.body));
        default:
          throw sqsError(
            400,
            'InvalidAction',
            'com.amazon.coral.service#UnknownOperationException',
            `The emulator does not implement ${exchange.operation}`,
          );
      }
    },
  });
  baseUrl = controls.url;

  return {
    ...controls,
    /** Every accepted message, in order. */
    messages,
    /** Creates a queue (a `.fifo` name makes a FIFO queue) and returns it. */
    createQueue(
      name: string,
      account = DEFAULT_ACCOUNT,
      queueOptions: { maximumMessageSize?: number; contentBasedDeduplication?: boolean } = {},
    ): SqsQueue {
      const queue: SqsQueue = {
        name,
        account,
        url: `${baseUrl}/${account}/${name}`,
        arn: arnOf(account, name),
        maximumMessageSize: queueOptions.maximumMessageSize ?? MAX_MESSAGE_BYTES,
        contentBasedDeduplication: queueOptions.contentBasedDeduplication ?? false,
      };
      queues.set(queue.arn, queue);
      return queue;
    },
    /** Deletes a queue by URL or ARN (a customer deleting it). */
    deleteQueue(urlOrArn: string): void {
      for (const [arn, queue] of queues) if (arn === urlOrArn || queue.url === urlOrArn) queues.delete(arn);
    },
  };
}

export type SqsEndpoint = Awaited<ReturnType<typeof startSqsEndpoint>>;

/** The first code point SQS refuses in a body, or null. */
function firstInvalidSqsCharacter(text: string): number | null {
  for (const char of text) {
    const c = char.codePointAt(0) as number;
    const ok =
      c === 0x9 ||
      c === 0xa ||
      c === 0xd ||
      (c >= 0x20 && c <= 0xd7ff) ||
      (c >= 0xe000 && c <= 0xfffd) ||
      (c >= 0x10000 && c <= 0x10ffff);
    if (!ok) return c;
  }
  return null;
}

/** MessageAttributes from the JSON body: `{name: {DataType, StringValue | BinaryValue (base64)}}`. */
function parseSqsAttributes(value: unknown): Record<string, MessageAttribute> {
  const attributes: Record<string, MessageAttribute> = {};
  if (value === undefined || value === null) return attributes;
  if (typeof value !== 'object') throw sqsInvalidParameter('MessageAttributes must be a map.');
  const entries = Object.entries(value as Record<string, Record<string, unknown>>);
  if (entries.length > 10) {
    throw sqsInvalidParameter(`Number of message attributes [${entries.length}] exceeds the allowed maximum [10].`);
  }
  for (const [name, raw] of entries) {
    const dataType = raw?.DataType;
    if (typeof dataType !== 'string' || !/^(String|Number|Binary)(\..+)?$/.test(dataType)) {
      throw sqsInvalidParameter(`The type of message (user) attribute '${name}' is invalid.`);
    }
    if (dataType.startsWith('Binary')) {
      if (typeof raw.BinaryValue !== 'string' || raw.BinaryValue.length === 0) {
        throw sqsInvalidParameter(
          `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${dataType}'.`,
        );
      }
      attributes[name] = { DataType: dataType, BinaryValue: Buffer.from(raw.BinaryValue, 'base64') };
    } else {
      if (typeof raw.StringValue !== 'string' || raw.StringValue.length === 0) {
        throw sqsInvalidParameter(
          `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${dataType}'.`,
        );
      }
      attributes[name] = { DataType: dataType, StringValue: raw.StringValue };
    }
  }
  return attributes;
}

// ---------------------------------------------------------------------------------------------------------
// SNS: the query protocol, XML answers.

export interface SnsMessage {
  topicArn: string;
  message: string;
  subject: string | undefined;
  messageStructure: string | undefined;
  /** MessageAttributes as sent ({} when none). */
  attributes: Record<string, MessageAttribute>;
  messageGroupId: string | undefined;
  messageDeduplicationId: string | undefined;
  messageId: string;
  accessKeyId: string;
}

export interface SnsTopic {
  name: string;
  account: string;
  arn: string;
  contentBasedDeduplication: boolean;
}

const SNS_XMLNS = 'http://sns.amazonaws.com/doc/2010-03-31/';
const snsInvalidParameter = (what: string) => new ServiceError(400, 'InvalidParameter', `Invalid parameter: ${what}`);

/**
 * An SNS endpoint. Topics are addressed by ARN `arn:aws:sns:<region>:<account>:<name>`. Implements Publish.
 *
 * Answers: unknown topic → 404 `NotFound` "Topic does not exist" (SDK: NotFoundException); denied → 403
 * `AuthorizationError` (SDK: AuthorizationErrorException); throttled → 400 `Throttling` "Rate exceeded" (the
 * generic AWS throttling code SNS answers on Publish; the SDK names an SNSServiceException `Throttling` and
 * classes it as throttling); message plus attributes over 262,144 bytes → 400 `InvalidParameter` "Invalid
 * parameter: Message too long" (SDK: InvalidParameterException); unknown key or wrong session token → 403
 * `InvalidClientTokenId`; bad signature → 403 `SignatureDoesNotMatch`.
 */
export async function startSnsEndpoint(options: { region?: string } = {}) {
  const region = options.region ?? DEFAULT_REGION;
  const topics = new Map<string, SnsTopic>();
  const messages: SnsMessage[] = [];
  let sequence = 0;

  const publish = (exchange: Exchange, form: URLSearchParams) => {
    const topicArn = form.get('TopicArn') ?? form.get('TargetArn');
    if (!topicArn) {
      throw snsInvalidParameter('TopicArn or TargetArn Reason: no value for required parameter');
    }
    if (!/^arn:aws:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(topicArn)) {
      throw snsInvalidParameter('TopicArn');
    }
    exchange.authorize(topicArn);
    const topic = topics.get(topicArn);
    if (!topic) throw new ServiceError(404, 'NotFound', 'Topic does not exist');
    const message = form.get('Message');
    if (!message) throw snsInvalidParameter('Empty message');
    const subject = form.get('Subject') ?? undefined;
    if (subject !== undefined && !/^[\x20-\x7e]{1,100}$/.test(subject)) throw snsInvalidParameter('Subject');
    const messageStructure = form.get('MessageStructure') ?? undefined;
    if (messageStructure !== undefined) {
      if (messageStructure !== 'json') throw snsInvalidParameter('MessageStructure');
      let parsed: unknown;
      try {
        parsed = JSON.parse(message);
      } catch {
        throw snsInvalidParameter('Message Structure - JSON message body failed to parse');
      }
      if (!parsed || typeof parsed !== 'object' || typeof (parsed as { default?: unknown }).default !== 'string') {
        throw snsInvalidParameter('Message Structure - No default entry in JSON message body');
      }
    }
    const attributes = parseSnsAttributes(form);
    if (utf8Length(message) + attributesSize(attributes) > MAX_MESSAGE_BYTES) {
      throw snsInvalidParameter('Message too long');
    }
    const messageGroupId = form.get('MessageGroupId') ?? undefined;
    const messageDeduplicationId = form.get('MessageDeduplicationId') ?? undefined;
    const fifo = topic.name.endsWith('.fifo');
    if (fifo && !messageGroupId) {
      throw snsInvalidParameter('The MessageGroupId parameter is required for FIFO topics');
    }
    if (fifo && !messageDeduplicationId && !topic.contentBasedDeduplication) {
      throw snsInvalidParameter(
        'The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly',
      );
    }
    const messageId = randomUUID();
    messages.push({
      topicArn,
      message,
      subject,
      messageStructure,
      attributes,
      messageGroupId,
      messageDeduplicationId,
      messageId,
      accessKeyId: exchange.accessKeyId,
    });
    const sequenceXml = fifo ? `<SequenceNumber>${sequenceNumber(++sequence)}</SequenceNumber>` : '';
    return {
      status: 200,
      headers: { 'content-type': 'text/xml', 'x-amzn-requestid': exchange.requestId },
      body:
        `<PublishResponse xmlns="${SNS_XMLNS}"><PublishResult><MessageId>${messageId}</MessageId>${sequenceXml}` +
        `</PublishResult><ResponseMetadata><RequestId>${exchange.requestId}</RequestId></ResponseMetadata></PublishResponse>`,
    };
  };

  const controls = await startProtocolServer({
    service: 'sns',
    region,
    operationOf: (_req, body) => new URLSearchParams(body.toString('utf8')).get('Action'),
    authError(failure, message) {
      switch (failure) {
        case 'missing':
          return new ServiceError(403, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
        case 'incomplete':
          return new ServiceError(400, 'IncompleteSignature', message);
        case 'unknownKey':
          return new ServiceError(403, 'InvalidClientTokenId', message);
        case 'badSignature':
          return new ServiceError(403, 'SignatureDoesNotMatch', message);
      }
    },
    throttled: () => new ServiceError(400, 'Throttling', 'Rate exceeded'),
    denied: (accessKeyId, arn) =>
      new ServiceError(403, 'AuthorizationError', notAuthorized(accessKeyId, 'SNS:Publish', arn)),
    renderError(error, _req, requestId) {
      const type = error.status >= 500 ? 'Receiver' : 'Sender';
      return {
        status: error.status,
        headers: { 'content-type': 'text/xml', 'x-amzn-requestid': requestId },
        body:
          `<ErrorResponse xmlns="${SNS_XMLNS}"><Error><Type>${type}</Type><Code>${error.code}</Code>` +
          `<Message>${escapeXml(error.message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
      };
    },
    handle(exchange) {
      const form = new URLSearchParams(exchange.body.toString('utf8'));
      if (exchange.operation === 'Publish' && form.get('Version') === '2010-03-31') return publish(exchange, form);
      throw new ServiceError(
        400,
        'InvalidAction',
        `Could not find operation ${exchange.operation} for version ${form.get('Version')} (in this emulator)`,
      );
    },
  });

  return {
    ...controls,
    /** Every accepted message, in order. */
    messages,
    /** Creates a topic (a `.fifo` name makes a FIFO topic) and returns it. */
    createTopic(name: string, account = DEFAULT_ACCOUNT, topicOptions: { contentBasedDeduplication?: boolean } = {}) {
      const topic: SnsTopic = {
        name,
        account,
        arn: `arn:aws:sns:${region}:${account}:${name}`,
        contentBasedDeduplication: topicOptions.contentBasedDeduplication ?? false,
      };
      topics.set(topic.arn, topic);
      return topic;
    },
    deleteTopic(arn: string): void {
      topics.delete(arn);
    },
  };
}

export type SnsEndpoint = Awaited<ReturnType<typeof startSnsEndpoint>>;

/** `MessageAttributes.entry.N.Name`, `.Value.DataType`, `.Value.StringValue` / `.Value.BinaryValue` (base64). */
function parseSnsAttributes(form: URLSearchParams): Record<string, MessageAttribute> {
  const attributes: Record<string, MessageAttribute> = {};
  for (let n = 1; form.has(`MessageAttributes.entry.${n}.Name`); n++) {
    const prefix = `MessageAttributes.entry.${n}`;
    const name = form.get(`${prefix}.Name`) as string;
    const dataType = form.get(`${prefix}.Value.DataType`);
    const stringValue = form.get(`${prefix}.Value.StringValue`);
    const binaryValue = form.get(`${prefix}.Value.BinaryValue`);
    if (!dataType || !/^(String|String\.Array|Number|Binary)(\..+)?$/.test(dataType)) {
      throw snsInvalidParameter(`Message attributes Reason: The type of message attribute '${name}' is invalid.`);
    }
    if (dataType.startsWith('Binary')) {
      if (!binaryValue) throw snsInvalidParameter(`Message attributes Reason: Value of '${name}' must not be empty.`);
      attributes[name] = { DataType: dataType, BinaryValue: Buffer.from(binaryValue, 'base64') };
    } else {
      if (!stringValue) throw snsInvalidParameter(`Message attributes Reason: Value of '${name}' must not be empty.`);
      attributes[name] = { DataType: dataType, StringValue: stringValue };
    }
  }
  return attributes;
}

// ---------------------------------------------------------------------------------------------------------
// EventBridge: AWS JSON 1.1.

export interface EventBridgeEvent {
  busName: string;
  busArn: string;
  source: string;
  detailType: string;
  detail: string;
  resources: string[];
  time: Date | undefined;
  traceHeader: string | undefined;
  eventId: string;
  accessKeyId: string;
}

export interface EventBus {
  name: string;
  account: string;
  arn: string;
}

const BUS_NAME_PATTERN = /^(arn:aws[\w-]*:events:[a-z]{2}-[a-z]+-[\w-]+:[0-9]{12}:event-bus\/)?[/.\-_A-Za-z0-9]+$/;
const ebValidation = (message: string) => new ServiceError(400, 'ValidationException', message);

/**
 * The size of a PutEvents entry as AWS documents it ("Calculating PutEvents event entry size"): 14 bytes
 * when Time is set, plus the UTF-8 bytes of Source, DetailType, Detail and each Resources entry.
 */
export function putEventsEntrySize(entry: {
  Time?: unknown;
  Source?: string;
  DetailType?: string;
  Detail?: string;
  Resources?: string[];
}): number {
  let size = entry.Time !== undefined && entry.Time !== null ? 14 : 0;
  size += utf8Length(entry.Source ?? '') + utf8Length(entry.DetailType ?? '') + utf8Length(entry.Detail ?? '');
  for (const resource of entry.Resources ?? []) size += utf8Length(resource);
  return size;
}

/**
 * An EventBridge endpoint. Buses are addressed by name (in the default account) or ARN
 * `arn:aws:events:<region>:<account>:event-bus/<name>`; every account has its `default` bus. Implements
 * PutEvents.
 *
 * What real EventBridge does, and so this: entries whose total size (`putEventsEntrySize`) is over 262,144
 * bytes fail the whole request with 400 `ValidationException` "Total size of the entries in the request is
 * over the limit." (a single entry of exactly 262,144 passes); more than 10 entries → 400
 * `ValidationException`; an entry without Source, DetailType or Detail → per-entry `InvalidArgument`, a
 * Detail that is not a JSON object → per-entry `MalformedDetail` (HTTP 200, FailedEntryCount counts them).
 * PutEvents to a bus that does not exist SUCCEEDS on real EventBridge (an EventId, FailedEntryCount 0; the
 * event is dropped): that is the default here, such events land in `dropped`, not `events`. With
 * `{ unknownBus: 'not-found' }` the request fails instead with 400 `ResourceNotFoundException` "Event bus
 * <name> does not exist." (what DescribeEventBus and PutPermission answer), for tests that want it loud.
 * Denied → 400 `AccessDeniedException`; throttled → 400 `ThrottlingException` "Rate exceeded"; unknown key or
 * wrong session token → 400 `UnrecognizedClientException`; bad signature → 400 `InvalidSignatureException`.
 */
export async function startEventBridgeEndpoint(options: { region?: string; unknownBus?: 'accept' | 'not-found' } = {}) {
  const region = options.region ?? DEFAULT_REGION;
  const unknownBus = options.unknownBus ?? 'accept';
  const buses = new Map<string, EventBus>();
  const events: EventBridgeEvent[] = [];
  const dropped: EventBridgeEvent[] = [];

  /** The bus an EventBusName names (name in the default account, or ARN), existing or not. */
  const resolveBus = (value: unknown, index: number) => {
    const text = typeof value === 'string' && value !== '' ? value : 'default';
    if (!BUS_NAME_PATTERN.test(text) || text.length > 1600) {
      throw ebValidation(
        `1 validation error detected: Value '${text}' at 'entries.${index + 1}.member.eventBusName' failed to satisfy constraint: Member must satisfy regular expression pattern: ${BUS_NAME_PATTERN.source}`,
      );
    }
    const arnMatch = /^arn:[^:]+:events:([^:]+):(\d{12}):event-bus\/(.+)$/.exec(text);
    const [busRegion, account, name] = arnMatch
      ? [arnMatch[1], arnMatch[2], arnMatch[3]]
      : [region, DEFAULT_ACCOUNT, text];
    const arn = `arn:aws:events:${busRegion}:${account}:event-bus/${name}`;
    const exists = buses.has(arn) || (name === 'default' && busRegion === region);
    return { name: name as string, arn, exists };
  };

  const putEvents = (exchange: Exchange, input: Record<string, unknown>) => {
    const entries = input.Entries;
    if (!Array.isArray(entries) || entries.length < 1 || entries.length > 10) {
      const length = Array.isArray(entries) ? entries.length : 0;
      throw ebValidation(
        `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length ${length < 1 ? 'greater than or equal to 1' : 'less than or equal to 10'}`,
      );
    }
    const typed = entries as Record<string, unknown>[];
    const total = typed.reduce((sum, e) => sum + putEventsEntrySize(e as Parameters<typeof putEventsEntrySize>[0]), 0);
    if (total > MAX_MESSAGE_BYTES) throw ebValidation('Total size of the entries in the request is over the limit.');
    const targets = typed.map((e, i) => resolveBus(e.EventBusName, i));
    for (const target of targets) exchange.authorize(target.arn);
    if (unknownBus === 'not-found') {
      const missing = targets.find((t) => !t.exists);
      if (missing)
        throw new ServiceError(400, 'ResourceNotFoundException', `Event bus ${missing.name} does not exist.`);
    }
    let failed = 0;
    const results = typed.map((entry, i) => {
      const problem = entryProblem(entry);
      if (problem) {
        failed++;
        return problem;
      }
      const target = targets[i] as { name: string; arn: string; exists: boolean };
      const eventId = randomUUID();
      (target.exists ? events : dropped).push({
        busName: target.name,
        busArn: target.arn,
        source: entry.Source as string,
        detailType: entry.DetailType as string,
        detail: entry.Detail as string,
        resources: (entry.Resources as string[] | undefined) ?? [],
        time: typeof entry.Time === 'number' ? new Date(entry.Time * 1000) : undefined,
        traceHeader: entry.TraceHeader as string | undefined,
        eventId,
        accessKeyId: exchange.accessKeyId,
      });
      return { EventId: eventId };
    });
    return jsonAnswer('1.1', exchange.requestId, { FailedEntryCount: failed, Entries: results });
  };

  const controls = await startProtocolServer({
    service: 'events',
    region,
    operationOf: (req) => headerValue(req.headers, 'x-amz-target') ?? null,
    authError(failure, message) {
      switch (failure) {
        case 'missing':
          return new ServiceError(400, 'MissingAuthenticationTokenException', message);
        case 'incomplete':
          return new ServiceError(400, 'IncompleteSignatureException', message);
        case 'unknownKey':
          return new ServiceError(400, 'UnrecognizedClientException', message);
        case 'badSignature':
          return new ServiceError(400, 'InvalidSignatureException', message);
      }
    },
    throttled: () => new ServiceError(400, 'ThrottlingException', 'Rate exceeded'),
    denied: (accessKeyId, arn) =>
      new ServiceError(400, 'AccessDeniedException', notAuthorized(accessKeyId, 'events:PutEvents', arn)),
    renderError: (error, _req, requestId) =>
      jsonAnswer('1.1', requestId, { __type: error.code, message: error.message }, error.status),
    handle(exchange) {
      if (exchange.operation === 'AWSEvents.PutEvents') return putEvents(exchange, parseJsonBody(exchange.body));
      throw new ServiceError(400, 'UnknownOperationException', `The emulator does not implement ${exchange.operation}`);
    },
  });

  return {
    ...controls,
    /** Every event accepted onto an existing bus, in order. */
    events,
    /** Events accepted for a bus that does not exist (real EventBridge answers success and drops them). */
    dropped,
    /** Creates a custom bus and returns it (`default` exists already). */
    createBus(name: string, account = DEFAULT_ACCOUNT): EventBus {
      const bus = { name, account, arn: `arn:aws:events:${region}:${account}:event-bus/${name}` };
      buses.set(bus.arn, bus);
      return bus;
    },
    deleteBus(nameOrArn: string): void {
      for (const [arn, bus] of buses) if (arn === nameOrArn || bus.name === nameOrArn) buses.delete(arn);
    },
  };
}

export type EventBridgeEndpoint = Awaited<ReturnType<typeof startEventBridgeEndpoint>>;

/** The per-entry failure real EventBridge answers for an entry, or null when it is fine. */
function entryProblem(entry: Record<string, unknown>): { ErrorCode: string; ErrorMessage: string } | null {
  for (const field of ['Source', 'DetailType', 'Detail']) {
    if (typeof entry[field] !== 'string' || entry[field] === '') {
      return {
        ErrorCode: 'InvalidArgument',
        ErrorMessage: `Parameter ${field} is not valid. Reason: ${field} is a required argument.`,
      };
    }
  }
  let detail: unknown;
  try {
    detail = JSON.parse(entry.Detail as string);
  } catch {
    detail = null;
  }
  if (!detail || typeof detail !== 'object' || Array.isArray(detail)) {
    return { ErrorCode: 'MalformedDetail', ErrorMessage: 'Detail is malformed.' };
  }
  return null;
}
