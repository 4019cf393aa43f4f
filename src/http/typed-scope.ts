/**
 * The scope routes are registered in: request bodies and params typed from their TypeBox schemas.
 * Only the types come from @fastify/type-provider-typebox; validation stays Fastify's Ajv, whose
 * errors (and options) the 400 `errors` list is built from. The cargo scope and the admin scope
 * are both of this type.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

export type TypedScope = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
