/**
 * The dashboard's one way to the admin API: same-origin fetches under /admin/v1/ carrying the
 * session cookie (the browser adds it; no script can read it). Every failure becomes an ApiProblem
 * whose message is the service's own `detail` in words, so pages show what went wrong, not a code.
 */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The structured detail's `error` code (409, 422 answers), for the few pages that branch on one. */
    readonly code: string | null = null,
  ) {
    super(message);
    this.name = 'ApiProblem';
  }
}

type Listener = () => void;
const sessionEndedListeners = new Set<Listener>();

/** Called when an answer says the session is gone (401): the app shows the sign-in form again. */
export function onSessionEnded(listener: Listener): () => void {
  sessionEndedListeners.add(listener);
  return () => sessionEndedListeners.delete(listener);
}

interface ErrorBody {
  detail?: string | { error?: string; message?: string };
  errors?: { path: string; message: string }[];
}

function problemOf(status: number, body: ErrorBody | null): ApiProblem {
  const detail = body?.detail;
  if (typeof detail === 'string') return new ApiProblem(status, detail);
  if (detail && typeof detail.message === 'string') return new ApiProblem(status, detail.message, detail.error ?? null);
  return new ApiProblem(status, `The service answered ${status} without saying why.`);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(`/admin/v1${path}`, {
      method,
      credentials: 'same-origin',
      headers:
        body === undefined
          ? { accept: 'application/json' }
          : { accept: 'application/json', 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiProblem(
      0,
      'Could not reach barge. Check that the service is running and your network is up, then try again.',
    );
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = null;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (response.ok) return parsed as T;
  const problem = problemOf(response.status, parsed as ErrorBody | null);
  // The sign-in request's own 401 is a wrong token, not an ended session.
  if (response.status === 401 && path !== '/session') for (const listener of sessionEndedListeners) listener();
  throw problem;
}

/** A query string of the defined, non-empty values. */
export function query(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export const projectPath = (slug: string) => `/projects/${encodeURIComponent(slug)}`;
