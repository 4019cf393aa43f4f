/** Schemas shared by several routes; each route keeps its own beside it. */
import { Type } from 'typebox';

export const ErrorBody = Type.Object(
  {
    detail: Type.Unknown({ description: 'A text, or an object with error and message.' }),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description:
          'Every invalid field of a 400 about the body or the query, with the rule it breaks; the path "" is the body as a whole.',
      }),
    ),
    request_id: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

const errorExample = (detail: unknown) => ({ ...ErrorBody, examples: [{ detail }] });

export const authErrorResponses = {
  401: {
    ...errorExample('Invalid API key.'),
    description: 'Missing, malformed, unknown, deactivated or expired API key.',
  },
  403: { ...errorExample('Project is inactive.'), description: 'The project is deactivated.' },
  429: {
    ...errorExample('Rate limit exceeded'),
    description:
      'Per-project rate limit exceeded, or too many failed authentications from this address. Retry-After says when to try again; RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset describe the window.',
  },
  500: { ...errorExample('Internal server error'), description: 'A bug; the body carries a request_id.' },
};

export const notFoundResponse = {
  404: { ...errorExample('Cargo not found'), description: 'No such cargo in this project.' },
};

export const CargoIdParams = Type.Object({
  cargo_id: Type.String({
    description: 'The id returned by POST /cargo/load.',
    examples: ['crg_01jd5q3k8m9x2v4w6y8z0a1b2c'],
  }),
});

export const apiKeySecurity = [{ apiKey: [] }];
