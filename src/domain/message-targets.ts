/**
 * The direct cloud message targets (interface document 6.4, decisions.md "Other direct cloud
 * targets"): an SQS queue, an SNS topic or an EventBridge event bus, reached through a project's
 * connection. Pure rules shared by submit-time validation, delivery and the capability check.
 */

export const DEFAULT_DETAIL_TYPE = 'barge.cargo.finished';
export const EVENT_SOURCE = 'barge';
/** Inline responses up to this many bytes of JSON; above it `response` is null and `oversize` true. */
export const INLINE_RESPONSE_MAX_BYTES = 240_000;
/** What a capability check sends, and the attribute consumers skip it by. */
export const VERIFICATION_MESSAGE = '{"barge_verification":true}';
export const VERIFICATION_ATTRIBUTE = 'barge_verification';

export type MessageTargetType = 'sqs' | 'sns' | 'eventbridge';

/** The `callback` objects as stored with the cargo (detail type filled in). */
export type MessageTarget =
  | { type: 'sqs'; connection_id: string; queue_url: string }
  | { type: 'sns'; connection_id: string; topic_arn: string }
  | { type: 'eventbridge'; connection_id: string; event_bus_arn: string; detail_type: string };

/** Where a message target is, resolved: its ARN (session policy, allow-list), region and name. */
export interface ResolvedTarget {
  arn: string;
  region: string;
  account: string;
  name: string;
}

const PARTITION = '(aws|aws-cn|aws-us-gov)';
const REGION = '([a-z]{2}(?:-[a-z]+)+-\\d+)';
const TOPIC_ARN = new RegExp(
  `^arn:${PARTITION}:sns:${REGION}:(\\d{12}):((?:[A-Za-z0-9_-]{1,256}|[A-Za-z0-9_-]{1,251}\\.fifo))$`,
);
const BUS_ARN = new RegExp(`^arn:${PARTITION}:events:${REGION}:(\\d{12}):event-bus/([A-Za-z0-9._/-]{1,256})$`);
// AWS counts `.fifo` within a queue name's 80 characters, and a topic name's 256.
const QUEUE_NAME = /^(?:[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$/;
const AWS_QUEUE_HOST = /^(?:sqs\.([a-z]{2}(?:-[a-z]+)+-\d+)|([a-z]{2}(?:-[a-z]+)+-\d+)\.queue)\.amazonaws\.com(\.cn)?$/;

/**
 * An SQS queue URL: `https://sqs.<region>.amazonaws.com/<account>/<name>` (or the legacy
 * `<region>.queue.amazonaws.com` host). Requests never go to the URL's host (the SDK is pointed at
 * the region's endpoint), so with an endpoint override (`BARGE_AWS_SQS_ENDPOINT`, for tests and
 * compatible services) any http(s) host is taken and the region is the configured one.
 */
export function parseQueueUrl(
  raw: string,
  options: { endpointOverride: boolean; defaultRegion: string },
): ResolvedTarget | { problem: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: 'must be a queue URL such as https://sqs.us-east-1.amazonaws.com/123456789012/results' };
  }
  const path = /^\/(\d{12})\/([^/]+)$/.exec(url.pathname);
  if (!path || url.search || url.hash || url.username || url.password) {
    return { problem: 'must be a queue URL of the form https://sqs.<region>.amazonaws.com/<account>/<queue name>' };
  }
  const [, account, name] = path as unknown as [string, string, string];
  if (!QUEUE_NAME.test(name)) return { problem: `names '${name}', which is not a valid queue name` };
  const host = AWS_QUEUE_HOST.exec(url.hostname);
  let region: string;
  let partition = 'aws';
  if (host && url.protocol === 'https:') {
    region = (host[1] ?? host[2]) as string;
    if (host[3]) partition = 'aws-cn';
  } else if (options.endpointOverride && (url.protocol === 'https:' || url.protocol === 'http:')) {
    region = options.defaultRegion;
  } else {
    return { problem: 'must be an https://sqs.<region>.amazonaws.com/... queue URL' };
  }
  return { arn: `arn:${partition}:sqs:${region}:${account}:${name}`, region, account, name };
}

const QUEUE_ARN = new RegExp(
  `^arn:${PARTITION}:sqs:${REGION}:(\\d{12}):((?:[A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\\.fifo))$`,
);

