/** The dashboard's small building blocks: page header, status badges, loading, empty and error states, times. */
import type { ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import type { ApiProblem } from '../api.js';
import { relative, utc } from '../format.js';
import { CARGO_STATUS_LABELS, CARGO_STATUS_TONES, type Tone } from '../statuses.js';
import type { CargoStatus } from '../types.js';

export function PageHeader(props: { title: string; description?: ComponentChildren; actions?: ComponentChildren }) {
  // The window's title names the page too (tabs, history, screen readers on navigation).
  useEffect(() => {
    document.title = `${props.title} · barge`;
  }, [props.title]);
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.description && <p class="page-description">{props.description}</p>}
      </div>
      {props.actions && <div class="page-actions">{props.actions}</div>}
    </header>
  );
}

/** A time in UTC, labelled so, with how long ago (or until) in its tooltip. */
export function Time(props: { iso: string | null | undefined; seconds?: boolean; never?: string }) {
  if (!props.iso) return <span class="muted">{props.never ?? '—'}</span>;
  return (
    <time class="nowrap" dateTime={props.iso} title={relative(props.iso)}>
      {utc(props.iso, { seconds: props.seconds })}
    </time>
  );
}

export function Badge(props: { tone: Tone; children: ComponentChildren }) {
  return <span class={`badge badge-${props.tone}`}>{props.children}</span>;
}

/** A cargo status in words, coloured by how it stands; its code in the tooltip (the API's name). */
export function StatusBadge(props: { status: CargoStatus }) {
  return (
    <span title={props.status}>
      <Badge tone={CARGO_STATUS_TONES[props.status]}>{CARGO_STATUS_LABELS[props.status]}</Badge>
    </span>
  );
}

export function Loading(props: { what: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      Loading {props.what}…
    </div>
  );
}

export function ErrorNotice(props: { error: ApiProblem | Error; retry?: () => void; title?: string }) {
  return (
    <div class="notice notice-danger notice-with-action" role="alert">
      <div>
        <strong>{props.title ?? 'Something went wrong.'}</strong> {props.error.message}
      </div>
      {props.retry && (
        <button type="button" class="button button-secondary button-small" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function EmptyState(props: { title: string; children?: ComponentChildren; action?: ComponentChildren }) {
  return (
    <div class="empty-state">
      <h2>{props.title}</h2>
      {props.children && <p>{props.children}</p>}
      {props.action && <div class="empty-action">{props.action}</div>}
    </div>
  );
}

export function Card(props: {
  title?: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <section class={`card ${props.class ?? ''}`} aria-label={props.title}>
      {(props.title || props.actions) && (
        <div class="card-header">
          {props.title && <h2>{props.title}</h2>}
          {props.actions && <div class="card-actions">{props.actions}</div>}
        </div>
      )}
      {props.children}
    </section>
  );
}

/** A term and its value, in a definition list. */
export function Facts(props: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Code(props: { children: ComponentChildren }) {
  return <code class="mono">{props.children}</code>;
}

/** A choice of views (chart or table, timeline or table): pressed buttons in a labelled group. */
export function Toggle<T extends string>(props: {
  label: string;
  options: [T, string][];
  value: T;
  onChange: (value: T) => void;
}) {
  return (
    <fieldset class="segmented segmented-small">
      <legend class="visually-hidden">{props.label}</legend>
      {props.options.map(([value, text]) => (
        <button
          key={value}
          type="button"
          class={`segment ${props.value === value ? 'selected' : ''}`}
          aria-pressed={props.value === value}
          onClick={() => props.onChange(value)}
        >
          {text}
        </button>
      ))}
    </fieldset>
  );
}

/**
 * A table that may be wider than its card: it scrolls sideways, and keyboard users can scroll it
 * too (it takes focus, and is named as a region).
 */
export function TableScroll(props: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1).
    <section class="table-scroll" aria-label={props.label} tabIndex={0}>
      {props.children}
    </section>
  );
}

/** A column of a TableCard: its heading, and a class for its cells (`numeric`, `hide-narrow`). */
export type Column = string | { label: string; class?: string; hidden?: boolean };

/**
 * A list as a table in a card: a caption for screen readers, the column headings, the rows, and
 * what follows the table (a "Load more").
 */
export function TableCard(props: {
  caption: string;
  columns: Column[];
  children: ComponentChildren;
  footer?: ComponentChildren;
}) {
  return (
    <div class="card table-card">
      <table class="table">
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.columns.map((column) => {
              const { label, class: className, hidden } = typeof column === 'string' ? { label: column } : column;
              return (
                <th key={label} scope="col" class={className}>
                  {hidden ? <span class="visually-hidden">{label}</span> : label}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
      {props.footer}
    </div>
  );
}
