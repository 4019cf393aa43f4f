/**
 * The admin API's shapes, as the dashboard sees them: the TypeBox schemas the routes validate and
 * answer with (src/http/admin/), imported for their types only, so the bundle holds none of the
 * server's code and a change of shape is a type error here.
 */
import type { Static } from 'typebox';
import type {
  CargoDetailJson,
  CargoPageJson,
  CargoSummaryJson,
  RedeliveryJson,
} from '../../src/http/admin/cargo-schemas.js';
import type { CheckReportJson, ConnectionDetailJson, ConnectionJson } from '../../src/http/admin/connection-schemas.js';
import type { DryRunJson, RecoveryJson } from '../../src/http/admin/recovery-schemas.js';
import type { AdminUsageJson, ProviderJson } from '../../src/http/admin/report-schemas.js';
import type { SessionJson } from '../../src/http/admin/routes/session.js';
import type { ApiKeyBody, ProjectBody } from '../../src/http/admin/schemas.js';

export type Project = Static<typeof ProjectBody>;
export type CreatedProject = Project & { webhook_secret: string };
export type ApiKey = Static<typeof ApiKeyBody>;
export type CreatedApiKey = ApiKey & { key: string };
export type RotatedSecret = { project: Project; webhook_secret: string; previous_secret_valid_until: string };
export type Session = SessionJson;
export type Connection = ConnectionJson;
export type ConnectionDetail = ConnectionDetailJson;
export type CheckReport = CheckReportJson;
export type CargoSummary = CargoSummaryJson;
export type CargoPage = CargoPageJson;
export type CargoDetail = CargoDetailJson;
export type Redelivery = RedeliveryJson;
export type DryRun = DryRunJson;
export type Recovery = RecoveryJson;
export type Usage = AdminUsageJson;
export type UsageRow = Usage['data'][number];
export type Provider = ProviderJson;
export type CargoStatus = CargoSummary['status'];
