/**
 * A read-through memo of answers per (owner, key), one per process (server/process-state.ts), that `forget(owner)` drops
 * at once: the group admins moderation exempts (per group, per channel), the phone a LID is paired with (per LID, per
 * set of channels). An answer read while its owner was forgotten is not kept (it may predate what made it forget).
 * Concurrent misses of one key share one read (a burst of messages in a group asks the gateway for its admins once);
 * a failed read is not kept.
 */
import { type ProcessSlot, processWide } from "../../process-state";

type Entry<V> = { value: V; until: number } | { reading: Promise<V> };

export class ForgettableCache<V> {
  constructor(
    private readonly slot: ProcessSlot,
    /** Owners remembered at most; past it, all are dropped. */
    private readonly maxOwners: number,
  ) {}

  private get owners() {
    return processWide(this.slot, () => new Map<string, Map<string, Entry<V>>>());
  }

  /** The remembered answer, the read under way, or `load`'s, kept for `ttlMs(answer)`. */
  get(owner: string, key: string, load: () => Promise<V>, ttlMs: (value: V) => number): Promise<V> {
    const owners = this.owners;
    let keys = owners.get(owner);
    const known = keys?.get(key);
    if (known && "reading" in known) return known.reading;
    if (known && known.until > Date.now()) return Promise.resolve(known.value);
    if (!keys) {
      if (owners.size >= this.maxOwners) owners.clear();
      keys = new Map();
      owners.set(owner, keys);
    }
    // Kept in the map taken before the read: an owner forgotten meanwhile leaves this (older) answer out, and a caller
    // after the forget reads again rather than joining this read.
    const entries = keys;
    const reading = load();
    entries.set(key, { reading });
    reading.then(
      (value) => {
        if (isReading(entries.get(key), reading)) entries.set(key, { value, until: Date.now() + ttlMs(value) });
      },
      () => {
        if (isReading(entries.get(key), reading)) entries.delete(key);
      },
    );
    return reading;
  }

  forget(owner: string) {
    this.owners.delete(owner);
  }
}

const isReading = <V>(entry: Entry<V> | undefined, reading: Promise<V>) => entry !== undefined && "reading" in entry && entry.reading === reading;
