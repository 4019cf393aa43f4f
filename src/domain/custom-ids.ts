/**
 * Each provider request carries a custom id that leads back to its cargo: the cargo id itself, or
 * `<cargo id>_<record index>` for a `records` cargo. Both fit `^[a-zA-Z0-9_-]{1,64}$`. Padding
 * requests (fillers up to a provider minimum) start with `pad_` and are discarded.
 */
export function customIdFor(cargoId: string, recordIndex: number | null): string {
  return recordIndex === null ? cargoId : `${cargoId}_${recordIndex}`;
}

export type ParsedCustomId =
  | { kind: 'cargo'; cargoId: string; recordIndex: number | null }
  | { kind: 'padding' }
  | { kind: 'unknown' };

const CARGO = /^(crg_[0-9a-z]{26})(?:_(\d+))?$/;

export function parseCustomId(customId: string): ParsedCustomId {
  if (customId.startsWith('pad_')) return { kind: 'padding' };
  const match = CARGO.exec(customId);
  if (!match?.[1]) return { kind: 'unknown' };
  return { kind: 'cargo', cargoId: match[1], recordIndex: match[2] === undefined ? null : Number(match[2]) };
}

export function paddingId(n: number): string {
  return `pad_${n}`;
}
