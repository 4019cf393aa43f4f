/** What every page shares: who is signed in (and signing out), the projects the token sees, and the app's addresses. */
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { projectPath } from './api.js';
import type { Project, Session } from './types.js';

/** Where the app lives; every page's address is under it. */
export const BASE = '/dashboard';

/** A project page's address: `projectHref('acme', '/keys')`. */
export const projectHref = (slug: string, suffix = '') => `${BASE}${projectPath(slug)}${suffix}`;

export interface SignedIn {
  session: Session;
  signOut: () => Promise<void>;
  /** The project the token is limited to; null: every project. */
  limitedTo: string | null;
}

export const SessionContext = createContext<SignedIn | null>(null);

export function useSession(): SignedIn {
  const value = useContext(SessionContext);
  if (value === null) throw new Error('useSession outside a signed-in app');
  return value;
}

/** The projects the token sees, for the navigation's project switcher; pages that change one reload it. */
export interface ProjectsValue {
  projects: Project[] | undefined;
  reload: () => void;
}

export const ProjectsContext = createContext<ProjectsValue>({ projects: undefined, reload: () => {} });

export const useProjects = () => useContext(ProjectsContext);
