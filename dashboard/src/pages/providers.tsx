/** The providers of this deployment: which are enabled (and by what setting), batches in flight, the last error. */
import { api } from '../api.js';
import { Badge, ErrorNotice, Loading, PageHeader, TableCard, Time } from '../components/ui.js';
import { count } from '../format.js';
import { useResource } from '../hooks.js';
import type { Provider } from '../types.js';

const NAMES: Record<Provider['name'], string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  bedrock: 'Amazon Bedrock',
  mock: 'svc-mock',
  'openai-compatible': 'Self-hosted (OpenAI-compatible)',
};

export function ProvidersPage() {
  const providers = useResource(() => api<{ data: Provider[] }>('GET', '/providers').then((r) => r.data), []);
  return (
    <>
      <PageHeader
        title="Providers"
        description="Where this deployment sends batches, and how each is doing. Settings are the service's environment."
      />
      {providers.state === 'failed' && (
        <ErrorNotice error={providers.error} retry={providers.reload} title="The providers could not be loaded." />
      )}
      {providers.state === 'loading' && !providers.data && <Loading what="providers" />}
      {providers.data && (
        <TableCard
          caption={'Providers of this deployment'}
          columns={['Provider', 'Status', 'Enabled by', { label: 'Batches in flight', class: 'numeric' }, 'Last error']}
        >
          {providers.data.map((p) => (
            <tr key={p.name}>
              <th scope="row">{NAMES[p.name]}</th>
              <td>
                <Badge tone={p.enabled ? 'success' : 'neutral'}>{p.enabled ? 'enabled' : 'not enabled'}</Badge>
              </td>
              <td class="mono">
                {p.enabled_by.length === 0 ? <span class="muted">always on</span> : p.enabled_by.join(' + ')}
              </td>
              <td class="numeric">{count(p.batches_in_flight)}</td>
              <td class="wrap">
                {p.last_error === null ? (
                  <span class="muted">none</span>
                ) : (
                  <>
                    <span class="text-danger">{p.last_error.message}</span>
                    <br />
                    <span class="muted">
                      <Time iso={p.last_error.at} seconds /> · batch <span class="mono">{p.last_error.batch_id}</span>
                    </span>
                  </>
                )}
              </td>
            </tr>
          ))}
        </TableCard>
      )}
    </>
  );
}
