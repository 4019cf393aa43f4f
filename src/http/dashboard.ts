/**
 * The dashboard's pages, `/dashboard`: the browser app built at install (dashboard/, bundled by
 * scripts/build-dashboard.mjs into dist/dashboard/), served from an encapsulated scope of its own
 * whose hook (the security headers) runs on nothing else. Every asset comes from the service
 * itself; the Content-Security-Policy allows nothing from anywhere else, and no inline script or
 * style. The app talks to the admin API (/admin/v1/) with its session cookie.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { packageRoot } from '../package-root.js';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

/** Where the built dashboard is: dist/dashboard/ beside the package's package.json. */
export function builtDashboardDir(): string | null {
  const root = packageRoot();
  return root === null ? null : join(root, 'dist', 'dashboard');
}

export async function dashboardRoutes(scope: FastifyInstance, options: { dir: string | null }): Promise<void> {
  scope.addHook('onSend', async (_request, reply) => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) reply.header(name, value);
  });
  const indexFile = options.dir === null ? null : join(options.dir, 'index.html');
  if (indexFile === null || !existsSync(indexFile)) {
    // A checkout run from its sources without `npm run build`: say so instead of a bare 404.
    const notBuilt = async (_request: unknown, reply: FastifyReply) =>
      reply.code(503).type('text/plain; charset=utf-8').send('The dashboard is not built: run `npm run build`.\n');
    scope.get('/dashboard', notBuilt);
    scope.get('/dashboard/*', notBuilt);
    return;
  }
  // One page for every address of the app: it routes in the browser (deep links, reloads).
  const index = readFileSync(indexFile);
  const page = async (_request: unknown, reply: FastifyReply) =>
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').send(index);
  scope.get('/dashboard', page);
  scope.get('/dashboard/*', page);
  // Asset names carry their content's hash: cached for a year, and a new build changes the names.
  await scope.register(fastifyStatic, {
    root: join(options.dir as string, 'assets'),
    prefix: '/dashboard/assets/',
    decorateReply: false,
    index: false,
    immutable: true,
    maxAge: '365d',
  });
}
