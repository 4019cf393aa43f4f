/** A test STS endpoint for AssumeRole: it checks external ids and session policies, can deny a role, records calls. */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { registerKeyPair } from './s3-server.js';

export interface AssumeRoleCall {
  roleArn: string;
  externalId: string | undefined;
  sessionName: string;
  durationSeconds: number;
  /** The session policy as sent (JSON text). */
  policy: string | undefined;
  /** The access key id the caller signed with (the service's own identity). */
  callerKeyId: string | null;
  /** What the endpoint answered. */
  answer: 'credentials' | 'denied' | 'malformed_policy';
  /** The credentials handed out, when any. */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken: string };
}

const XMLNS = 'https://sts.amazonaws.com/doc/2011-06-15/';

/**
 * A small STS endpoint speaking the AssumeRole query API (form-encoded POST, XML answers), for the
 * AWS SDK's own STS client. It knows roles and their external ids, refuses a wrong external id or
 * a session policy that grants more than PutObject under a prefix (plus KMS through S3), and can
 * be told to deny a role. Each key pair it hands out is registered with the S3 server.
 */
export async function startStsEndpoint() {
  const roles = new Map<string, string>();
  const denied = new Set<string>();
  const calls: AssumeRoleCall[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      const requestId = randomBytes(8).toString('hex');
      const sendError = (status: number, code: string, message: string) => {
        res
          .writeHead(status, { 'content-type': 'text/xml' })
          .end(
            `<ErrorResponse xmlns="${XMLNS}"><Error><Type>Sender</Type><Code>${code}</Code>` +
              `<Message>${escapeXml(message)}</Message></Error><RequestId>${requestId}</RequestId></ErrorResponse>`,
          );
      };
      if (req.method !== 'POST' || form.get('Action') !== 'AssumeRole' || form.get('Version') !== '2011-06-15') {
        return sendError(400, 'InvalidAction', `unsupported request ${req.method} ${form.get('Action')}`);
      }
      const call: AssumeRoleCall = {
        roleArn: form.get('RoleArn') ?? '',
        externalId: form.get('ExternalId') ?? undefined,
        sessionName: form.get('RoleSessionName') ?? '',
        durationSeconds: Number(form.get('DurationSeconds') ?? 3600),
        policy: form.get('Policy') ?? undefined,
        callerKeyId: /Credential=([^/]+)\//.exec(req.headers.authorization ?? '')?.[1] ?? null,
        answer: 'denied',
      };
      calls.push(call);
      const expectedExternalId = roles.get(call.roleArn);
      const caller = 'arn:aws:iam::111122223333:user/barge';
      if (expectedExternalId === undefined || denied.has(call.roleArn) || call.externalId !== expectedExternalId) {
        return sendError(
          403,
          'AccessDenied',
          `User: ${caller} is not authorized to perform: sts:AssumeRole on resource: ${call.roleArn}`,
        );
      }
      const policyProblem = checkSessionPolicy(call.policy);
      if (policyProblem) {
        call.answer = 'malformed_policy';
        return sendError(400, 'MalformedPolicyDocument', policyProblem);
      }
      const credentials = {
        accessKeyId: `ASIA${randomBytes(8).toString('hex').toUpperCase()}`,
        secretAccessKey: randomBytes(20).toString('base64'),
        sessionToken: randomBytes(48).toString('base64'),
      };
      registerKeyPair(credentials.accessKeyId, credentials.secretAccessKey, credentials.sessionToken);
      call.answer = 'credentials';
      call.credentials = credentials;
      const expiration = new Date(Date.now() + call.durationSeconds * 1000).toISOString();
      res
        .writeHead(200, { 'content-type': 'text/xml' })
        .end(
          `<AssumeRoleResponse xmlns="${XMLNS}"><AssumeRoleResult>` +
            `<AssumedRoleUser><AssumedRoleId>AROA3XFRBF535PLBIFPI4:${escapeXml(call.sessionName)}</AssumedRoleId>` +
            `<Arn>${escapeXml(call.roleArn.replace(':iam::', ':sts::').replace(':role/', ':assumed-role/'))}/${escapeXml(call.sessionName)}</Arn></AssumedRoleUser>` +
            `<Credentials><AccessKeyId>${credentials.accessKeyId}</AccessKeyId>` +
            `<SecretAccessKey>${credentials.secretAccessKey}</SecretAccessKey>` +
            `<SessionToken>${credentials.sessionToken}</SessionToken>` +
            `<Expiration>${expiration}</Expiration></Credentials>` +
            `<PackedPolicySize>7</PackedPolicySize></AssumeRoleResult>` +
            `<ResponseMetadata><RequestId>${requestId}</RequestId></ResponseMetadata></AssumeRoleResponse>`,
        );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    /** A role whose trust policy names this external id. */
    addRole(roleArn: string, externalId: string) {
      roles.set(roleArn, externalId);
    },
    deny(roleArn: string, on = true) {
      if (on) denied.add(roleArn);
      else denied.delete(roleArn);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export type StsEndpoint = Awaited<ReturnType<typeof startStsEndpoint>>;

/** The one action a message target's session may be given, and the ARN form it applies to. */
const SEND_ACTIONS: Record<string, RegExp> = {
  'sqs:SendMessage': /^arn:aws:sqs:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]+$/,
  'sns:Publish': /^arn:aws:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_.-]+$/,
  'events:PutEvents': /^arn:aws:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._/-]+$/,
};

