/** A loopback proxy in front of a real server that fails the first requests as a test decides, then forwards. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * How the proxy fails a request: an HTTP answer, or a dropped connection (no answer at all);
 * `forward` sends the request on first, so the server acts on it and only its answer is lost.
 */
export type Failure = { status: number; headers?: Record<string, string>; forward?: boolean } | 'drop';

export async function startFlakyProxy(target: string, failures: Failure[]) {
  const seen: { method: string; url: string; headers: IncomingHttpHeaders }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
      const failure = failures.shift();
      if (failure === 'drop') return req.socket.destroy();
      if (failure) {
        if (failure.forward)
          forward(target, req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(chunks), null);
        res.writeHead(failure.status, { 'content-type': 'application/json', ...failure.headers });
        return res.end(JSON.stringify({ detail: `proxy failure ${failure.status}` }));
      }
      forward(target, req.method ?? 'GET', req.url ?? '/', req.headers, Buffer.concat(chunks), res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function forward(
  target: string,
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: Buffer,
  res: ServerResponse | null,
): void {
  // The hop's own headers stay behind: fetch sets them for its own request.
  const hop = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive']);
  const pass: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (typeof value === 'string' && !hop.has(name)) pass[name] = value;
  }
  fetch(`${target}${url}`, { method, headers: pass, body: method === 'GET' ? undefined : body }).then(
    async (answer) => {
      if (res === null) return;
      res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      res.end(Buffer.from(await answer.arrayBuffer()));
    },
    () => res?.socket?.destroy(),
  );
}
