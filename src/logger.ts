/** The service's logger: JSON lines for machines, or pino-pretty's lines for a person at a terminal. */
import { createRequire } from 'node:module';
import { type Logger, pino } from 'pino';

// pino-pretty is loaded only for a terminal: a service under a supervisor never needs it.
const require = createRequire(import.meta.url);

export interface LoggerOptions {
  level: string;
  /** 1 (stdout) or 2 (stderr). */
  fd: 1 | 2;
  /** Lines for a person: time, level, message, then the fields; coloured only where colour is supported. */
  pretty: boolean;
}

export function createLogger(options: LoggerOptions): Logger {
  const settings = {
    level: options.level,
    redact: {
      paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie'],
      censor: '[redacted]',
    },
  };
  if (!options.pretty) return pino(settings, pino.destination(options.fd));
  // In the process, not as a worker-thread transport: a log line is written before the process
  // exits, and the stream's colour follows the terminal (NO_COLOR and pipes turn it off).
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pino(
    settings,
    pretty({
      destination: options.fd,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      // One line an event: a request's two entries would otherwise take some twenty lines.
      singleLine: true,
    }),
  );
}
