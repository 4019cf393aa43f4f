/**
 * A self-hosted OpenAI-compatible server (vLLM, TGI, Ollama) for tests and benches: plain
 * node:http on a free loopback port, `POST /v1/chat/completions` answering a chat completion and
 * `GET /v1/models` listing its models. Controls: a latency for every answer (slow answers,
 * timeouts), scripted failures for the tries of a request named by its first user message (429
 * with Retry-After, 500, 400 with vLLM's error body), and a concurrency meter (requests in flight,
 * the most seen at once) with a count of the tries of each request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A scripted answer to one try: a status with an error body, and Retry-After seconds when given. */
export interface Failure {
  status: number;
  retryAfterS?: number;
  /** vLLM's error body shape (`{object: "error", message, type}`) unless `openaiShape`. */
  message?: string;
  openaiShape?: boolean;
}

export interface RealtimeEmulatorOptions {
  /** Required as `Authorization: Bearer <apiKey>` when set. */
  apiKey?: string;
  models?: string[];
  /** How long every answer takes. */
  latencyMs?: number;
  /** Keep every request body (tests); a bench leaves it off. */
  keepBodies?: boolean;
}

export interface RealtimeEmulator {
  baseURL: string;
  /** In flight now, and the most seen at once since the start or the last resetMeter(). */
  readonly inFlight: number;
  readonly maxInFlight: number;
  /** Answers sent with 200. */
  readonly answered: number;
  resetMeter(): void;
  setLatency(ms: number): void;
  /** The next tries of the request whose first user message is `text` answer these, in order. */
  script(text: string, failures: Failure[]): void;
  /** Tries of each request so far, by its first user message. */
  tries(text: string): number;
  /** The bodies received (with keepBodies). */
  bodies(): Record<string, unknown>[];
  close(): Promise<void>;
}

export async function startRealtimeEmulator(options: RealtimeEmulatorOptions = {}): Promise<RealtimeEmulator> {
  const models = options.models ?? ['meta-llama/Llama-3.1-8B-Instruct'];
  let latencyMs = options.latencyMs ?? 0;
  let inFlight = 0;
  let maxInFlight = 0;
  let answered = 0;
  let completions = 0;
  const scripts = new Map<string, Failure[]>();
  const tryCounts = new Map<string, number>();
  const bodies: Record<string, unknown>[] = [];

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      ...headers,
    });
    res.end(text);
  };

  const completion = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    } catch {
      send(res, 400, { object: 'error', message: 'the body is not JSON', type: 'BadRequestError', code: 400 });
      return;
    }
    if (options.keepBodies) bodies.push(body);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      const text = firstUserText(body);
      tryCounts.set(text, (tryCounts.get(text) ?? 0) + 1);
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs));
      // A client that gave up (a timeout) is not answered.
      if (res.destroyed) return;
      const failure = scripts.get(text)?.shift();
      if (failure) {
        const message = failure.message ?? `scripted ${failure.status}`;
        const headers: Record<string, string> =
          failure.retryAfterS === undefined ? {} : { 'retry-after': String(failure.retryAfterS) };
        const errorBody = failure.openaiShape
          ? { error: { message, type: failure.status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } }
          : {
              object: 'error',
              message,
              type: failure.status >= 500 ? 'InternalServerError' : 'BadRequestError',
              code: failure.status,
            };
        send(res, failure.status, errorBody, headers);
        return;
      }
      if (typeof body.model !== 'string' || !models.includes(body.model)) {
        send(res, 404, {
          object: 'error',
          message: `The model \`${String(body.model)}\` does not exist.`,
          type: 'NotFoundError',
          code: 404,
        });
        return;
      }
      answered++;
      const prompt = JSON.stringify(body.messages ?? []).length;
      const reply = `echo: ${text}`;
      send(res, 200, {
        id: `chatcmpl-${++completions}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: reply }, finish_reason: 'stop', logprobs: null }],
        usage: { prompt_tokens: prompt, completion_tokens: reply.length, total_tokens: prompt + reply.length },
      });
    } finally {
      inFlight--;
    }
  };

  const server = createServer((req, res) => {
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      send(res, 401, { error: { message: 'invalid api key', type: 'authentication_error' } });
      return;
    }
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      completion(req, res).catch((err: unknown) => {
        if (!res.headersSent) send(res, 500, { object: 'error', message: String(err), type: 'InternalServerError' });
      });
      return;
    }
    if (req.method === 'GET' && path === '/v1/models') {
      send(res, 200, {
        object: 'list',
        data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'vllm' })),
      });
      return;
    }
    send(res, 404, { object: 'error', message: `no route ${req.method} ${path}`, type: 'NotFoundError' });
  });
  // A bench opens many connections at once.
  server.maxConnections = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get answered() {
      return answered;
    },
    resetMeter() {
      maxInFlight = inFlight;
    },
    setLatency(ms) {
      latencyMs = ms;
    },
    script(text, failures) {
      scripts.set(text, [...failures]);
    },
    tries: (text) => tryCounts.get(text) ?? 0,
    bodies: () => bodies,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The text of the first user message (a string, or the first text part). */
function firstUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: string; content?: unknown }[]) : [];
  const content = messages.find((m) => m.role === 'user')?.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const part = content.find((p: { type?: string }) => p.type === 'text') as { text?: string } | undefined;
    return part?.text ?? '';
  }
  return '';
}