/**
 * What a delivery session may be given: s3:PutObject on `arn:aws:s3:::<bucket>/<prefix>*`, or the
 * one send action of a message target on one queue, topic or bus; and KMS only through the same
 * service. Anything else is refused as the service asking for more than it should.
 */
function checkSessionPolicy(policy: string | undefined): string | null {
  if (!policy) return 'a delivery session must carry a session policy';
  let doc: { Version?: string; Statement?: Record<string, unknown>[] };
  try {
    doc = JSON.parse(policy);
  } catch {
    return 'the session policy is not JSON';
  }
  if (doc.Version !== '2012-10-17' || !Array.isArray(doc.Statement)) return 'the session policy has no statements';
  const services = new Set<string>();
  for (const st of doc.Statement) {
    if (st.Effect !== 'Allow') return 'unexpected statement effect';
    const action = st.Action;
    if (action === 's3:PutObject') {
      if (typeof st.Resource !== 'string' || !/^arn:aws:s3:::[a-z0-9.-]+\/[^*?]*\*$/.test(st.Resource)) {
        return `s3:PutObject on an unexpected resource ${JSON.stringify(st.Resource)}`;
      }
      services.add('s3');
    } else if (typeof action === 'string' && SEND_ACTIONS[action]) {
      if (typeof st.Resource !== 'string' || !SEND_ACTIONS[action].test(st.Resource)) {
        return `${action} on an unexpected resource ${JSON.stringify(st.Resource)}`;
      }
      services.add(action.split(':')[0] as string);
    } else if (action === 'kms:GenerateDataKey' || JSON.stringify(action) === '["kms:GenerateDataKey","kms:Decrypt"]') {
      const via = (st.Condition as { StringLike?: Record<string, string> } | undefined)?.StringLike?.['kms:ViaService'];
      const service = /^([a-z0-9]+)\.\*\.amazonaws\.com$/.exec(via ?? '')?.[1];
      if (!service) return 'KMS must be limited to use through the target service';
      services.add(`kms-via-${service}`);
    } else {
      return `the session policy grants ${JSON.stringify(action)}`;
    }
  }
  for (const service of services) {
    if (service.startsWith('kms-via-') && !services.has(service.slice('kms-via-'.length))) {
      return `KMS is granted through ${service.slice('kms-via-'.length)}, which the session may not use`;
    }
  }
  return null;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
