/**
 * A read-through memo of answers per (owner, key), one per process (server/process-state.ts), that `forget(owner)` drops
 * at once: the group admins moderation exempts (per group, per channel), the phone a LID is paired with (per LID, per
 * set of channels). An answer read while its owner was forgotten is not kept (it may predate what made it forget).
 */
import { type ProcessSlot, processWide } from "../../process-state";

export class ForgettableCache<V> {
  constructor(
    private readonly slot: ProcessSlot,
    /** Owners remembered at most; past it, all are dropped. */
    private readonly maxOwners: number,
  ) {}

  private get owners() {
    return processWide(this.slot, () => new Map<string, Map<string, { value: V; until: number }>>());
  }

  /** The remembered answer, or `load`'s, kept for `ttlMs(answer)`. */
  async get(owner: string, key: string, load: () => Promise<V>, ttlMs: (value: V) => number): Promise<V> {
    const owners = this.owners;
    let keys = owners.get(owner);
    const known = keys?.get(key);
    if (known && known.until > Date.now()) return known.value;
    if (!keys) {
      if (owners.size >= this.maxOwners) owners.clear();
      keys = new Map();
      owners.set(owner, keys);
    }
    // Kept in the map taken before the read: an owner forgotten meanwhile leaves this (older) answer out.
    const value = await load();
    keys.set(key, { value, until: Date.now() + ttlMs(value) });
    return value;
  }

  forget(owner: string) {
    this.owners.delete(owner);
  }
}
