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
    .option('--json', 'print one JSON object: {data, totals, budgets}, as GET /usage answers')
    .action((slug: string, opts: { from?: string; to?: string; json?: boolean }) =>
      run(opts, async ({ out, ...deps }) => {
        const { config, ...rest } = deps;
        const withDefault = { ...rest, defaultMonthlyBudgetUsd: config.defaultMonthlyBudgetUsd };
        const report = unwrap(await usageReport(withDefault, { slug, from: opts.from, to: opts.to }), {
          from: '--from',
          to: '--to',
        });
        print(out, { data: report.data, totals: report.totals, budgets: report.budgets }, () =>
          usageText(slug, report),
        );
      }),
    );
}

const usd = (value: number | null) => (value === null ? '-' : `$${value.toFixed(6)}`);
/** Token counts with thousands separators: 98765432 is hard to read at a glance. */
const count = (value: number) => value.toLocaleString('en-US');

function usageText(slug: string, report: UsageReport): string {
  const { totals } = report;
  const counts = (r: Omit<UsageReport['totals'], 'savings_usd'>) => [
    count(r.cargo),
    count(r.requests),
    count(r.input_tokens),
    count(r.output_tokens),
    count(r.cache_creation_input_tokens),
    count(r.cache_read_input_tokens),
    usd(r.cost_usd),
    usd(r.standard_cost_usd),
  ];
  return [
    `Usage of ${slug}, ${report.from} to ${report.to} (UTC)`,
    '',
    // Short headings: with the cache columns, the long ones made the table wider than a terminal.
    table(
      ['DATE', 'MODEL', 'CARGO', 'REQUESTS', 'IN', 'OUT', 'CACHE W', 'CACHE R', 'COST', 'STANDARD'],
      [
        ...report.data.map((r) => [r.date, r.model, ...counts(r)]),
        ...(report.data.length > 0 ? [['total', '', ...counts(totals)]] : []),
      ],
    ),
    '',
    `IN, OUT: input and output tokens; CACHE W, CACHE R: tokens written to and read from the prompt cache.`,
    `Saved by batching: ${usd(totals.savings_usd)}`,
    ...budgetLines(report),
  ].join('\n');
}

/** The project's budgets now: one line each, or that it has none. */
function budgetLines(report: UsageReport): string[] {
  if (report.budgets.length === 0) return ['Spend budget: none'];
  return report.budgets.map(
    (b) =>
      `Budget this ${b.period} (UTC, from ${b.starts.slice(0, 10)}): ${usd(b.spent_usd)} spent + ${usd(b.reserved_usd)} reserved of $${b.budget_usd}`,
  );
}
