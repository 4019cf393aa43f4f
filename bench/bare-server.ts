/**
 * The baseline for bench/submit.ts: a bare node:http server that reads each request body and
 * answers with a recorded POST /cargo/load response (same status, headers and body) without doing
 * anything else. It runs as its own process, like the service, so both compete with the load
 * generator for the CPU in the same way.
 *
 * Input: BENCH_BARE_RESPONSE = JSON {headers, body}. Output: one JSON line {url} on stdout.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const recorded = JSON.parse(process.env.BENCH_BARE_RESPONSE ?? '') as {
  headers: Record<string, string>;
  body: string;
};
const body = Buffer.from(recorded.body);

const server = createServer((req, res) => {
  // A real endpoint must receive the whole body before it can answer; so does the baseline.
  req.resume();
  req.on('end', () => {
    res.writeHead(200, recorded.headers);
    res.end(body);
  });
});
// Fastify's default, so the Keep-Alive header the client sees is the same as the service's.
server.keepAliveTimeout = 72_000;

server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}` })}\n`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
