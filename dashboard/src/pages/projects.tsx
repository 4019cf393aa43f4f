/** Projects: the list with status and cargo counts, creating one (its signing secret shown once), activating and deactivating. */
import { useId, useState } from 'preact/hooks';
import { type ApiProblem, api, projectPath } from '../api.js';
import { ConfirmDialog, FormDialog, SecretDialog } from '../components/dialog.js';
import { Badge, EmptyState, ErrorNotice, Loading, PageHeader, TableCard, Time } from '../components/ui.js';
import { projectHref, useProjects, useSession } from '../context.js';
import { count } from '../format.js';
import { useResource } from '../hooks.js';
import type { CreatedProject, Project } from '../types.js';

const IN_FLIGHT = ['pending', 'batched', 'processing', 'completed', 'callback_pending'];
const FAILED = ['callback_failed', 'failed'];

export function cargoTotals(counts: Record<string, number>) {
  const sum = (statuses: string[]) => statuses.reduce((total, s) => total + (counts[s] ?? 0), 0);
  return { inFlight: sum(IN_FLIGHT), delivered: counts.callback_delivered ?? 0, failed: sum(FAILED) };
}

export function ProjectsPage() {
  const { limitedTo } = useSession();
  const projects = useResource(() => api<{ data: Project[] }>('GET', '/projects').then((r) => r.data), []);
  const navigation = useProjects();
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedProject | null>(null);
  const [deactivating, setDeactivating] = useState<Project | null>(null);
  const [busySlug, setBusySlug] = useState<string | null>(null);
  const [actionError, setActionError] = useState<ApiProblem | null>(null);
  const reload = () => {
    projects.reload();
    navigation.reload();
  };
  const setActive = async (project: Project, active: boolean) => {
    await api('POST', `${projectPath(project.slug)}/${active ? 'activate' : 'deactivate'}`);
    reload();
  };
  const newButton =
    limitedTo === null ? (
      <button type="button" class="button button-primary" onClick={() => setCreating(true)}>
        New project
      </button>
    ) : null;

  return (
    <>
      <PageHeader
        title="Projects"
        description="Each project has its own API keys, cargo, delivery connections and webhook signing secret."
        actions={newButton}
      />
      {actionError && <ErrorNotice error={actionError} title="The project was not changed." />}
      {projects.state === 'failed' && (
        <ErrorNotice error={projects.error} retry={projects.reload} title="The projects could not be loaded." />
      )}
      {projects.state === 'loading' && !projects.data && <Loading what="projects" />}
      {projects.data && projects.data.length === 0 && (
        <EmptyState title="No projects yet" action={newButton}>
          A project holds the API keys your applications send cargo with. Create one to get started.
        </EmptyState>
      )}
      {projects.data && projects.data.length > 0 && (
        <TableCard
          caption={'Projects, by slug'}
          columns={[
            'Project',
            'Status',
            { label: 'In flight', class: 'numeric' },
            { label: 'Delivered', class: 'numeric' },
            { label: 'Failed', class: 'numeric' },
            'Created (UTC)',
            { label: 'Actions', hidden: true },
          ]}
        >
          {projects.data.map((project) => {
            const totals = cargoTotals(project.cargo_counts);
            const active = project.status === 'active';
            return (
              <tr key={project.id}>
                <th scope="row">
                  <a href={projectHref(project.slug)} class="strong-link">
                    {project.slug}
                  </a>
                </th>
                <td>
                  <Badge tone={active ? 'success' : 'neutral'}>{active ? 'active' : 'inactive'}</Badge>
                </td>
                <td class="numeric">{count(totals.inFlight)}</td>
                <td class="numeric">{count(totals.delivered)}</td>
                <td class="numeric">
                  {totals.failed > 0 ? (
                    <a href={projectHref(project.slug, '/cargo?status=callback_failed')}>{count(totals.failed)}</a>
                  ) : (
                    '0'
                  )}
                </td>
                <td>
                  <Time iso={project.created_at} />
                </td>
                <td class="row-actions">
                  <button
                    type="button"
                    class="button button-secondary button-small"
                    disabled={busySlug === project.slug}
                    aria-label={`${active ? 'Deactivate' : 'Activate'} ${project.slug}`}
                    onClick={async () => {
                      setActionError(null);
                      if (active) {
                        setDeactivating(project);
                        return;
                      }
                      setBusySlug(project.slug);
                      try {
                        await setActive(project, true);
                      } catch (err) {
                        setActionError(err as ApiProblem);
                      } finally {
                        setBusySlug(null);
                      }
                    }}
                  >
                    {active ? 'Deactivate' : 'Activate'}
                  </button>
                </td>
              </tr>
            );
          })}
        </TableCard>
      )}
      {creating && (
        <NewProjectDialog
          onClose={() => setCreating(false)}
          onCreated={(project) => {
            setCreating(false);
            setCreated(project);
            reload();
          }}
        />
      )}
      {created && (
        <SecretDialog
          title={`Project ${created.slug} created`}
          label="Webhook signing secret"
          secret={created.webhook_secret}
          onDone={() => setCreated(null)}
        >
          <p class="field-hint">
            Your webhook receivers check each delivery's signature with it (Standard Webhooks). Next:{' '}
            <a href={projectHref(created.slug, '/keys')}>make an API key</a> for this project.
          </p>
        </SecretDialog>
      )}
      {deactivating && (
        <ConfirmDialog
          title={`Deactivate ${deactivating.slug}?`}
          confirmLabel="Deactivate project"
          danger
          onConfirm={() => setActive(deactivating, false)}
          onClose={() => setDeactivating(null)}
        >
          <p>
            Its API keys are refused (403) from the next request on, in every barge process. Nothing is deleted: cargo
            already accepted finish and are delivered, and activating it again serves its keys again.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

function NewProjectDialog(props: { onClose: () => void; onCreated: (project: CreatedProject) => void }) {
  const [slug, setSlug] = useState('');
  const slugId = useId();
  const hintId = useId();
  return (
    <FormDialog
      title="New project"
      submitLabel="Create project"
      busyLabel="Creating…"
      canSubmit={slug.trim() !== ''}
      onSubmit={async () => props.onCreated(await api<CreatedProject>('POST', '/projects', { slug: slug.trim() }))}
      onClose={props.onClose}
    >
      <label class="field-label" for={slugId}>
        Slug
      </label>
      <input
        id={slugId}
        class="input mono"
        value={slug}
        onInput={(event) => setSlug(event.currentTarget.value)}
        placeholder="acme"
        aria-describedby={hintId}
        autoComplete="off"
        spellcheck={false}
        required
        autofocus
      />
      <p id={hintId} class="field-hint">
        Lowercase letters, digits and single hyphens, at most 63 characters. It names the project in the API and cannot
        be changed.
      </p>
    </FormDialog>
  );
}
