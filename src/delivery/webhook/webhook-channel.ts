/** The webhook channel: a signed POST (Standard Webhooks) to the cargo's callback URL. */
import { finished, type Readable } from 'node:stream';
import { type Agent, request } from 'undici';
import { webhookPayloadJson } from '../../domain/envelope.js';
import { usableWebhookSecret } from '../../domain/webhook-secret.js';
import type { Logger } from '../../ports.js';
import type { DueDelivery } from '../../store/deliveries/claim.js';
import { type DeliveryChannel, type DeliveryTarget, type DispatchOutcome, failed } from '../channel.js';
import { RequestDeadlines } from './deadlines.js';
import type { HostAddresses } from './host-address.js';
import { BlockedAddressError, blockedLiteral } from './http-client.js';
import { SigningKeys, signWebhook } from './signature.js';

const EXCERPT_BYTES = 512;

export interface WebhookChannelOptions {
  agent: Agent;
  /** Resolves a receiver's host to the address its per-host limit is keyed on. */
  addresses: HostAddresses;
  timeoutMs: number;
  blockPrivateAddresses: boolean;
  userAgent: string;
  /** BARGE_SECRET_KEY: opens signing secrets stored sealed. */
  secretKey: Buffer | null;
  now: () => number;
  /** The operator's log: what the tenant must not see (the address a refused host resolved to). */
  log: Logger;
}

/**
 * POSTs the result to `callback_url`: the same body bytes on every attempt, signed per attempt
 * with the project's Standard Webhooks secret(s). Any 2xx delivers; redirects are not followed.
 */
export class WebhookChannel implements DeliveryChannel {
  readonly name = 'webhook';
  private readonly keys: SigningKeys;
  private readonly deadlines: RequestDeadlines;

  constructor(private readonly options: WebhookChannelOptions) {
    this.keys = new SigningKeys((stored, projectId) => usableWebhookSecret(stored, options.secretKey, projectId));
    this.deadlines = new RequestDeadlines(options.timeoutMs);
  }

  concurrencyKey(target: DeliveryTarget): Promise<string> {
    return this.options.addresses.key(target.callbackUrl);
  }

  async deliver(due: DueDelivery): Promise<DispatchOutcome> {
    let url: URL;
    try {
      url = new URL(due.callbackUrl ?? '');
    } catch {
      return failed('invalid_url', `callback_url '${due.callbackUrl}' is not a valid URL`, { retryable: false });
    }
    if (this.options.blockPrivateAddresses) {
      const literal = blockedLiteral(url);
      // Neither can change by retrying: the URL is what the cargo was submitted with.
      if (literal)
        return failed('blocked_address', `${literal} is a private or reserved address`, { retryable: false });
      if (url.protocol !== 'https:') {
        return failed('invalid_url', 'production deliveries require https', { retryable: false });
      }
    }

    // The stored secrets may be sealed; one that does not open (BARGE_SECRET_KEY missing or
    // changed) is the operator's to fix: the attempt fails, retryable, and the log says why.
    const secrets = due.webhookSecrets.map((stored) => this.keys.get(stored, due.projectId));
    const [current] = secrets;
    if (current === null || current === undefined) {
      this.options.log.error(
        { delivery: due.delivery.id, project: due.projectSlug },
        'the webhook signing secret does not open with BARGE_SECRET_KEY',
      );
      return failed('signing_secret_unavailable', 'the webhook signing secret is not available; the operator is told', {
        retryable: true,
      });
    }

    const body = webhookPayloadJson({
      cargoId: due.cargoId,
      success: due.success,
      responseJson: due.response,
      errorMessage: due.errorMessage,
      metadataJson: due.metadata,
    });
    const messageId = due.delivery.id;
    const timestamp = Math.floor(this.options.now() / 1000);
    const signature = secrets
      .filter((key) => key !== null)
      .map((key) => signWebhook(key, messageId, timestamp, body))
      .join(' ');

    const deadline = this.deadlines.start();
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher: this.options.agent,
        body,
        headers: {
          'content-type': 'application/json',
          'user-agent': this.options.userAgent,
          'idempotency-key': due.cargoId,
          'webhook-id': messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signature,
        },
        signal: deadline.signal,
      });
      const excerpt = await readExcerpt(response.body);
      if (response.statusCode >= 200 && response.statusCode < 300) {
        return { kind: 'delivered', statusCode: response.statusCode, responseExcerpt: excerpt };
      }
      return {
        kind: 'failed',
        errorClass: 'http_status',
        detail: `receiver answered HTTP ${response.statusCode}`,
        statusCode: response.statusCode,
        responseExcerpt: excerpt,
        retryable: true,
      };
    } catch (err) {
      const blocked = [err, (err as { cause?: unknown }).cause].find((e) => e instanceof BlockedAddressError);
      if (blocked instanceof BlockedAddressError) {
        this.options.log.warn(
          { delivery: due.delivery.id, host: url.hostname, address: blocked.address },
          'webhook host resolves to a non-public address',
        );
      }
      return classifyError(err, this.options.timeoutMs);
    } finally {
      deadline.done();
    }
  }
}

/**
 * The first bytes of the body, for the attempt log; the rest is not read. Read from the stream's
 * events: its async iterator costs more than the few bytes a receiver usually answers with. Ends
 * however the body does (end, error, or a close with neither, which rejects as the iterator did).
 */
function readExcerpt(body: Readable): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    let settled = false;
    const excerpt = () => (size === 0 ? null : Buffer.concat(parts).subarray(0, EXCERPT_BYTES).toString('utf8'));
    const onData = (chunk: Buffer) => {
      parts.push(chunk);
      size += chunk.length;
      if (size < EXCERPT_BYTES) return;
      settled = true;
      body.off('data', onData);
      body.destroy();
      resolve(excerpt());
    };
    body.on('data', onData);
    finished(body, (err) => {
      if (settled) return;
      settled = true;
      body.off('data', onData);
      if (err) reject(err);
      else resolve(excerpt());
    });
  });
}

function classifyError(err: unknown, timeoutMs: number): DispatchOutcome {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const message = e.message ?? String(err);
  if (code === 'EBLOCKEDADDRESS') return failed('blocked_address', message);
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    (code.startsWith('UND_ERR_') && code.includes('TIMEOUT'))
  ) {
    return failed('timeout', `no response within ${timeoutMs} ms`);
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
    return failed('dns', `DNS lookup failed: ${message}`);
  if (code === 'ECONNREFUSED') return failed('connection_refused', message);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')
    return failed('connection_reset', message);
  if (code.startsWith('ERR_TLS') || code.startsWith('ERR_SSL') || /CERT|SSL|TLS/.test(code))
    return failed('tls', message);
  return failed('network', `${code ? `${code}: ` : ''}${message}`);
}
