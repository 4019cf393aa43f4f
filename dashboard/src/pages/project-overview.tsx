/** A project at a glance: its standing (activate, deactivate), its cargo by status, its settings. */
import { useState } from 'preact/hooks';
import { type ApiProblem, api, projectPath } from '../api.js';
import { ConfirmDialog } from '../components/dialog.js';
import { Badge, Card, ErrorNotice, Facts, Loading, PageHeader, StatusBadge, Time } from '../components/ui.js';
import { projectHref, useProjects } from '../context.js';
import { bytes, count, usd } from '../format.js';
import { useResource } from '../hooks.js';
import { CARGO_STATUSES } from '../statuses.js';
import type { Project } from '../types.js';

export function ProjectOverview(props: { slug: string }) {
  const { slug } = props;
  const project = useResource(() => api<Project>('GET', projectPath(slug)), [slug]);
  const navigation = useProjects();
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<ApiProblem | null>(null);
  const setActive = async (active: boolean) => {
    await api('POST', `${projectPath(slug)}/${active ? 'activate' : 'deactivate'}`);
    project.reload();
    navigation.reload();
  };
  const p = project.data;
  const active = p?.status === 'active';
  return (
    <>
      <PageHeader
        title={slug}
        description="The project's cargo by status and its settings."
        actions={
          p && (
            <button
              type="button"
              class="button button-secondary"
              onClick={async () => {
                setError(null);
                if (active) setConfirming(true);
                else {
                  try {
                    await setActive(true);
                  } catch (err) {
                    setError(err as ApiProblem);
                  }
                }
              }}
            >
              {active ? 'Deactivate project' : 'Activate project'}
            </button>
          )
        }
      />
      {error && <ErrorNotice error={error} title="The project was not changed." />}
      {project.state === 'failed' && (
        <ErrorNotice error={project.error} retry={project.reload} title="The project could not be loaded." />
      )}
      {project.state === 'loading' && !p && <Loading what="the project" />}
      {p && (
        <>
          {!active && (
            <div class="notice notice-warning" role="status">
              <strong>This project is inactive.</strong> Its API keys are refused (403); nothing was deleted. Activate
              it to serve them again.
            </div>
          )}
          <Card title="Cargo by status" actions={<a href={projectHref(slug, '/cargo')}>All cargo →</a>}>
            {Object.keys(p.cargo_counts).length === 0 ? (
              <p class="muted card-body">
                No cargo yet. Make an <a href={projectHref(slug, '/keys')}>API key</a> and send the first one to{' '}
                <code>POST /cargo/load</code>.
              </p>
            ) : (
              <ul class="tiles">
                {CARGO_STATUSES.filter((s) => (p.cargo_counts[s] ?? 0) > 0).map((status) => (
                  <li key={status}>
                    <a class="tile" href={projectHref(slug, `/cargo?status=${status}`)}>
                      <span class="tile-value">{count(p.cargo_counts[status] ?? 0)}</span>
                      <StatusBadge status={status} />
                    </a>
                  </li>
                ))}
              </ul>
            )}
          </Card>
          <Card title="Settings">
            <Facts
              items={[
                ['Status', <Badge tone={active ? 'success' : 'neutral'}>{p.status}</Badge>],
                ['Incident e-mail', p.notification_email ?? <span class="muted">none</span>],
                [
                  'Rate limit',
                  p.rate_limit_max === null ? (
                    <span class="muted">the service default</span>
                  ) : (
                    `${count(p.rate_limit_max)} requests per window`
                  ),
                ],
                [
                  'Storage budget',
                  `${p.storage_budget.daily_bytes === null ? 'default' : bytes(p.storage_budget.daily_bytes)} a UTC day · ${
                    p.storage_budget.held_bytes === null ? 'default' : bytes(p.storage_budget.held_bytes)
                  } held`,
                ],
                ['Models', p.allowed_models === null ? 'every model' : p.allowed_models.join(', ')],
                [
                  'Spend budget',
                  p.spend_budget.mode === 'own'
                    ? `${usd(p.spend_budget.monthly_usd)} a UTC month${p.spend_budget.daily_usd === null ? '' : `, ${usd(p.spend_budget.daily_usd)} a UTC day`}`
                    : p.spend_budget.mode === 'none'
                      ? 'none'
                      : 'the service default',
                ],
                ['Created', <Time iso={p.created_at} />],
                ['Settings changed', <Time iso={p.updated_at} />],
              ]}
            />
          </Card>
        </>
      )}
      {confirming && (
        <ConfirmDialog
          title={`Deactivate ${slug}?`}
          confirmLabel="Deactivate project"
          danger
          onConfirm={() => setActive(false)}
          onClose={() => setConfirming(false)}
        >
          <p>
            Its API keys are refused (403) from the next request on, in every barge process. Nothing is deleted, and
            activating it again serves its keys again.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}
