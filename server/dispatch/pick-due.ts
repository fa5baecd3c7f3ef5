/** A due campaign as the in-process runner's agenda holds it. */
export interface DueCampaign {
  id: string;
  tenantId: string;
}

/**
 * Which due campaigns free workers take now (docs/dispatch.md#fairness-between-tenants), a pure function beside
 * planNext: `due` in the order they fell due (longest-waiting first), `busy` the workers each tenant holds already.
 * Each pick goes to the tenant that holds fewest (the longest-waiting of its campaigns; ties: the earlier in
 * `due`), and no tenant holds more than `perTenant`: a tenant at zero pacing with many campaigns cannot take the
 * pool from another tenant's paced campaign.
 */
export function pickDue<T extends DueCampaign>(due: readonly T[], busy: ReadonlyMap<string, number>, free: number, perTenant: number): T[] {
  const held = new Map(busy);
  const picked: T[] = [];
  for (let i = 0; i < free; i++) {
    const candidates = due.filter((d) => !picked.includes(d) && (held.get(d.tenantId) ?? 0) < perTenant);
    if (candidates.length === 0) break;
    const next = candidates.reduce((best, d) => ((held.get(d.tenantId) ?? 0) < (held.get(best.tenantId) ?? 0) ? d : best));
    picked.push(next);
    held.set(next.tenantId, (held.get(next.tenantId) ?? 0) + 1);
  }
  return picked;
}
