/**
 * The gateway's own time of an event, on our clock (docs/launches.md#the-order-of-joins-and-leaves).
 *
 * Evolution stamps every webhook body with `date_time`, taken when it emits the event (channel.service.ts
 * `sendDataWebhook`, ~436: local wall-clock time written as if it were UTC, so off by the gateway's time zone),
 * and sends a webhook our side answered 5xx again with the same body, so the same `date_time`
 * (webhook.controller.ts `retryWebhookRequest`). Baileys' `group-participants.update` carries no time of its own
 * (Baileys src/Types/Events.ts: `{id, author, authorPn?, participants, action}`; process-message.ts emits it from
 * the group's stub message without its `messageTimestamp`), and Evolution adds none: `date_time` is the
 * platform-side time there is.
 *
 * Its offset from our clock is the time zone plus the way here; a first delivery takes milliseconds, a resend
 * minutes (Evolution retries for about 25 minutes). So the offset is the smallest seen over the last hour or two
 * (two one-hour windows: a change of the gateway's zone is taken within two hours), and an event's time is its
 * `date_time` plus that offset, never later than it arrived and never more than a day before.
 */

/** How long one window of offsets lasts: the estimate is the smallest of this window and the one before. */
export const offsetWindowMs = 60 * 60_000;
/** An event is never placed further back than this (event ids are remembered a day: record-participants.ts). */
const maxAgeMs = 86_400_000;

export class GatewayClock {
  private current: { from: number; min: number } | null = null;
  private previous: number | null = null;

  /** Reads a body's `date_time` (any event: each one teaches the offset); null when it has none. */
  observe(dateTime: unknown, received: Date): number | null {
    const stamped = typeof dateTime === "string" ? Date.parse(dateTime) : Number.NaN;
    if (!Number.isFinite(stamped)) return null;
    const offset = received.getTime() - stamped;
    const now = received.getTime();
    if (!this.current || now - this.current.from >= offsetWindowMs) {
      this.previous = this.current && now - this.current.from < 2 * offsetWindowMs ? this.current.min : null;
      this.current = { from: now, min: offset };
    } else if (offset < this.current.min) this.current.min = offset;
    return stamped;
  }

  /** When the gateway emitted the event, on our clock (`received` when the body has no `date_time`). */
  timeOf(dateTime: unknown, received: Date): Date {
    const stamped = this.observe(dateTime, received);
    if (stamped === null || !this.current) return received;
    const offset = Math.min(this.current.min, this.previous ?? Number.POSITIVE_INFINITY);
    const at = Math.max(Math.min(stamped + offset, received.getTime()), received.getTime() - maxAgeMs);
    return new Date(at);
  }
}
