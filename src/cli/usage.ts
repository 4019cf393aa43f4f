/** `barge usage <slug>`: a project's tokens and cost by UTC day and model; a thin adapter over src/operations/usage.ts. */
import type { Command } from 'commander';
import { type UsageReport, usageReport } from '../operations/usage.js';
import type { CommandContext } from './context.js';
import { print, table, unwrap } from './output.js';

export function registerUsageCommand(program: Command, run: CommandContext['run']): void {
  program
    .command('usage <slug>')
    .description("A project's tokens and cost by UTC day and model (the same report as GET /usage)")
    .option('--from <day>', 'first UTC day, YYYY-MM-DD (default: 29 days before --to)')
    .option('--to <day>', 'last UTC day, YYYY-MM-DD (default: today)')
    .option('--json', 'print one JSON object: {data, totals}, as GET /usage answers')
    .action((slug: string, opts: { from?: string; to?: string; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const report = unwrap(await usageReport(deps, { slug, from: opts.from, to: opts.to }), {
          from: '--from',
          to: '--to',
        });
        print(out, { data: report.data, totals: report.totals }, () => usageText(slug, report));
      }),
    );
}

const usd = (value: number | null) => (value === null ? '-' : `$${value.toFixed(6)}`);

function usageText(slug: string, report: UsageReport): string {
  const { totals } = report;
  const counts = (r: Omit<UsageReport['totals'], 'savings_usd'>) => [
    String(r.cargo),
    String(r.requests),
    String(r.input_tokens),
    String(r.output_tokens),
    String(r.cache_creation_input_tokens),
    String(r.cache_read_input_tokens),
    usd(r.cost_usd),
    usd(r.standard_cost_usd),
  ];
  return [
    `Usage of ${slug}, ${report.from} to ${report.to} (UTC)`,
    '',
    table(
      [
        'DATE',
        'MODEL',
        'CARGO',
        'REQUESTS',
        'INPUT TOKENS',
        'OUTPUT TOKENS',
        'CACHE WRITES',
        'CACHE READS',
        'COST',
        'STANDARD COST',
      ],
      [
        ...report.data.map((r) => [r.date, r.model, ...counts(r)]),
        ...(report.data.length > 0 ? [['total', '', ...counts(totals)]] : []),
      ],
    ),
    '',
    `Saved by batching: ${usd(totals.savings_usd)}`,
  ].join('\n');
}
