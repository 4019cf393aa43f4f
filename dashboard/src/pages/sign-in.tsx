/** Signing in with an admin token: what it is, where to find one, and what went wrong in words. */
import { useEffect, useId, useState } from 'preact/hooks';
import { api } from '../api.js';
import { useAction } from '../hooks.js';
import type { Session } from '../types.js';

export function SignIn(props: { onSignedIn: (session: Session) => void; notice: string | null }) {
  const [token, setToken] = useState('');
  const { busy, error, run } = useAction();
  useEffect(() => {
    document.title = 'Sign in · barge';
  }, []);
  const tokenId = useId();
  const hintId = useId();
  const submit = (event: Event) => {
    event.preventDefault();
    void run(async () => props.onSignedIn(await api<Session>('POST', '/session', { token: token.trim() })));
  };
  return (
    <main class="sign-in" id="main">
      <div class="sign-in-card">
        <div class="brand brand-large" aria-hidden="true">
          <img src={faviconHref()} alt="" width={32} height={32} />
          barge
        </div>
        <h1>Sign in to the dashboard</h1>
        {props.notice && (
          <p class="notice notice-info" role="status">
            {props.notice}
          </p>
        )}
        <form onSubmit={submit} noValidate>
          <label for={tokenId} class="field-label">
            Admin token
          </label>
          <input
            id={tokenId}
            class="input mono"
            type="password"
            name="token"
            autoComplete="off"
            spellcheck={false}
            placeholder="barge_at_…"
            value={token}
            onInput={(event) => setToken(event.currentTarget.value)}
            aria-describedby={hintId}
            aria-invalid={error !== null}
            required
            autofocus
          />
          <p id={hintId} class="field-hint">
            The first start of barge printed one (<code>admin token: barge_at_…</code>). Make another with{' '}
            <code>npx barge admin-token create --name laptop</code>.
          </p>
          {error && (
            <p class="field-error" role="alert">
              {error.message}
            </p>
          )}
          <button type="submit" class="button button-primary button-block" disabled={busy || token.trim() === ''}>
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p class="fine-print">
          The session lasts until you sign out, leave it idle, or the token is revoked. Times in the dashboard are UTC.
        </p>
      </div>
    </main>
  );
}

/** The favicon the page links to (its name carries a hash). */
function faviconHref(): string {
  return document.querySelector<HTMLLinkElement>('link[rel="icon"]')?.href ?? '';
}
