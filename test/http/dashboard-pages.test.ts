/**
 * The dashboard's pages as the service serves them (built by `npm run build` into dist/dashboard):
 * one page for every address under /dashboard, with a strict Content-Security-Policy; every asset
 * it names comes from the service itself and is served, cached by its hashed name; nothing of it
 * (headers, cookies) reaches the cargo API.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CONTENT_SECURITY_POLICY } from '../../src/http/dashboard.js';
import { backends } from '../helpers/backends.js';
import { harness } from '../helpers/harness.js';

const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

for (const backend of (await backends()).filter((b) => b.name === 'sqlite-memory')) {
  describe('the dashboard pages', () => {
    const h = harness(backend);

    test('every address under /dashboard is the one page, with a strict CSP and no inline script or style', async () => {
      assert.equal(CONTENT_SECURITY_POLICY, CSP);
      const first = await h.app.request('GET', '/dashboard');
      for (const path of ['/dashboard', '/dashboard/projects', '/dashboard/projects/acme/cargo/crg_x?status=failed']) {
        const res = await h.app.request('GET', path);
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
        assert.equal(res.headers.get('content-security-policy'), CSP);
        assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(res.headers.get('x-frame-options'), 'DENY');
        assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
        assert.equal(res.headers.get('cache-control'), 'no-cache');
        assert.equal(res.text, first.text);
      }
      const page = first.text;
      // Scripts and styles only by reference (the CSP would refuse inline ones anyway).
      assert.doesNotMatch(page, /<script(?![^>]*\bsrc=)[^>]*>/);
      assert.doesNotMatch(page, /<style|\sstyle=|\son[a-z]+=/i);
    });

    test('each asset the page names is the service’s own, served with its type and cached by its hashed name', async () => {
      const page = (await h.app.request('GET', '/dashboard')).text;
      const references = [...page.matchAll(/\b(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
      assert.equal(references.length, 3, page);
      const types: Record<string, string> = {
        js: 'application/javascript; charset=utf-8',
        css: 'text/css; charset=utf-8',
        svg: 'image/svg+xml',
      };
      for (const ref of references) {
        assert.match(ref, /^\/dashboard\/assets\/[a-z]+-[A-Za-z0-9]{8}\.(js|css|svg)$/, 'same origin, hashed name');
        const res = await h.app.request('GET', ref);
        assert.equal(res.status, 200, ref);
        assert.equal(res.headers.get('content-type'), types[ref.split('.').pop() as string], ref);
        assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable', ref);
        assert.equal(res.headers.get('content-security-policy'), CSP, ref);
        // Nothing the browser would fetch from elsewhere: no absolute URL in a stylesheet, no import of one.
        if (ref.endsWith('.css')) assert.doesNotMatch(res.text, /url\(\s*["']?(https?:)?\/\/|@import/i, ref);
        if (ref.endsWith('.js')) assert.doesNotMatch(res.text, /\bimport\s*\(?\s*["']https?:/, ref);
      }
      const missing = await h.app.request('GET', '/dashboard/assets/app-00000000.js');
      assert.equal(missing.status, 404);
    });

    test('the cargo API and the admin API answer without the dashboard’s headers', async () => {
      for (const path of ['/health', `/cargo/crg_${'0'.repeat(26)}/tracking`, '/admin/v1/projects']) {
        const res = await h.app.request('GET', path);
        assert.equal(res.headers.get('content-security-policy'), null, path);
        assert.equal(res.headers.get('x-frame-options'), null, path);
      }
    });
  });
}
