/**
 * The app: the sign-in form until a session exists, then the shell (navigation, who is signed in,
 * sign out) around the page of the address. Every page's address is a real URL under /dashboard
 * (reload and share them); the service answers each with the same page.
 */
import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { ApiProblem, api, onSessionEnded } from './api.js';
import {
  BASE,
  ProjectsContext,
  projectHref,
  SessionContext,
  type SignedIn,
  useProjects,
  useSession,
} from './context.js';
import { useResource } from './hooks.js';
import { CargoDetailPage } from './pages/cargo-detail.js';
import { CargoListPage } from './pages/cargo-list.js';
import { ConnectionDetailPage } from './pages/connection-detail.js';
import { ConnectionsPage } from './pages/connections.js';
import { KeysPage } from './pages/keys.js';
import { NotFound } from './pages/not-found.js';
import { ProjectOverview } from './pages/project-overview.js';
import { ProjectsPage } from './pages/projects.js';
import { ProvidersPage } from './pages/providers.js';
import { RecoveryPage } from './pages/recovery.js';
import { SignIn } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';
import type { Project, Session } from './types.js';

/**
 * Whether this browser signed in and has not signed out since: the cookie itself is HttpOnly (no
 * script sees it), and asking the service without one is a 401 every visit. A hint only: the
 * service decides, and a session that ended meanwhile is answered 401 once, which clears it.
 */
const SIGNED_IN_HINT = 'barge.dashboard.signedIn';
const hint = {
  get: () => localStorage.getItem(SIGNED_IN_HINT) === '1',
  set: (on: boolean) => (on ? localStorage.setItem(SIGNED_IN_HINT, '1') : localStorage.removeItem(SIGNED_IN_HINT)),
};

type SessionState =
  | { kind: 'checking' }
  | { kind: 'signed-out'; notice: string | null }
  | { kind: 'signed-in'; session: Session };

export function App() {
  const [state, setState] = useState<SessionState>(() =>
    hint.get() ? { kind: 'checking' } : { kind: 'signed-out', notice: null },
  );
  useEffect(() => {
    if (hint.get()) {
      api<Session>('GET', '/session').then(
        (session) => setState({ kind: 'signed-in', session }),
        (err: ApiProblem) => {
          if (err.status === 401) hint.set(false);
          setState({
            kind: 'signed-out',
            notice: err.status === 401 ? null : `barge could not be asked who is signed in: ${err.message}`,
          });
        },
      );
    }
    return onSessionEnded(() => {
      hint.set(false);
      setState((current) =>
        current.kind === 'signed-in'
          ? {
              kind: 'signed-out',
              notice:
                'Your session has ended (signed out elsewhere, idle too long, or the admin token was revoked). Sign in again.',
            }
          : current,
      );
    });
  }, []);
  const signOut = useCallback(async () => {
    try {
      await api('DELETE', '/session');
    } catch (err) {
      // An ended session is signed out already; anything else is worth saying.
      if (!(err instanceof ApiProblem) || err.status !== 401) throw err;
    }
    hint.set(false);
    setState({ kind: 'signed-out', notice: 'You are signed out.' });
  }, []);
  const signedInAs = useCallback((session: Session) => {
    hint.set(true);
    setState({ kind: 'signed-in', session });
  }, []);

  if (state.kind === 'checking') {
    return (
      <div class="boot" role="status">
        Loading the dashboard…
      </div>
    );
  }
  if (state.kind === 'signed-out') {
    return <SignIn notice={state.notice} onSignedIn={signedInAs} />;
  }
  const signedIn: SignedIn = { session: state.session, signOut, limitedTo: state.session.admin_token.project };
  return (
    <SessionContext.Provider value={signedIn}>
      <LocationProvider scope={BASE}>
        <ProjectsProvider>
          <Shell />
        </ProjectsProvider>
      </LocationProvider>
    </SessionContext.Provider>
  );
}

function ProjectsProvider(props: { children: ComponentChildren }) {
  const resource = useResource(() => api<{ data: Project[] }>('GET', '/projects').then((r) => r.data), []);
  return (
    <ProjectsContext.Provider value={{ projects: resource.data, reload: resource.reload }}>
      {props.children}
    </ProjectsContext.Provider>
  );
}

