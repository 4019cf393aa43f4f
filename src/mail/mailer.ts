/** Outgoing mail: the Mailer interface, and its SMTP implementation. */
import type { Transporter } from 'nodemailer';

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** Sends mail; resolves when the server accepted it. Expected failures come back as values. */
export interface Mailer {
  send(message: MailMessage): Promise<{ sent: true } | { sent: false; reason: string }>;
  close(): void;
}

/**
 * SMTP through nodemailer to BARGE_SMTP_URL. Without a URL nothing is sent and the caller is told
 * so. The URL (it may carry a password) is never logged or put in a reason.
 */
export function smtpMailer(options: { url: string | null; from: string }): Mailer {
  const url = options.url;
  let transport: Transporter | null = null;
  return {
    async send(message) {
      if (url === null) return { sent: false, reason: 'no SMTP server is configured (BARGE_SMTP_URL)' };
      // Loaded at the first send: most processes never send mail, and every start would load it.
      const { createTransport } = await import('nodemailer');
      // Bounded, so a send is over well within the outbox lease (BARGE_LEASE_MS, 60 s by default).
      transport ??= createTransport(
        { url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 } as Parameters<
          typeof createTransport
        >[0],
        { from: options.from },
      );
      try {
        await transport.sendMail({ from: options.from, ...message });
        return { sent: true };
      } catch (err) {
        const e = err as { code?: string; responseCode?: number; message?: string };
        const reason = e.responseCode ? `SMTP ${e.responseCode}` : (e.code ?? 'error');
        return { sent: false, reason: `${reason}: ${(e.message ?? '').replaceAll(url, '[smtp url]')}` };
      }
    },
    close() {
      transport?.close();
    },
  };
}