/** A queue's ARN (allow-lists name queues by ARN, like every other target). */
export function parseQueueArn(arn: string): ResolvedTarget | { problem: string } {
  const match = QUEUE_ARN.exec(arn);
  if (!match) return { problem: 'must be a queue ARN of the form arn:aws:sqs:<region>:<account>:<queue name>' };
  const [, , region, account, name] = match as unknown as [string, string, string, string, string];
  return { arn, region, account, name };
}

export function parseTopicArn(arn: string): ResolvedTarget | { problem: string } {
  const match = TOPIC_ARN.exec(arn);
  if (!match) return { problem: 'must be a topic ARN of the form arn:aws:sns:<region>:<account>:<topic name>' };
  const [, , region, account, name] = match as unknown as [string, string, string, string, string];
  return { arn, region, account, name };
}

export function parseEventBusArn(arn: string): ResolvedTarget | { problem: string } {
  const match = BUS_ARN.exec(arn);
  if (!match) {
    return { problem: 'must be an event bus ARN of the form arn:aws:events:<region>:<account>:event-bus/<name>' };
  }
  const [, , region, account, name] = match as unknown as [string, string, string, string, string];
  return { arn, region, account, name };
}

/** EventBridge's DetailType: 1 to 128 characters, no control characters. */
function detailTypeProblem(detailType: string): string | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for
  if (detailType.length < 1 || detailType.length > 128 || /[\u0000-\u001f\u007f]/.test(detailType)) {
    return 'must be 1 to 128 characters without control characters';
  }
  return null;
}

/** The target's ARN, region and name, or why its address is not well formed (a 400 at submit). */
export function resolveMessageTarget(
  target: MessageTarget,
  options: { sqsEndpointOverride: boolean; defaultRegion: string },
): ResolvedTarget | { problem: string; path: string } {
  switch (target.type) {
    case 'sqs': {
      const parsed = parseQueueUrl(target.queue_url, {
        endpointOverride: options.sqsEndpointOverride,
        defaultRegion: options.defaultRegion,
      });
      return 'problem' in parsed ? { ...parsed, path: '/callback/queue_url' } : parsed;
    }
    case 'sns': {
      const parsed = parseTopicArn(target.topic_arn);
      return 'problem' in parsed ? { ...parsed, path: '/callback/topic_arn' } : parsed;
    }
    case 'eventbridge': {
      const parsed = parseEventBusArn(target.event_bus_arn);
      if ('problem' in parsed) return { ...parsed, path: '/callback/event_bus_arn' };
      const problem = detailTypeProblem(target.detail_type);
      return problem ? { problem, path: '/callback/detail_type' } : parsed;
    }
  }
}

/** The one IAM action a delivery session may take on the target. */
export const SEND_ACTIONS: Record<MessageTargetType, string> = {
  sqs: 'sqs:SendMessage',
  sns: 'sns:Publish',
  eventbridge: 'events:PutEvents',
};

/** Reads a stored message target back; null when the text is not one (a bug or a hand-edited row). */
export function parseStoredMessageTarget(json: string | null): MessageTarget | null {
  if (json === null) return null;
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return null;
  }
  const connectionId = value.connection_id;
  if (typeof connectionId !== 'string') return null;
  if (value.type === 'sqs' && typeof value.queue_url === 'string') {
    return { type: 'sqs', connection_id: connectionId, queue_url: value.queue_url };
  }
  if (value.type === 'sns' && typeof value.topic_arn === 'string') {
    return { type: 'sns', connection_id: connectionId, topic_arn: value.topic_arn };
  }
  if (value.type === 'eventbridge' && typeof value.event_bus_arn === 'string') {
    const detailType = typeof value.detail_type === 'string' ? value.detail_type : DEFAULT_DETAIL_TYPE;
    return {
      type: 'eventbridge',
      connection_id: connectionId,
      event_bus_arn: value.event_bus_arn,
      detail_type: detailType,
    };
  }
  return null;
}

/** The `type` of a stored `callback` object: which delivery channel it goes by. */
export function storedCallbackType(json: string): string | null {
  try {
    const type = (JSON.parse(json) as { type?: unknown }).type;
    return typeof type === 'string' ? type : null;
  } catch {
    return null;
  }
}
