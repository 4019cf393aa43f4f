/** `barge provider check <name>`: a read-only check of a provider's credentials; an adapter over src/operations/. */
import type { Command } from 'commander';
import { checkProvider, type ProviderCheckReport } from '../operations/check-provider.js';
import type { ConfigCommandContext } from './context.js';
import { print, unwrap } from './output.js';

export function registerProviderCommands(program: Command, run: ConfigCommandContext['run']): void {
  const provider = program.command('provider').description("Check this deployment's batch providers");

  provider
    .command('check <name>')
    .description(
      'Read-only check that the credentials of a provider work (anthropic, openai, bedrock, mock/svc-mock, or openai-compatible: each endpoint reachable, its models listed, the latency): each capability barge needs, tried with a list of one; no database is opened',
    )
    .option('--json', 'print one JSON object')
    .action((name: string, opts: { json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const report = unwrap(await checkProvider(deps, { name }));
        print(out, report, () => checkText(report));
        if (!report.ok) process.exitCode = 1;
      }),
    );
}

/** As `connection check` prints: a verdict, then one line per capability. */
function checkText(report: ProviderCheckReport): string {
  const width = Math.max(16, ...report.capabilities.map((c) => c.name.length));
  return [
    `Provider check of ${report.provider}: ${report.ok ? 'passed' : 'FAILED'}`,
    ...report.capabilities.map((c) => `  ${c.name.padEnd(width)} ${(c.ok ? 'ok' : 'failed').padEnd(9)} ${c.detail}`),
  ].join('\n');
}
