/**
 * The shapes the client sends and receives, derived from the schemas the routes validate and
 * answer with (type-only imports: nothing of the server is loaded at run time), so they cannot drift.
 */
import type { Static } from 'typebox';
import type { ResultEnvelope } from '../http/routes/get-cargo-result.js';
import type { UsageQuery as UsageQuerySchema, UsageResponse } from '../http/routes/get-usage.js';
import type { ListQuery, ListResponse } from '../http/routes/list-cargo.js';
import type { ModelsResponse } from '../http/routes/list-models.js';
import type { LoadCargoBody, LoadCargoResponse } from '../http/routes/load-cargo.js';
import type { TrackingResponse } from '../http/routes/track-cargo.js';

type LoadBody = Static<typeof LoadCargoBody>;
/** A `POST /cargo/load` body; the fields the server defaults are optional. */
export type LoadRequest = Omit<LoadBody, 'result_ttl_seconds'> & Partial<Pick<LoadBody, 'result_ttl_seconds'>>;
export type Loaded = Static<typeof LoadCargoResponse>;
export type Tracking = Static<typeof TrackingResponse>;
export type CargoStatus = Tracking['status'];
export type CargoResult = Static<typeof ResultEnvelope>;
export type UsageQuery = Static<typeof UsageQuerySchema>;
export type Usage = Static<typeof UsageResponse>;
export type Models = Static<typeof ModelsResponse>;
/** GET /cargo's filters; `limit` is the page size (the iterator goes over every page). */
export type ListFilters = Omit<Static<typeof ListQuery>, 'limit' | 'after'> & { limit?: number };
export type CargoPage = Static<typeof ListResponse>;
