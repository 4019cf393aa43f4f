/** The JSON texts a stored result is handed out in: the mailbox envelope, the webhook body, a message target's body. */
import { isoTime } from './clock.js';

/** The stored result as the mailbox (GET /cargo/{id}/result) returns it: section 2.4. */
export interface StoredResult {
  cargoId: string;
  success: boolean;
  /** JSON text of the model message, or null. */
  responseJson: string | null;
  errorMessage: string | null;
  createdAt: number;
  /** JSON text of the submitted metadata, or null. */
  metadataJson: string | null;
}

/**
 * Serializes the mailbox envelope around the stored JSON texts without parsing them again: a
 * response can be megabytes, and the metadata is echoed exactly as stored.
 */
export function mailboxEnvelopeJson(result: StoredResult): string {
  return (
    `{"cargo_id":${JSON.stringify(result.cargoId)}` +
    `,"success":${result.success}` +
    `,"response":${result.responseJson ?? 'null'}` +
    `,"error_message":${JSON.stringify(result.errorMessage)}` +
    `,"created_at":${JSON.stringify(isoTime(result.createdAt))}` +
    `,"metadata":${result.metadataJson ?? 'null'}}`
  );
}

/**
 * The webhook body (interface document 6.1 and 6.2): `error` and `error_message` carry the same
 * text on failure, and the metadata is echoed. Built from the stored texts, so every attempt sends
 * the same bytes.
 */
export function webhookPayloadJson(result: Omit<StoredResult, 'createdAt'>): string {
  const error = result.success ? null : (result.errorMessage ?? 'failed');
  return (
    `{"cargo_id":${JSON.stringify(result.cargoId)}` +
    `,"success":${result.success}` +
    `,"response":${result.success ? (result.responseJson ?? 'null') : 'null'}` +
    `,"error":${JSON.stringify(error)}` +
    `,"error_message":${JSON.stringify(error)}` +
    `,"metadata":${result.metadataJson ?? 'null'}}`
  );
}

/**
 * The message of a direct cloud target (SQS, SNS, EventBridge; document 6.4): the webhook payload
 * plus `result_url`. A response whose JSON is larger than `inlineMaxBytes` (240,000) is left out:
 * `response` is null and `oversize` true, and the client fetches the result from `result_url`.
 */
export function targetMessageJson(
  result: Omit<StoredResult, 'createdAt'> & { resultUrl: string },
  inlineMaxBytes: number,
): string {
  const oversize =
    result.success && result.responseJson !== null && Buffer.byteLength(result.responseJson, 'utf8') > inlineMaxBytes;
  const payload = webhookPayloadJson(oversize ? { ...result, responseJson: null } : result);
  const json = `${payload.slice(0, -1)},"result_url":${JSON.stringify(result.resultUrl)}${oversize ? ',"oversize":true' : ''}}`;
  // SQS refuses U+FFFE and U+FFFF in a message, which JSON leaves as they are: escaped, the text
  // is the same JSON value.
  return json.replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}