function Shell() {
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <Sidebar />
      <main class="main" id="main">
        <Router>
          <Route path={`${BASE}`} component={Home} />
          <Route path={`${BASE}/projects`} component={ProjectsPage} />
          <Route path={`${BASE}/projects/:slug`} component={ProjectOverview} />
          <Route path={`${BASE}/projects/:slug/keys`} component={KeysPage} />
          <Route path={`${BASE}/projects/:slug/connections`} component={ConnectionsPage} />
          <Route path={`${BASE}/projects/:slug/connections/:connectionId`} component={ConnectionDetailPage} />
          <Route path={`${BASE}/projects/:slug/cargo`} component={CargoListPage} />
          <Route path={`${BASE}/projects/:slug/cargo/:cargoId`} component={CargoDetailPage} />
          <Route path={`${BASE}/projects/:slug/recovery`} component={RecoveryPage} />
          <Route path={`${BASE}/projects/:slug/usage`} component={UsagePage} />
          <Route path={`${BASE}/projects/:slug/webhooks`} component={WebhooksPage} />
          <Route path={`${BASE}/providers`} component={ProvidersPage} />
          <Route default component={NotFound} />
        </Router>
      </main>
    </div>
  );
}

/** /dashboard: the projects, or straight to the one project a limited token sees. */
function Home() {
  const { limitedTo } = useSession();
  const { route } = useLocation();
  useEffect(() => {
    route(limitedTo === null ? `${BASE}/projects` : projectHref(limitedTo), true);
  }, [limitedTo, route]);
  return null;
}

const PROJECT_PAGES: [string, string][] = [
  ['', 'Overview'],
  ['/keys', 'API keys'],
  ['/connections', 'Connections'],
  ['/cargo', 'Cargo'],
  ['/recovery', 'Recovery'],
  ['/usage', 'Usage'],
  ['/webhooks', 'Webhooks'],
];

function Sidebar() {
  const { session, signOut, limitedTo } = useSession();
  const { projects } = useProjects();
  const { path, route } = useLocation();
  const match = /^\/dashboard\/projects\/([^/]+)(\/[^/]+)?/.exec(path);
  const slug = match ? decodeURIComponent(match[1] as string) : null;
  const section = match?.[2] ?? '';
  const link = (href: string, label: string, active: boolean) => (
    <a href={href} class={`nav-link ${active ? 'active' : ''}`} aria-current={active ? 'page' : undefined}>
      {label}
    </a>
  );
  const [signingOut, setSigningOut] = useState(false);
  return (
    <aside class="sidebar">
      <a class="brand" href={BASE}>
        <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden="true" class="brand-mark">
          <rect width="32" height="32" rx="7" />
          <path d="M6 18h20l-3.5 6h-13z" class="hull" />
          <rect x="10" y="11" width="5" height="5" rx="1" class="crate-a" />
          <rect x="17" y="11" width="5" height="5" rx="1" class="crate-b" />
          <rect x="13.5" y="5.5" width="5" height="5" rx="1" class="crate-b" />
        </svg>
        <span>barge</span>
      </a>
      <nav aria-label="Dashboard" class="nav">
        {limitedTo === null && link(`${BASE}/projects`, 'Projects', path === `${BASE}/projects`)}
        {projects && projects.length > 0 && (
          <div class="nav-project">
            <label class="nav-label" for="project-switcher">
              Project
            </label>
            <select
              id="project-switcher"
              class="input select"
              value={slug ?? ''}
              onChange={(event) => {
                const next = event.currentTarget.value;
                // The same page of the other project (a cargo or connection page: their list).
                if (next) route(projectHref(next, section));
              }}
            >
              {slug === null && <option value="">Choose a project…</option>}
              {projects.map((p) => (
                <option key={p.slug} value={p.slug}>
                  {p.slug}
                  {p.status === 'inactive' ? ' (inactive)' : ''}
                </option>
              ))}
            </select>
          </div>
        )}
        {slug !== null && (
          <div class="nav-group">
            {PROJECT_PAGES.map(([suffix, label]) => link(projectHref(slug, suffix), label, section === suffix))}
          </div>
        )}
        {limitedTo === null && (
          <div class="nav-group nav-group-service">
            {link(`${BASE}/providers`, 'Providers', path === `${BASE}/providers`)}
          </div>
        )}
      </nav>
      <div class="sidebar-footer">
        <p class="signed-in-as">
          <span class="muted">Signed in as</span>
          <strong>{session.admin_token.name}</strong>
          <span class="muted">{limitedTo === null ? 'All projects' : `Project ${limitedTo} only`}</span>
        </p>
        <button
          type="button"
          class="button button-secondary button-small"
          disabled={signingOut}
          onClick={async () => {
            setSigningOut(true);
            try {
              await signOut();
            } finally {
              setSigningOut(false);
            }
          }}
        >
          Sign out
        </button>
      </div>
    </aside>
  );
}
