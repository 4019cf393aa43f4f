/** A local SMTP server that keeps every message it accepts, for the tests of incident mail. */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  from: string;
  to: string[];
  /** Header values by lower-case name (first occurrence). */
  headers: Record<string, string>;
  /** The message body, unfolded from quoted-printable soft breaks. */
  text: string;
  raw: string;
}

/** A local SMTP server (smtp-server) that accepts and keeps every message. */
export async function startSmtpCapture() {
  const messages: CapturedMail[] = [];
  let hanging = false;
  const server = new SMTPServer({
    // While hanging, a client is accepted and never greeted: a send stays in flight.
    onConnect(_session, callback) {
      if (!hanging) callback();
    },
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const split = raw.indexOf('\r\n\r\n');
        const head = raw.slice(0, split).replace(/\r\n[ \t]+/g, ' ');
        const headers: Record<string, string> = {};
        for (const line of head.split('\r\n')) {
          const colon = line.indexOf(':');
          const name = line.slice(0, colon).toLowerCase();
          if (colon > 0 && !(name in headers)) headers[name] = line.slice(colon + 1).trim();
        }
        let text = raw.slice(split + 4);
        if (/quoted-printable/i.test(headers['content-transfer-encoding'] ?? '')) {
          text = text
            .replace(/=\r\n/g, '')
            .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
        }
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          headers,
          text: text.replace(/\r\n/g, '\n'),
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    /** Accept connections and never answer (true), or serve normally again (false). */
    hang(on: boolean) {
      hanging = on;
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type SmtpCapture = Awaited<ReturnType<typeof startSmtpCapture>>;
