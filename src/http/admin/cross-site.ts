/**
 * The cross-site check of a state-changing request signed in by the dashboard's session cookie
 * (and of signing in, which would otherwise let another site sign a browser in to its own token).
 *
 * Browsers tell where a request comes from in two headers a page cannot set: `Sec-Fetch-Site`
 * (Fetch Metadata; every current browser) and `Origin` (sent with every POST, PUT, PATCH and DELETE
 * by every browser in use). A request passes when `Sec-Fetch-Site`, if sent, is `same-origin`, and
 * `Origin`, if sent, names the host the request was sent to (its `Host` header) or is the service's
 * public address (BARGE_PUBLIC_BASE_URL: a proxy in front may send another Host), and at least one
 * of them is there. The cookie is also SameSite=Strict, so a browser does not send it from another
 * site at all: this check is the second lock, and the one that holds for sign-in (no cookie yet).
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Why the request is refused, to finish "Cross-site request refused: …"; null when it passes. */
export function crossSiteRefusal(
  headers: IncomingHttpHeaders,
  host: string | undefined,
  publicBaseUrl: string,
): string | null {
  const site = single(headers['sec-fetch-site']);
  if (site !== undefined && site !== 'same-origin') {
    return `its Sec-Fetch-Site header is '${site}', not 'same-origin'`;
  }
  const origin = single(headers.origin);
  if (origin === undefined) {
    return site === undefined ? 'it carries neither an Origin nor a Sec-Fetch-Site header' : null;
  }
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return `its Origin '${origin}' is not a web origin`;
  }
  if (url.host !== '' && url.host === host?.toLowerCase()) return null;
  const publicOrigin = new URL(publicBaseUrl).origin;
  if (url.origin === publicOrigin) return null;
  return `its Origin '${origin}' is neither the host it was sent to (${host ?? 'no Host header'}) nor the service's public address (${publicOrigin})`;
}

const single = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
