/** Loading what a page shows: its state (loading, ready, failed), and a way to load it again. */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { ApiProblem } from './api.js';

export type Resource<T> =
  | { state: 'loading'; data: T | undefined; error: null; reload: () => void }
  | { state: 'ready'; data: T; error: null; reload: () => void }
  | { state: 'failed'; data: T | undefined; error: ApiProblem | Error; reload: () => void };

/** Loads on mount and whenever `deps` change; an answer to an older load is dropped. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [value, setValue] = useState<{ state: 'loading' | 'ready' | 'failed'; data?: T; error: Error | null }>({
    state: 'loading',
    error: null,
  });
  const generation = useRef(0);
  // The caller names what the load depends on.
  const run = useCallback(() => {
    const mine = ++generation.current;
    setValue((previous) => ({ state: 'loading', data: previous.data, error: null }));
    load().then(
      (data) => mine === generation.current && setValue({ state: 'ready', data, error: null }),
      (error: Error) =>
        mine === generation.current && setValue((previous) => ({ state: 'failed', data: previous.data, error })),
    );
  }, deps);
  useEffect(run, [run]);
  return { ...value, reload: run } as Resource<T>;
}

/** Calls `tick` every `ms` while `active`, and once the page is visible again. */
export function usePolling(tick: () => void, ms: number, active: boolean): void {
  const latest = useRef(tick);
  latest.current = tick;
  useEffect(() => {
    if (!active) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') latest.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms, active]);
}

/** The time now, moving every second while `until` (an ISO time) is in the future: a countdown's clock. */
export function useNow(until: string | null | undefined): number {
  const [now, setNow] = useState(() => Date.now());
  const target = until ? Date.parse(until) : Number.NaN;
  useEffect(() => {
    if (!(target > Date.now())) return;
    const timer = setInterval(() => {
      const t = Date.now();
      setNow(t);
      if (t >= target) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [target]);
  return now;
}

/** An action a person starts (a form's submit, a button): whether it runs, and how it failed, in words. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem | Error | null>(null);
  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run, clearError: () => setError(null) };
}
