/**
 * `barge/client` in a browser (package.json's `browser` condition): the same client without
 * node:crypto. Webhooks are received on a server, where the Node entry's verifyWebhook runs.
 */
export { Barge, type BargeOptions, type WaitOptions } from './barge.js';
export { BargeError, type FieldError } from './errors.js';
export type * from './types.js';

export function verifyWebhook(): never {
  throw new Error('verifyWebhook needs node:crypto: verify webhooks on the server that receives them');
}
