/** A real webhook receiver on loopback: records every request and answers as the test decides. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/**
 * A real webhook receiver on a loopback port. `respond` decides each answer (default 200); it may
 * also never answer (a hanging receiver) by leaving the response open.
 */
export async function startReceiver(
  respond: (request: ReceivedRequest, index: number, res: ServerResponse) => void = (_r, _i, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  },
) {
  const received: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      respond(request, received.length - 1, res);
    });
  });
  // TCP connections accepted, even ones that never carry a request (e.g. a TLS handshake).
  let connections = 0;
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    received,
    get connections() {
      return connections;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
