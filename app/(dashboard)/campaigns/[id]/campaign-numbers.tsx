"use client";

import { useQuery } from "@tanstack/react-query";
import Link from "next/link";
import { HealthBadge } from "../../../_components/number-health";
import { ErrorAlert, Loading, ProgressBar, StatusBadge } from "../../../_components/ui";
import { channelStatusLabel, formatTime, healthStateLabel } from "../../../_lib/format";
import { useTRPC, type RouterOutputs } from "../../../_lib/trpc";

type Share = RouterOutputs["campaigns"]["info"]["channels"][number];
type Channel = RouterOutputs["channels"]["listAll"]["channels"][number];

/**
 * Why a number cannot send now (CONTRACT §7 "Failover"), in the channels page's words; null when it can. A
 * cooling or capped number sends again once its `until` has passed, as the dispatch claim reads it.
 */
function skipReason(channel: Pick<Channel, "status" | "health">, now: number): string | null {
  const { state, until } = channel.health;
  const label = (healthStateLabel[state] ?? state).toLowerCase();
  if (state === "banned" || state === "logged_out" || state === "restricted") return label;
  if (channel.status !== "connected") return (channelStatusLabel[channel.status] ?? channel.status).toLowerCase();
  if ((state === "cooling" || state === "capped") && until && new Date(until).getTime() > now) return `${label} até ${formatTime(until)}`;
  return null;
}

/**
 * The campaign's groups per number (info-campaign `channels`): each number's share with its health, and, while the
 * campaign runs, which numbers are skipped and why (docs/numbers.md#the-campaign-page).
 */
export function CampaignNumbers({
  shares,
  total,
  active,
  stalled,
  poll,
}: {
  shares: Share[];
  total: number;
  active: boolean;
  /** Paused because no number that is in its remaining groups can send (channel_offline, channel_limits). */
  stalled: boolean;
  poll: number;
}) {
  const trpc = useTRPC();
  const channels = useQuery(trpc.channels.listAll.queryOptions(undefined, { refetchInterval: active ? poll : false, select: (d) => d.channels }));
  if (channels.isPending) return <Loading label="Carregando números…" />;
  if (channels.error) return <ErrorAlert error={channels.error} />;
  const byId = new Map(channels.data.map((ch) => [ch.id_channel, ch]));
  const now = Date.now();
  const skipped = new Map(
    shares.map((s) => {
      const channel = byId.get(s.id_channel);
      return [s.id_channel, channel ? skipReason(channel, now) : null];
    }),
  );
  return (
    <ul className="number-list" aria-label="Grupos por número">
      {shares.map((share) => {
        const reason = skipped.get(share.id_channel);
        // Failover moves pending groups only to numbers that can send and are in the group; a stalled campaign has none.
        const othersSend = !stalled && shares.some((s) => s.id_channel !== share.id_channel && byId.has(s.id_channel) && skipped.get(s.id_channel) === null);
        const pendingGo = othersSend ? "os grupos pendentes vão pelos outros números" : "os grupos pendentes esperam um número que possa enviar";
        return (
          <NumberRow
            key={share.id_channel}
            share={share}
            total={total}
            channel={byId.get(share.id_channel)}
            skipped={active && reason ? `Pulado: ${reason} — ${pendingGo}` : null}
          />
        );
      })}
    </ul>
  );
}

function NumberRow({ share, total, channel, skipped }: { share: Share; total: number; channel?: Channel; skipped: string | null }) {
  const name = channel?.name ?? share.id_channel;
  const groups = share.sent + share.pending + share.failed;
  const percent = total > 0 ? Math.round((groups / total) * 100) : 0;
  return (
    <li className="number-row" data-channel={share.id_channel} aria-label={`Número ${name}`}>
      <div className="number-head">
        <span className="number-name">
          {channel ? (
            <Link href={`/channels/${channel.id_channel}`} className="strong-link">
              {name}
            </Link>
          ) : (
            name
          )}
          {channel?.phone && <span className="muted nowrap"> +{channel.phone}</span>}
        </span>
        <span className="number-badges">
          {channel && <HealthBadge health={channel.health} />}
          {channel && channel.status !== "connected" && <StatusBadge status={channel.status} />}
        </span>
      </div>
      <div className="number-share">
        <ProgressBar total={total} sent={share.sent} failed={share.failed} pending={share.pending} label={`Grupos do número ${name}`} />
        <span className="small number-counts">
          <strong>{groups}</strong> de {total} grupos ({percent}%) · enviados {share.sent} · pendentes {share.pending} · falhas {share.failed}
        </span>
      </div>
      {skipped && (
        <p className="number-skipped small" role="status">
          {skipped}
        </p>
      )}
    </li>
  );
}
