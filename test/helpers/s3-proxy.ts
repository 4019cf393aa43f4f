/** A recording proxy in front of the test S3 server that lets a test script its answers (SlowDown, KMS errors). */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedRequest {
  method: string;
  /** Path and query as sent (path-style: /bucket/key). */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/**
 * What the proxy does with a request: pass it on, answer it itself (SlowDown, a KMS error), or
 * pass it on and then answer the client with something else (a write that landed but whose answer
 * was lost). `respond` may also add headers to a passed-on answer.
 */
export type ProxyDecision =
  | { kind: 'forward'; addHeaders?: Record<string, string> }
  | { kind: 'answer'; answer: ScriptedAnswer }
  | { kind: 'forward_then_answer'; answer: ScriptedAnswer };

/** An S3 error body as S3 writes it. */
export function s3ErrorXml(code: string, message: string): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<Error><Code>${code}</Code><Message>${message}</Message>` +
    '<RequestId>4442587FB7D0A2F9</RequestId><HostId>barge-test-proxy</HostId></Error>'
  );
}

/**
 * A proxy in front of the S3 server that records every request and lets a test script answers:
 * the service's S3 endpoint points here. Requests are passed on byte for byte, headers included,
 * so signatures stay what the client computed.
 */
export async function startS3Proxy(upstream: string) {
  const target = new URL(upstream);
  const requests: ProxiedRequest[] = [];
  let decide: (request: ProxiedRequest, index: number) => ProxyDecision = () => ({ kind: 'forward' });
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const recorded: ProxiedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      const decision = decide(recorded, requests.length - 1);
      const answer = (a: ScriptedAnswer) => {
        res
          .writeHead(a.status, { 'content-type': 'application/xml', ...a.headers })
          .end(req.method === 'HEAD' ? undefined : a.body);
      };
      if (decision.kind === 'answer') return answer(decision.answer);
      const { expect: _expect, ...headers } = req.headers;
      const upstreamReq = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers },
        (upstreamRes) => {
          const body: Buffer[] = [];
          upstreamRes.on('data', (c: Buffer) => body.push(c));
          upstreamRes.on('end', () => {
            if (decision.kind === 'forward_then_answer') return answer(decision.answer);
            res.writeHead(upstreamRes.statusCode ?? 502, { ...upstreamRes.headers, ...decision.addHeaders });
            res.end(Buffer.concat(body));
          });
        },
      );
      upstreamReq.on('error', () => res.writeHead(502).end());
      upstreamReq.end(recorded.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** Sets how requests are handled from now on. */
    script(next: (request: ProxiedRequest, index: number) => ProxyDecision) {
      decide = next;
    },
    reset() {
      requests.length = 0;
      decide = () => ({ kind: 'forward' });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type S3Proxy = Awaited<ReturnType<typeof startS3Proxy>>;
