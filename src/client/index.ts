/** `barge/client`: the typed client of barge's HTTP API, and webhook verification. */
export { Barge, type BargeOptions, fetchTransport, type Transport, type WaitOptions } from './barge.js';
export { BargeError, type FieldError } from './errors.js';
export type * from './types.js';
export { verifyWebhook, WebhookVerificationError } from './verify-webhook.js';
