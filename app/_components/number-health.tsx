"use client";

import type { ChannelObject } from "../../server/channels/schema";
import { formatTime, healthStateAdvice, healthStateLabel } from "../_lib/format";

type Health = ChannelObject["health"];

/** A number's health state as a badge (docs/numbers.md#health-states); its title says what it means and what to do. */
export function HealthBadge({ health }: { health: Pick<Health, "state" | "until" | "reason"> }) {
  const until = health.until && (health.state === "cooling" || health.state === "capped") ? ` até ${formatTime(health.until)}` : "";
  const hint = [healthStateAdvice[health.state], health.reason ? `Motivo: ${health.reason}.` : ""].filter(Boolean).join(" ");
  return (
    <span className={`badge badge-health-${health.state}`} title={hint} data-health={health.state}>
      {healthStateLabel[health.state] ?? health.state}
      {until && <span className="badge-detail">{until}</span>}
    </span>
  );
}

/** Today's use of one budget: `used` of `cap` (no cap: the count alone), as a meter with its numbers beside it. */
export function UsageMeter({ label, used, cap }: { label: string; used: number; cap: number | null }) {
  const text = cap === null ? `${used} (sem limite)` : `${used} / ${cap}`;
  return (
    <div className="usage">
      <span className="usage-label">{label}</span>
      <meter
        className="usage-bar"
        aria-label={`${label} hoje`}
        min={0}
        max={cap ?? Math.max(used, 1)}
        value={cap === null ? 0 : Math.min(used, cap)}
        high={cap === null ? undefined : Math.max(cap - 0.5, 0)}
        aria-valuetext={cap === null ? `${used} hoje, sem limite` : `${used} de ${cap} hoje`}
      />
      <span className="usage-text">{text}</span>
    </div>
  );
}
