/**
 * A project's cargo: newest first, filtered by status, model and creation time (the filters live in
 * the address, so a filtered view can be reloaded and shared), a page at a time with "Load more".
 */

import { useEffect, useId, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { type ApiProblem, api, projectPath, query } from '../api.js';
import { InactiveNotice } from '../components/project-notice.js';
import { EmptyState, ErrorNotice, Loading, PageHeader, StatusBadge, TableCard, Time } from '../components/ui.js';
import { UtcTimeField } from '../components/utc-time-field.js';
import { projectHref } from '../context.js';
import { CARGO_STATUS_LABELS, CARGO_STATUSES } from '../statuses.js';
import type { CargoPage, CargoSummary } from '../types.js';

const PAGE_SIZE = 50;

interface Filters {
  status: string;
  model: string;
  created_after: string;
  created_before: string;
}

export function CargoListPage(props: { slug: string }) {
  const { slug } = props;
  const location = useLocation();
  const filters: Filters = {
    status: location.query.status ?? '',
    model: location.query.model ?? '',
    created_after: location.query.created_after ?? '',
    created_before: location.query.created_before ?? '',
  };
  const filterKey = JSON.stringify(filters);
  const [rows, setRows] = useState<CargoSummary[] | null>(null);
  const [page, setPage] = useState<{ hasMore: boolean; lastId: string | null }>({ hasMore: false, lastId: null });
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<ApiProblem | null>(null);
  const load = async (after: string | null) => {
    setLoading(true);
    setError(null);
    try {
      const answer = await api<CargoPage>(
        'GET',
        `${projectPath(slug)}/cargo${query({ ...filters, limit: PAGE_SIZE, after })}`,
      );
      setRows((previous) => (after === null ? answer.data : [...(previous ?? []), ...answer.data]));
      setPage({ hasMore: answer.has_more, lastId: answer.last_id });
    } catch (err) {
      setError(err as ApiProblem);
    } finally {
      setLoading(false);
    }
  };
  // The filters (in the address) and the project decide the list.
  useEffect(() => {
    setRows(null);
    void load(null);
  }, [slug, filterKey]);
  const filtered = Object.values(filters).some((v) => v !== '');
  const recoverHref = projectHref(
    slug,
    `/recovery${query({ since: filters.created_after, until: filters.created_before })}`,
  );

  return (
    <>
      <PageHeader
        title="Cargo"
        description={
          <>
            Every request of <strong>{slug}</strong>, newest first. Open one to see its status changes and every
            delivery attempt.
          </>
        }
        actions={
          <a class="button button-secondary" href={recoverHref}>
            Recover failed deliveries
          </a>
        }
      />
      <InactiveNotice slug={slug} />
      <FilterBar
        key={filterKey}
        filters={filters}
        onApply={(next) => location.route(projectHref(slug, `/cargo${query({ ...next })}`))}
      />
      {error && (
        <ErrorNotice
          error={error}
          retry={() => load(rows === null ? null : page.lastId)}
          title="The cargo could not be loaded."
        />
      )}
      {rows === null && loading && <Loading what="cargo" />}
      {rows !== null && rows.length === 0 && (
        <EmptyState
          title={filtered ? 'No cargo matches these filters' : 'No cargo yet'}
          action={
            filtered ? (
              <a class="button button-secondary" href={projectHref(slug, '/cargo')}>
                Clear the filters
              </a>
            ) : (
              <a class="button button-primary" href={projectHref(slug, '/keys')}>
                Make an API key
              </a>
            )
          }
        >
          {filtered
            ? 'Widen the time range, or pick another status or model.'
            : 'Cargo appear here as soon as an application sends them to POST /cargo/load with one of this project’s keys.'}
        </EmptyState>
      )}
      {rows !== null && rows.length > 0 && (
        <TableCard
          caption={`Cargo of ${slug}, newest first`}
          columns={[
            'Cargo',
            'Status',
            { label: 'Where it stands', class: 'hide-narrow' },
            'Model',
            'Created (UTC)',
            { label: 'Updated (UTC)', class: 'hide-narrow' },
          ]}
          footer={
            <div class="table-footer">
              <span class="muted" role="status">
                {rows.length} shown{page.hasMore ? '' : ' · that is all'}
              </span>
              {page.hasMore && (
                <button
                  type="button"
                  class="button button-secondary"
                  disabled={loading}
                  onClick={() => load(page.lastId)}
                >
                  {loading ? 'Loading…' : 'Load more'}
                </button>
              )}
            </div>
          }
        >
          {rows.map((cargo) => (
            <tr key={cargo.cargo_id}>
              <th scope="row">
                <a class="mono strong-link" href={projectHref(slug, `/cargo/${cargo.cargo_id}`)}>
                  {cargo.cargo_id}
                </a>
              </th>
              <td>
                <StatusBadge status={cargo.status} />
              </td>
              <td class="muted hide-narrow wrap">{cargo.status_description}</td>
              <td class="mono nowrap">{cargo.model}</td>
              <td>
                <Time iso={cargo.created_at} seconds />
              </td>
              <td class="hide-narrow">
                <Time iso={cargo.updated_at} seconds />
              </td>
            </tr>
          ))}
        </TableCard>
      )}
    </>
  );
}

function FilterBar(props: { filters: Filters; onApply: (filters: Filters) => void }) {
  const [status, setStatus] = useState(props.filters.status);
  const [model, setModel] = useState(props.filters.model);
  const [after, setAfter] = useState(props.filters.created_after);
  const [before, setBefore] = useState(props.filters.created_before);
  const ids = { status: useId(), model: useId() };
  return (
    <form
      class="filter-bar card"
      aria-label="Filter the cargo"
      onSubmit={(event) => {
        event.preventDefault();
        props.onApply({
          status,
          model: model.trim(),
          created_after: after,
          created_before: before,
        });
      }}
    >
      <div>
        <label class="field-label" for={ids.status}>
          Status
        </label>
        <select id={ids.status} class="input select" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">Any status</option>
          {CARGO_STATUSES.map((s) => (
            <option key={s} value={s}>
              {CARGO_STATUS_LABELS[s]} ({s})
            </option>
          ))}
        </select>
      </div>
      <div>
        <label class="field-label" for={ids.model}>
          Model
        </label>
        <input
          id={ids.model}
          class="input mono"
          value={model}
          placeholder="any model"
          onInput={(e) => setModel(e.currentTarget.value)}
        />
      </div>
      <UtcTimeField label="Created after" value={after} onChange={setAfter} />
      <UtcTimeField label="Created before" value={before} onChange={setBefore} />
      <div class="filter-actions">
        <button type="submit" class="button button-primary">
          Apply filters
        </button>
      </div>
    </form>
  );
}
