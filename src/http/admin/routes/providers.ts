/** The admin API's providers: each one, enabled or not and by what, its batches in flight and its last error. */
import type { Config } from '../../../config.js';
import { isoTime } from '../../../domain/clock.js';
import { errors } from '../../../domain/errors.js';
import { providerStatus } from '../../../operations/provider-status.js';
import type { Database } from '../../../store/database.js';
import type { TypedScope } from '../../typed-scope.js';
import { adminOf } from '../auth.js';
import { ProviderListBody } from '../report-schemas.js';
import { adminAuthErrorResponses, adminTokenSecurity, errorExample } from '../schemas.js';

export interface ProviderRoutesDeps {
  database: Database;
  config: Pick<Config, 'providers' | 'models'>;
}

export function registerProviderRoutes(scope: TypedScope, deps: ProviderRoutesDeps): void {
  scope.get(
    '/providers',
    {
      schema: {
        summary: 'List the providers',
        description:
          "Each provider barge knows: whether this deployment has it enabled and the settings that enable it, its batches not yet ended, and the newest error one of them holds (a batch's error is cleared once a later try succeeds). Read from the configuration and the batches; no provider is called (`barge provider check` does). The batches are every project's: an all-projects token is needed.",
        tags: ['admin: providers'],
        security: adminTokenSecurity,
        response: {
          200: ProviderListBody,
          403: errorExample(
            'This admin token is limited to one project; this needs an all-projects token.',
            'The token is limited to one project.',
          ),
          ...adminAuthErrorResponses,
        },
      },
    },
    async (request) => {
      if (adminOf(request).project !== null) throw errors.allProjectsTokenRequired('this');
      const providers = await providerStatus(deps);
      return {
        data: providers.map((p) => ({
          name: p.name,
          enabled: p.enabled,
          enabled_by: [...p.enabledBy],
          batches_in_flight: p.batchesInFlight,
          last_error: p.lastError && {
            message: p.lastError.message,
            at: isoTime(p.lastError.at),
            batch_id: p.lastError.batchId,
          },
        })),
      };
    },
  );
}
